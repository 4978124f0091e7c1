package remediations

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

func TestPlanPlatformRule(t *testing.T) {
	dep := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	live := drift.Object{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "web", "image": "web:1"}, map[string]any{"name": "policy-agent", "image": "agent:0.9"}}}}}}
	target := drift.Object{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "web", "image": "web:1"}}}}}}
	mwc := drift.Ref{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: "policy-agent"}
	webhook := func(app, p string) PlatformFinding {
		return PlatformFinding{App: app, Target: target, Live: live, DryRun: live, Finding: drift.Finding{Resource: dep, Path: drift.MustPointer(p), Cause: drift.CauseWebhookMutation, InLive: true,
			Evidence: []drift.Evidence{{Kind: drift.EvidenceWebhook, Object: &mwc, Webhook: "inject.policy.example.com", Text: "the webhook admits it"},
				{Kind: drift.EvidenceDryRun, Proof: drift.ProofDryRunHolds, Path: p, Text: "a dry run stores it"}},
			Remediation: drift.Remediation{Kind: drift.FixIgnoreDifference, Grant: "webhook policy-agent admits it"}}}
	}
	rollouts := []drift.Writer{{Manager: "rollouts", Is: drift.WriterController, Policy: true, Source: "platform team",
		Owns: []drift.OwnedPath{{Path: drift.MustPointer("/spec/replicas"), Text: "/spec/replicas"}}}}
	controller := func(app, mgr string) PlatformFinding {
		f := webhook(app, "/spec/replicas").Finding
		f.Cause, f.Owners = drift.CauseControllerWrite, []drift.Owner{{Manager: mgr}}
		f.Evidence = []drift.Evidence{{Kind: drift.EvidenceManager, Manager: mgr, Text: "it writes it"}}
		return PlatformFinding{App: app, Finding: f, Writers: rollouts}
	}
	// change is a finding changed by fn.
	change := func(pf PlatformFinding, fn func(*PlatformFinding)) PlatformFinding {
		pf.Finding.Evidence = append([]drift.Evidence(nil), pf.Finding.Evidence...)
		fn(&pf)
		return pf
	}
	for _, tc := range []struct {
		name  string
		fs    []PlatformFinding
		value string // the argocd-cm value, or the start of why not
	}{
		{"webhook: exact paths, a named item by name, once across applications",
			[]PlatformFinding{webhook("a", "/metadata/labels/team"), webhook("b", "/spec/template/spec/containers/1"), webhook("c", "/metadata/labels/team")},
			"jsonPointers:\n- /metadata/labels/team\njqPathExpressions:\n- .spec.template.spec.containers[] | select(.name == \"policy-agent\")\n"},
		{"controller: the paths it owns, never its field manager", []PlatformFinding{controller("a", "rollouts"), controller("b", "rollouts")},
			"jsonPointers:\n- /spec/replicas\n"},
		{"a finding no rule grants is refused", []PlatformFinding{func() PlatformFinding {
			pf := controller("a", "helm")
			pf.Finding.Remediation = drift.Remediation{Kind: drift.FixIgnoreDifference}
			return pf
		}()}, "a: ignoring it would hand /spec/replicas to another writer, and no rule says"},
		{"a finding left for a person is refused", []PlatformFinding{func() PlatformFinding {
			pf := controller("a", "kube-controller-manager")
			pf.Finding.Remediation = drift.Remediation{Kind: drift.FixNone, Reason: "find the autoscaler first"}
			return pf
		}()}, "a: left for a person (find the autoscaler first)"},
		{"Argo CD's own manager is refused", []PlatformFinding{controller("a", "argocd-controller")}, "the field manager argocd-controller"},
		{"a security-relevant path is refused", []PlatformFinding{webhook("a", "/metadata/labels/team"), webhook("b", "/spec/template/spec/containers/0/image")}, "b: ignoring"},
		{"a kind of routing is refused, whatever each application proved", []PlatformFinding{func() PlatformFinding {
			pf := webhook("a", "/metadata/annotations/team")
			pf.Finding.Resource = drift.Ref{Kind: "Service", Namespace: "shop", Name: "web"}
			return pf
		}()}, "a platform rule would hide its paths on every Service"},
		{"a webhook write off the allow-list in one application is refused", []PlatformFinding{webhook("a", "/metadata/labels/team"), func() PlatformFinding {
			return webhook("b", "/spec/minReadySeconds")
		}()}, "b: ignoring it would hand /spec/minReadySeconds to another writer (webhook grant), and no entry of the allow-list of hand-overs"},
		{"an application whose webhook grant records no dry run is refused, though the others prove theirs", []PlatformFinding{webhook("a", "/metadata/labels/team"),
			change(webhook("b", "/metadata/labels/team"), func(pf *PlatformFinding) { pf.Finding.Evidence = pf.Finding.Evidence[:1] })},
			"b: no server-side dry run of Git's manifest is recorded as storing the live value at /metadata/labels/team"},
		{"a recorded dry run the snapshot's answer contradicts is refused", []PlatformFinding{webhook("a", "/metadata/labels/team"),
			change(webhook("b", "/metadata/labels/team"), func(pf *PlatformFinding) {
				pf.Live = drift.Object{"metadata": map[string]any{"labels": map[string]any{"team": "attacker"}}}
				pf.DryRun = drift.Object{"metadata": map[string]any{"labels": map[string]any{"team": "payments"}}}
			})},
			"b: the snapshot's server-side dry run of Git's manifest does not store the live value at /metadata/labels/team"},
		{"a webhook finding with no webhook recorded is refused", []PlatformFinding{
			change(webhook("a", "/metadata/labels/team"), func(pf *PlatformFinding) { pf.Finding.Evidence = pf.Finding.Evidence[1:] })},
			"a: no mutating webhook recorded as admitting"},
		{"a controller grant in one application only is refused in the other", []PlatformFinding{controller("a", "rollouts"),
			change(controller("b", "rollouts"), func(pf *PlatformFinding) { pf.Writers = nil })},
			"b: neither the writer catalog nor the policy's writers name rollouts"},
		{"a controller whose entry owns another path is refused", []PlatformFinding{
			change(controller("a", "rollouts"), func(pf *PlatformFinding) {
				pf.Writers = []drift.Writer{{Manager: "rollouts", Is: drift.WriterController, Policy: true, Owns: []drift.OwnedPath{{Path: drift.MustPointer("/status"), Text: "/status"}}}}
			})},
			"a: no writer entry lets rollouts keep /spec/replicas"},
		{"two kinds are refused", []PlatformFinding{webhook("a", "/metadata/labels/team"), {App: "b", Finding: drift.Finding{Resource: drift.Ref{Kind: "Service"}, Path: drift.MustPointer("/spec/x"), Cause: drift.CauseWebhookMutation}}}, "findings on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, why := PlanPlatformRule(tc.fs, drift.Sensitivity{})
			got := r.Value()
			if why != "" {
				got = why
			}
			if !strings.HasPrefix(got, tc.value) {
				t.Fatalf("got %q, want %q", got, tc.value)
			}
		})
	}
}

func TestEditArgoCDCM(t *testing.T) {
	rule := PlatformRule{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/metadata/labels/team"}}
	for _, tc := range []struct {
		name, file, src string
		style           CMStyle
		want            string
	}{
		{"manifest: a new data key, comments kept", "argocd-cm.yaml",
			"# settings\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  admin.enabled: \"false\" # no admin\n",
			StyleManifest,
			"# settings\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  admin.enabled: \"false\" # no admin\n  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jsonPointers:\n    - /metadata/labels/team\n"},
		{"manifest: merged with the rule already there", "cm.yaml",
			"kind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  # replicas belong to the HPA\n  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jsonPointers:\n    - /spec/replicas\n",
			StyleManifest,
			"kind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  # replicas belong to the HPA\n  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jsonPointers:\n    - /spec/replicas\n    - /metadata/labels/team\n"},
		{"JSON 6902: a new add operation", "patch.yaml",
			"# argocd-cm\n- op: add\n  path: /data/admin.enabled\n  value: \"false\"\n",
			StyleJSONPatch,
			"# argocd-cm\n- op: add\n  path: /data/admin.enabled\n  value: \"false\"\n- op: add\n  path: /data/resource.customizations.ignoreDifferences.apps_Deployment\n  value: |\n    jsonPointers:\n    - /metadata/labels/team\n"},
		{"Helm values: configs.cm created", "values.yaml",
			"# Argo CD chart values\nconfigs:\n  params:\n    server.insecure: true\n",
			StyleHelm,
			"# Argo CD chart values\nconfigs:\n  params:\n    server.insecure: true\n  cm:\n    resource.customizations.ignoreDifferences.apps_Deployment: |\n      jsonPointers:\n      - /metadata/labels/team\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := EditArgoCDCM(tc.file, []byte(tc.src), rule)
			if err != nil {
				t.Fatal(err)
			}
			if e.Style != tc.style || string(e.After) != tc.want {
				t.Fatalf("style %s, got:\n%s\nwant %s:\n%s", e.Style, e.After, tc.style, tc.want)
			}
			again, err := EditArgoCDCM(tc.file, e.After, rule)
			if err != nil || string(again.After) != string(e.After) {
				t.Fatalf("a second edit changed the file (err %v):\n%s", err, again.After)
			}
		})
	}
	if _, err := EditArgoCDCM("deploy.yaml", []byte("kind: Deployment\nmetadata: {name: x}\n"), rule); err == nil {
		t.Fatal("a file that declares no argocd-cm was edited")
	}
}
