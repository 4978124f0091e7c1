#!/usr/bin/env bash
# Builds the end-to-end stack's binaries into e2e/stack/bin (ignored by git),
# reusing what is already built. Everything comes from the Go module proxy;
# Argo CD 3.6 needs Go 1.27, so this module (and only it) uses that toolchain.
set -euo pipefail
cd "$(dirname "$0")"
export GOTOOLCHAIN=go1.27.3
mkdir -p bin
V=v1.37.2
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$V -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$V -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=37 -X github.com/argoproj/argo-cd/v3/common.version=3.6.1"
want=(etcd kube-apiserver kube-controller-manager kubectl argocd helm)
missing=0
for b in "${want[@]}"; do [ -x "bin/$b" ] || missing=1; done
if [ "$missing" = 0 ] && [ "${REBUILD:-}" = "" ]; then
  echo "stack binaries already built (REBUILD=1 to rebuild)"
  exit 0
fi
start=$(date +%s)
go build -trimpath -ldflags "$LDF" -o bin/ ./cmd/etcd \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl \
  helm.sh/helm/v3/cmd/helm
go build -trimpath -ldflags "$LDF" -o bin/argocd github.com/argoproj/argo-cd/v3/cmd
echo "stack built in $(( $(date +%s) - start ))s"
