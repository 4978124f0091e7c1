#!/usr/bin/env bash
# Side by side on the real stack: the loop a user would write to find the
# drifting applications (argocd app list, then argocd app diff per
# application) against driftfix scan, over SIDE_BY_SIDE_APPS (default 120)
# auto-synced applications of which a quarter are changed by hand; three
# rounds, both times and the ratio printed, both must name the same
# applications. Brings the stack up (building it the first time) and down.
set -euo pipefail
cd "$(dirname "$0")"
K=$(pwd)
"$K/up.sh"
trap '"$K/down.sh"' EXIT
cd ../..
ip netns exec driftfix-e2e env DRIFTFIX_SIDE_BY_SIDE=1 SIDE_BY_SIDE_APPS="${SIDE_BY_SIDE_APPS:-120}" \
	go test -tags e2e -count=1 -timeout 40m -run '^TestSideBySide$' -v ./e2e/ | grep -E '^(side by side|--- |ok|FAIL|\s+sidebyside_test)'
