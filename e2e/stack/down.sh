#!/usr/bin/env bash
# Stops the end-to-end stack by PID and removes its network namespace.
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
ip netns list | grep -qw "$NETNS" && ip netns delete "$NETNS"
echo "stack down"
