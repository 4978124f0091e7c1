package drift

import (
	"strings"
	"testing"
)

// TestHandOverAllowList: a fix that hands a field to another writer goes
// ahead only where an entry of the allow-list names the grant's kind and the
// path; what no entry allows stays with a person, whatever the proof.
func TestHandOverAllowList(t *testing.T) {
	const ps = "/spec/template/spec"
	svc, sa := core("Service"), core("ServiceAccount")
	for _, tc := range []struct {
		name  string
		cause Cause
		kind  FixKind
		ref   Ref
		path  string
		allow bool
	}{
		// Webhooks: what a sidecar injector or a defaulting webhook writes.
		{"webhook: a defaulted CPU limit", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/containers/0/resources/limits/cpu", true},
		{"webhook: an injected container, whole", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/containers/1", true},
		{"webhook: an injected init container, whole", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/initContainers/0", true},
		{"webhook: an injected volume, whole", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/volumes/2", true},
		{"webhook: a pod-template annotation", CauseWebhookMutation, FixIgnoreDifference, deploy, "/spec/template/metadata/annotations/sidecar.istio.io~1status", true},
		{"webhook: a label on the Deployment itself", CauseWebhookMutation, FixIgnoreDifference, deploy, "/metadata/labels/team", true},
		{"webhook: a CronJob's pod template resources", CauseWebhookMutation, FixIgnoreDifference, Ref{Group: "batch", Kind: "CronJob", Name: "c"}, "/spec/jobTemplate/spec/template/spec/containers/0/resources", true},
		// ... and never what the attacks took (#43).
		{"webhook: a ConfigMap's authentication switch", CauseWebhookMutation, FixIgnoreDifference, core("ConfigMap"), "/data/AUTH_REQUIRED", false},
		{"webhook: a Service's targetPort", CauseWebhookMutation, FixIgnoreDifference, svc, "/spec/ports/0/targetPort", false},
		{"webhook: a Service's load-balancer scheme annotation", CauseWebhookMutation, FixIgnoreDifference, svc, "/metadata/annotations/service.beta.kubernetes.io~1aws-load-balancer-scheme", false},
		{"webhook: an IRSA role on a ServiceAccount", CauseWebhookMutation, FixIgnoreDifference, sa, "/metadata/annotations/eks.amazonaws.com~1role-arn", false},
		{"webhook: a Namespace label", CauseWebhookMutation, FixIgnoreDifference, Ref{Kind: "Namespace", Name: "shop"}, "/metadata/labels/team", false},
		{"webhook: a field inside a container Git declares", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/containers/0/env", false},
		{"webhook: an image", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/containers/0/image", false},
		{"webhook: the whole container list", CauseWebhookMutation, FixIgnoreDifference, deploy, ps + "/containers", false},
		{"webhook: the Deployment's replicas", CauseWebhookMutation, FixIgnoreDifference, deploy, "/spec/replicas", false},
		{"webhook: a Route's host", CauseWebhookMutation, FixIgnoreDifference, Ref{Group: "route.openshift.io", Kind: "Route", Name: "r"}, "/spec/host", false},
		{"webhook: a Certificate's names", CauseWebhookMutation, FixIgnoreDifference, Ref{Group: "cert-manager.io", Kind: "Certificate", Name: "c"}, "/spec/dnsNames", false},
		{"webhook: a look-alike custom Deployment's labels", CauseWebhookMutation, FixIgnoreDifference, Ref{Group: "apps.kruise.io", Kind: "StatefulSet", Name: "s"}, "/metadata/labels/team", false},
		// Autoscalers: the replica count of a workload.
		{"hpa: a Deployment's replicas", CauseHPAReplicas, FixRemoveField, deploy, "/spec/replicas", true},
		{"hpa: a StatefulSet's replicas", CauseHPAReplicas, FixRemoveField, Ref{Group: "apps", Kind: "StatefulSet", Name: "s"}, "/spec/replicas", true},
		{"hpa: an Argo Rollout's replicas", CauseHPAReplicas, FixRemoveField, Ref{Group: "argoproj.io", Kind: "Rollout", Name: "r"}, "/spec/replicas", true},
		{"hpa: a Deployment's pod template", CauseHPAReplicas, FixRemoveField, deploy, "/spec/template", false},
		{"hpa: a Service's replicas-looking path", CauseHPAReplicas, FixRemoveField, svc, "/spec/replicas", false},
		// Allocations: what the API server fills in where Git is empty.
		{"allocation: a node port", CauseNormalized, FixIgnoreDifference, svc, "/spec/ports/1/nodePort", true},
		{"allocation: a cluster IP", CauseNormalized, FixIgnoreDifference, svc, "/spec/clusterIP", true},
		{"allocation: a Route's host", CauseNormalized, FixIgnoreDifference, Ref{Group: "route.openshift.io", Kind: "Route", Name: "r"}, "/spec/host", true},
		{"allocation: a Service's external IPs", CauseNormalized, FixIgnoreDifference, svc, "/spec/externalIPs", false},
		{"allocation: a Service's port", CauseNormalized, FixIgnoreDifference, svc, "/spec/ports/0/port", false},
		// A controller's grant is bounded by its catalog entry, not this list.
		{"controller: a revision annotation", CauseControllerWrite, FixRemoveField, deploy, "/metadata/annotations/deployment.kubernetes.io~1revision", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Finding{Resource: tc.ref, Path: MustPointer(tc.path), Cause: tc.cause, InLive: true, Live: "x",
				Remediation: Remediation{Kind: tc.kind, Grant: "proven"}}
			why, refused := handOverRefused(tc.kind, &f)
			switch {
			case tc.allow && refused:
				t.Errorf("refused (%s), want allowed", why)
			case !tc.allow && !refused:
				t.Errorf("allowed, want refused")
			case refused && !strings.Contains(why, "allow-list of hand-overs"):
				t.Errorf("reason %q does not name the allow-list", why)
			}
			if gk, listed := GrantKindOf(tc.cause); listed {
				if _, ok := HandOverAt(gk, tc.ref, f.Path); ok != tc.allow {
					t.Errorf("HandOverAt says %v, handOverRefused %v", ok, !refused)
				}
			}
		})
	}
}

// TestHandOverWithoutGrant: a hand-over with no grant at all is refused
// whatever the allow-list says of its path.
func TestHandOverWithoutGrant(t *testing.T) {
	f := Finding{Resource: deploy, Path: MustPointer("/spec/replicas"), Cause: CauseHPAReplicas, InGit: true, Git: 2, InLive: true, Live: 5,
		Remediation: Remediation{Kind: FixRemoveField}}
	if _, refused := handOverRefused(FixRemoveField, &f); !refused {
		t.Fatal("a remove-field with no grant went ahead")
	}
}

// TestHandOverTableRefusesMalformed: the allow-list is read strictly, each
// error naming the entry and what is wrong.
func TestHandOverTableRefusesMalformed(t *testing.T) {
	good := "- {grant: hpa, scope: apps/Deployment, pattern: /spec/replicas, mode: whole, writer: the HPA controller, why: it scales, source: \"https://kubernetes.io/x\"}\n"
	if h, _, err := parseHandOvers([]byte("handOvers:\n" + good)); err != nil || len(h) != 1 {
		t.Fatalf("a well-formed table: %v", err)
	}
	for _, tc := range []struct{ entry, want string }{
		{"- {grant: person, scope: apps/Deployment, pattern: /spec/replicas, writer: w, why: y, source: \"https://x\"}", "entry 2 (person apps/Deployment /spec/replicas): grant \"person\": write one of webhook, hpa, allocation"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /spec/replicas, writer: w, why: y, source: \"https://x\", owner: z}", "field owner not found"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: spec.replicas, writer: w, why: y, source: \"https://x\"}", "pattern \"spec.replicas\": write a JSON pointer"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: \"/spec//x\", writer: w, why: y, source: \"https://x\"}", "entry 2 (webhook apps/Deployment /spec//x)"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /, writer: w, why: y, source: \"https://x\"}", "every step must name a field"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /*, writer: w, why: y, source: \"https://x\"}", "the first not every field"},
		{"- {grant: webhook, pattern: /spec/replicas, writer: w, why: y, source: \"https://x\"}", "scope is empty"},
		{"- {grant: webhook, scope: all, pattern: /spec/replicas, writer: w, why: y, source: \"https://x\"}", "scope all"},
		{"- {grant: webhook, scope: deployment, pattern: /spec/replicas, writer: w, why: y, source: \"https://x\"}", "\"deployment\" is not a scope"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /spec/replicas, mode: all, writer: w, why: y, source: \"https://x\"}", "mode \"all\""},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /spec/replicas, why: y, source: \"https://x\"}", "writer is empty"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /spec/replicas, writer: w, source: \"https://x\"}", "why is empty"},
		{"- {grant: webhook, scope: apps/Deployment, pattern: /spec/replicas, writer: w, why: y, source: \"http://x\"}", "source must be an https:// URL"},
	} {
		_, _, err := parseHandOvers([]byte("handOvers:\n" + good + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.entry, err, tc.want)
		}
	}
	for _, doc := range []string{"", "handOvers: []\n", "paths: []\n"} {
		if _, _, err := parseHandOvers([]byte(doc)); err == nil {
			t.Errorf("%q: read as an allow-list, want an error", doc)
		}
	}
}

// FuzzParseHandOvers: reading any allow-list returns entries or an error,
// never a panic, and the entries it accepts answer questions.
func FuzzParseHandOvers(f *testing.F) {
	f.Add(string(handOversYAML))
	f.Add("handOvers:\n- {grant: webhook, scope: [pod, custom], pattern: \"/a|b/*/c*\", mode: whole, writer: w, why: y, source: \"https://x\"}\n")
	f.Fuzz(func(t *testing.T, data string) {
		list, never, err := parseHandOvers([]byte(data))
		if err != nil {
			return
		}
		for _, k := range grantKinds {
			handOverIn(list, k, deploy, MustPointer("/spec/template/spec/containers/0/resources"))
			handOverIn(list, k, Ref{Group: "example.com", Kind: "Thing", Name: "t"}, MustPointer("/spec/replicas"))
		}
		for _, pk := range never {
			for _, sc := range pk.scopes {
				sc.appliesTo(deploy)
			}
		}
	})
}

// TestPlatformRuleRefused: no platform rule covers a kind that carries
// identity, routing or access, in any application; workloads may have one.
func TestPlatformRuleRefused(t *testing.T) {
	for _, tc := range []struct {
		ref     Ref
		refused bool
	}{
		{core("ServiceAccount"), true},
		{core("Secret"), true},
		{core("Service"), true},
		{Ref{Group: "networking.k8s.io", Kind: "Ingress"}, true},
		{Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}, true},
		{Ref{Group: "route.openshift.io", Kind: "Route"}, true},
		{Ref{Group: "security.istio.io", Kind: "AuthorizationPolicy"}, true},
		{Ref{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, true},
		{Ref{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}, true},
		{Ref{Group: "networking.k8s.io", Kind: "NetworkPolicy"}, true},
		{deploy, false},
		{Ref{Group: "apps", Kind: "StatefulSet"}, false},
		{core("ConfigMap"), false},
		{Ref{Group: "example.com", Kind: "Service"}, false}, // a custom kind named like a built-in one
	} {
		why, refused := PlatformRuleRefused(tc.ref)
		if refused != tc.refused {
			t.Errorf("%s/%s: refused %v (%s), want %v", tc.ref.Group, tc.ref.Kind, refused, why, tc.refused)
		}
		if refused && !strings.Contains(why, "each application's own rule or a person decides") {
			t.Errorf("%s: reason %q", tc.ref.Kind, why)
		}
	}
	for _, tc := range []struct{ entry, want string }{
		{"platformNever:\n- {scope: [pod], why: w, source: \"https://x\"}", "scope \"pod\": name kinds"},
		{"platformNever:\n- {scope: [core/Secret], source: \"https://x\"}", "why is empty"},
		{"platformNever:\n- {scope: [core/Secret], why: w}", "source must be"},
		{"platformNever:\n- {scope: [core/Secret], why: w, source: \"https://x\", kinds: x}", "field kinds not found"},
	} {
		good := "handOvers:\n- {grant: hpa, scope: apps/Deployment, pattern: /spec/replicas, writer: w, why: y, source: \"https://x\"}\n"
		if _, _, err := parseHandOvers([]byte(good + tc.entry + "\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.entry, err, tc.want)
		}
	}
}
