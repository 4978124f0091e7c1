#!/usr/bin/env bash
# Side by side on the real stack: the loop a user would write to find the
# drifting applications (argocd app list, then argocd app diff per
# application) against driftfix scan, over SIDE_BY_SIDE_APPS (default 120)
# auto-synced applications of which a quarter are changed by hand; three
# rounds, both times and the ratio printed, both must name the same
# applications. It does not build the stack: run build.sh first. A stack that
# is already up in DRIFTFIX_NETNS (default driftfix-e2e) is used and left up;
# otherwise this script starts one and stops only that one.
set -euo pipefail
cd "$(dirname "$0")"
K=$(pwd)
NETNS=${DRIFTFIX_NETNS:-driftfix-e2e}
started=
if ! { [ -s "$K/run/argocd-token" ] && ip netns list | awk '{print $1}' | grep -qxF "$NETNS" &&
  ip netns exec "$NETNS" curl -sf http://127.0.0.1:8080/healthz >/dev/null 2>&1; }; then
  DRIFTFIX_NETNS=$NETNS "$K/up.sh"
  started=1
  trap 'DRIFTFIX_NETNS=$NETNS "$K/down.sh"' EXIT
fi
cd ../..
ip netns exec "$NETNS" env DRIFTFIX_SIDE_BY_SIDE=1 SIDE_BY_SIDE_APPS="${SIDE_BY_SIDE_APPS:-120}" \
	go test -tags e2e -count=1 -timeout 40m -run '^TestSideBySide$' -v ./e2e/ | grep -E '^(side by side|--- |ok|FAIL|\s+sidebyside_test)'
[ -z "$started" ] || echo "sidebyside.sh: stopping the stack it started"
