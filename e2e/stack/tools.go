//go:build tools

// Package stack pins the commands the end-to-end stack builds, so that
// go mod tidy keeps their dependencies.
package stack

import (
	_ "github.com/argoproj/argo-cd/v3/cmd"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
