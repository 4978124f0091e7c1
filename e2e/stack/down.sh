#!/usr/bin/env bash
# Stops the end-to-end stack by the PIDs up.sh recorded and removes the network
# namespace only when up.sh created it (DRIFTFIX_NETNS, default driftfix-e2e).
K=$(cd "$(dirname "$0")" && pwd)
R=$K/run
NETNS=${DRIFTFIX_NETNS:-driftfix-e2e}
for p in argocd-server app-controller repo-server redis kube-controller-manager kube-apiserver etcd; do
  [ -f "$R/$p.pid" ] || continue
  pid=$(cat "$R/$p.pid")
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  rm -f "$R/$p.pid"
done
# Only a namespace up.sh made (and recorded) is deleted, and only by its name.
if [ -f "$R/netns-created" ]; then
  made=$(cat "$R/netns-created")
  ip netns list | awk '{print $1}' | grep -qxF "$made" && ip netns delete "$made"
  rm -f "$R/netns-created"
fi
echo "stack down"
