// Package deploy holds what installing driftfix takes: the Helm chart, the
// Kustomize base, the Argo CD account, notifications and links, the
// monitoring rules, and the GitHub App's manifest, which the binary carries
// for `driftfix setup github-app`.
package deploy

import _ "embed"

// GitHubAppManifest is github-app.yaml: the App in GitHub's manifest format.
//
//go:embed github-app.yaml
var GitHubAppManifest []byte
