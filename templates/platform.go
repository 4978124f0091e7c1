package templates

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// PlatformPRView is everything a platform pull request says: one change to
// argocd-cm that ends a finding many applications share.
type PlatformPRView struct {
	Instance, ArgoCDURL string
	Source              string // e.g. "MutatingWebhookConfiguration policy-mutator on Deployment"
	Cause               drift.Cause
	Key                 string // the argocd-cm key written
	File, Style         string
	Rule                string // the key's value after the change
	Apps                []PlatformAppView
	Diff                string
	Verification        string
	Fingerprint         string
}

// PlatformAppView is one application the change fixes, with the paths that
// stop drifting and the proof, in this application, that the writer the
// rule hands them to produced each value.
type PlatformAppView struct {
	App, Namespace string
	Paths          []string
	Proofs         []PlatformProofView
}

// PlatformProofView is what one application's grant of one path rests on,
// filled from typed evidence and the application's snapshot (never from
// evidence text): for a webhook, the configuration and webhook that admit
// the object and the digest of the value a server-side dry run of Git's
// manifest stores; for a controller, the field manager; for both, the
// reviewed entry (allow-list of hand-overs, writer catalog or the policy's
// writers) that lets that writer keep the path.
type PlatformProofView struct {
	Resource, Path string
	// Webhook grants.
	WebhookConfig string // "MutatingWebhookConfiguration policy-mutator"
	Webhook       string // the webhook's name within it
	DryRunManager string // the manager the dry run applied under
	// Controller grants.
	Manager string
	// The reviewed entry the grant rests on.
	EntryFrom    string // "the allow-list of hand-overs", "the writer catalog", "the policy's writers"
	EntryWriter  string
	EntryPattern string
	EntryWhy     string
	EntrySource  string
}

// AppURL links to an application of the view in Argo CD's UI; its namespace
// and name are escaped as path segments, so they cannot end the link.
func (v PlatformPRView) AppURL(a PlatformAppView) string {
	seg := func(s string) string {
		return strings.NewReplacer("@", "%40", "(", "%28", ")", "%29").Replace(url.PathEscape(s))
	}
	return AppURL(v.ArgoCDURL, seg(a.Namespace), seg(a.App))
}

// DiffFence is a code fence no line of the diff can close.
func (v PlatformPRView) DiffFence() string { return fence(v.Diff) }

// RuleFence is a code fence no line of the rule can close.
func (v PlatformPRView) RuleFence() string { return fence(v.Rule) }

func fence(s string) string {
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// PlatformPRTitle says what a platform pull request does.
func PlatformPRTitle(v PlatformPRView) string {
	return fmt.Sprintf("driftfix(platform %s): ignore what %s writes, for %d applications", v.Instance, v.Source, len(v.Apps))
}

// PlatformPRBody renders a platform pull request's body.
func PlatformPRBody(v PlatformPRView) (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "platform_pr.md.tmpl", v); err != nil {
		return "", fmt.Errorf("render platform pull request body: %w", err)
	}
	return b.String(), nil
}
