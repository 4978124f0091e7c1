package pipeline

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// fuzzPaths are the changes FuzzPlanSafety makes to a live object: the kind,
// the path, and whether a fix must never change, remove or hide it. The
// labels are written here by hand, not read from the safety model.
var fuzzPaths = []struct {
	kind, path string
	protected  bool
}{
	{"Deployment", "/spec/template/spec/containers/0/image", true},
	{"Deployment", "/spec/template/spec/containers/0/securityContext/privileged", true},
	{"Deployment", "/spec/template/spec/hostNetwork", true},
	{"Deployment", "/spec/template/spec/containers/0/env/0/value", true},
	{"Deployment", "/spec/template/spec/serviceAccountName", true},
	{"Deployment", "/spec/template/spec/volumes/0/hostPath/path", true},
	{"Deployment", "/spec/template/spec/containers/1", true}, // an added container: protected when privileged
	{"Deployment", "/spec/replicas", false},
	{"Deployment", "/spec/template/metadata/annotations/checksum~1cfg", false},
	{"Deployment", "/metadata/labels/team", false},
	{"Namespace", "/metadata/labels/pod-security.kubernetes.io~1enforce", true},
	{"Secret", "/data/k", true},
	{"NetworkPolicy", "/spec/ingress/0/from/0", true},
	{"ClusterRole", "/rules/0/verbs", true},
	{"ValidatingWebhookConfiguration", "/webhooks/0/failurePolicy", true},
	{"ValidatingWebhookConfiguration", "/webhooks/0/clientConfig/caBundle", true}, // protected when Git pins a CA
}

func fuzzTarget(kind string) map[string]any {
	switch kind {
	case "Namespace":
		return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app", "labels": map[string]any{"pod-security.kubernetes.io/enforce": "restricted", "team": "a"}}}
	case "Secret":
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "app", "namespace": "app"}, "data": map[string]any{"k": "YQ=="}}
	case "NetworkPolicy":
		return map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": map[string]any{"name": "app", "namespace": "app"},
			"spec": map[string]any{"podSelector": map[string]any{}, "ingress": []any{map[string]any{"from": []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}}}}}}
	case "ClusterRole":
		return map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "app"},
			"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}}}
	case "ValidatingWebhookConfiguration":
		return map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": map[string]any{"name": "app"},
			"webhooks": []any{map[string]any{"name": "v.example.com", "admissionReviewVersions": []any{"v1"}, "sideEffects": "None", "failurePolicy": "Fail",
				"clientConfig": map[string]any{"caBundle": "", "service": map[string]any{"name": "v", "namespace": "app"}}}}}
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "app", "namespace": "app", "labels": map[string]any{"team": "a"}},
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": map[string]any{"app": "app"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "app"}, "annotations": map[string]any{"checksum/cfg": "a"}},
				"spec": map[string]any{"serviceAccountName": "app",
					"containers": []any{map[string]any{"name": "app", "image": "registry.example.com/app:1",
						"env": []any{map[string]any{"name": "MODE", "value": "prod"}}, "securityContext": map[string]any{"privileged": false}}},
					"volumes": []any{map[string]any{"name": "data", "hostPath": map[string]any{"path": "/srv/data"}}}}}}}
}

// setPath sets v at p in doc, creating maps on the way.
func setPath(doc map[string]any, p drift.Pointer, v any) {
	var cur any = doc
	for i, tok := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[tok] = v
				return
			}
			if _, ok := c[tok]; !ok {
				c[tok] = map[string]any{}
			}
			cur = c[tok]
		case []any:
			n, _ := strconv.Atoi(tok)
			if n >= len(c) {
				return // only the list append below grows lists
			}
			if last {
				c[n] = v
				return
			}
			cur = c[n]
		}
	}
}

// fieldsFor adds p, as a FieldsV1 entry of live, to fs.
func fieldsFor(fs map[string]any, live any, p drift.Pointer) {
	cur, val := fs, live
	for _, tok := range p {
		var key string
		if l, ok := val.([]any); ok {
			n, _ := strconv.Atoi(tok)
			if n >= len(l) {
				return
			}
			if name, ok := drift.Map(l[n])["name"].(string); ok {
				k, _ := json.Marshal(map[string]string{"name": name})
				key = "k:" + string(k)
			} else {
				key = "i:" + tok
			}
			val = l[n]
		} else {
			key = "f:" + tok
			val = drift.Map(val)[tok]
		}
		next, _ := cur[key].(map[string]any)
		if next == nil {
			next = map[string]any{}
			cur[key] = next
		}
		if strings.HasPrefix(key, "k:") {
			next["."] = map[string]any{}
		}
		cur = next
	}
}

func leaves(v any, at drift.Pointer, out *[]drift.Pointer) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			leaves(e, at.Child(k), out)
		}
	case []any:
		for i, e := range x {
			leaves(e, at.Index(i), out)
		}
	default:
		*out = append(*out, append(drift.Pointer{}, at...))
	}
}

// forgedManagers are the names a client can send to pass for Argo CD
// (FuzzPlanSafety's extra bit 0): its controller's, its server's, and the
// instance's.
var forgedManagers = []string{"argocd-controller", "argocd-application-controller", "argocd-server"}

// FuzzPlanSafety builds snapshots in which a field manager with any name
// changes one path (or a webhook does), under client- or server-side apply,
// with or without an ignore rule over it (a pointer, a jq selection by name,
// the manager), and checks with the real planner the invariant of
// TestHostile: no kept plan changes, removes or hides a protected path, no
// rule a plan writes covers one, and an existing rule that covers one is
// flagged. extra adds what an attacker with namespace write access brings:
// Argo CD's own manager name on the change (bit 0), the snapshot's dry run
// of Git's manifest holding Git's value or reproducing the live one (bits
// 1-2: none, Git's, live's), and an HPA only in the cluster targeting the
// Deployment with a range holding the live count (bit 3). A change under
// Argo CD's names alone that no dry run reproduces is protected on every
// path, and so are replicas an HPA outside Git would take.
func FuzzPlanSafety(f *testing.F) {
	for i := range fuzzPaths {
		f.Add("ops-toolbox", uint8(i), "evil.example.net/x:1", uint8(i*7), "", uint8(0), uint8(0))
		f.Add("kube-controller-manager ", uint8(i), "0.0.0.0/0", uint8(i*13+1), "", uint8(0), uint8(0))
		f.Add("helm", uint8(i), "evil.example.net/x:1", uint8(i*5), "apps.kruise.io", uint8(1), uint8(0))
		f.Add("manager", uint8(i), "1", uint8(i*3), "serving.knative.dev", uint8(2), uint8(0))
		f.Add("kubectl", uint8(i), "0.0.0.0/0", uint8(i*11), "", uint8(0), uint8(i%16))
		f.Add(forgedManagers[i%len(forgedManagers)], uint8(i), "false", uint8(0x40|(i*2)), "", uint8(0), uint8(1|2|i%2<<2))
	}
	f.Add("cainjector", uint8(15), "R0lU", uint8(0b1000), "", uint8(0), uint8(0))
	f.Add("argocd-controller", uint8(6), "proxy", uint8(0b11110), "", uint8(0), uint8(0))
	f.Add("kustomize-controller", uint8(0), "x", uint8(0b1011), "argoproj.io", uint8(3), uint8(0))
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	f.Add("argocd-server", uint8(7), "1", uint8(0b0000001), "", uint8(0), uint8(0b1001))
	f.Add("argocd-controller", uint8(3), "0.0.0.0/0", uint8(0b1000010), "", uint8(0), uint8(0b0010))
	f.Add("argocd-application-controller", uint8(0), "evil.example.net/x:1", uint8(0b1000000), "", uint8(0), uint8(0b0101))
	f.Fuzz(func(t *testing.T, manager string, which uint8, value string, mode uint8, group string, kindSel uint8, extra uint8) {
		fp := fuzzPaths[int(which)%len(fuzzPaths)]
		if extra&1 != 0 {
			manager = forgedManagers[int(which)%len(forgedManagers)]
		}
		dryRun := (extra >> 1) & 3 // 0: none, 1: holds Git's value, 2: reproduces live
		hpaOutside := extra&8 != 0
		ssa := mode&1 != 0
		owner := (mode >> 1) & 3 // 0: the manager, 1: argocd-controller (as a webhook's change is recorded), 2: nobody
		ruleKind := (mode >> 3) & 3
		privileged := mode&0x20 != 0
		webhook := mode&0x40 != 0
		path := drift.MustPointer(fp.path)
		target := fuzzTarget(fp.kind)
		if fp.kind == "Deployment" && customGroup(group) {
			// The same workload as a custom resource of any API group and
			// kind, a built-in kind's name among them: its pod template
			// keeps every protection.
			target["apiVersion"] = group + "/v1"
			target["kind"] = fuzzKinds[int(kindSel)%len(fuzzKinds)]
		}
		live := drift.DeepCopy(target).(map[string]any)
		isProtected := fp.protected
		var v any = value
		switch fp.path {
		case "/spec/template/spec/containers/0/securityContext/privileged", "/spec/template/spec/hostNetwork":
			v = true
		case "/spec/replicas":
			v = len(value) + 3
		case "/spec/ingress/0/from/0":
			v = map[string]any{"ipBlock": map[string]any{"cidr": value}}
		case "/rules/0/verbs":
			v = []any{value, "*"}
		case "/spec/template/spec/containers/1":
			sc := map[string]any{"runAsNonRoot": true}
			if privileged {
				sc = map[string]any{"privileged": true, "capabilities": map[string]any{"add": []any{"SYS_ADMIN"}}}
			}
			isProtected = privileged
			spec := drift.Map(live, "spec", "template", "spec")
			spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "sidecar", "image": value, "securityContext": sc})
		case "/webhooks/0/clientConfig/caBundle":
			if mode&0x80 != 0 {
				setPath(target, path, "R0lUUElOTkVE")
				live = drift.DeepCopy(target).(map[string]any)
			} else {
				isProtected = false // Git declares "": an injector may fill it
			}
		}
		if fp.path != "/spec/template/spec/containers/1" {
			setPath(live, path, v)
		}
		// Under Argo CD's own names alone (recorded for the request, or
		// sent by the client), only a dry run that reproduces the live
		// value shows another writer made it; and an HPA only in the
		// cluster proves nothing of the replica count.
		// (An ignore rule the application already has is its owners' own
		// decision, flagged only where it covers a security-relevant path.)
		argoOnly := owner == 1 || (owner == 0 && drift.ArgoCDManagers[manager])
		if argoOnly && dryRun != 2 && ruleKind == 0 {
			isProtected = true
		}
		if hpaOutside && fp.path == "/spec/replicas" && dryRun != 2 && ruleKind == 0 && (argoOnly || strings.HasPrefix(manager, "kubectl")) {
			isProtected = true
		}
		argo := map[string]any{}
		var ls []drift.Pointer
		leaves(target, drift.Pointer{}, &ls)
		for _, l := range ls {
			if l[0] != "apiVersion" && l[0] != "kind" && !(len(l) > 1 && l[1] == "name") {
				if owner == 0 && l.Related(path) {
					continue
				}
				fieldsFor(argo, live, l)
			}
		}
		if owner == 1 {
			fieldsFor(argo, live, path)
		}
		mfs := []any{map[string]any{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "v1", "time": "2026-11-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": argo}}
		if owner == 0 {
			own := map[string]any{}
			fieldsFor(own, live, path)
			mfs = append(mfs, map[string]any{"manager": manager, "operation": "Update", "apiVersion": "v1", "time": "2026-11-20T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": own})
		}
		drift.Map(live, "metadata")["managedFields"] = mfs
		var dry map[string]any
		switch dryRun {
		case 1, 3:
			dry = drift.DeepCopy(target).(map[string]any)
			drift.Map(dry, "metadata")["managedFields"] = []any{mfs[0]}
		case 2:
			dry = drift.DeepCopy(live).(map[string]any)
			own := drift.DeepCopy(argo).(map[string]any)
			fieldsFor(own, live, path)
			drift.Map(dry, "metadata")["managedFields"] = []any{map[string]any{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "v1", "time": "2026-11-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": own}}
		}
		ref := drift.RefOf(target)
		app := fuzzApplication(ref, fp.path, manager, ssa, ruleKind)
		cluster := fuzzCluster(webhook, hpaOutside && fp.kind == "Deployment", target, ref)
		manifest, _ := yaml.Marshal(target)
		appFile, _ := yaml.Marshal(app)
		res := map[string]any{"target": target, "live": live}
		if dry != nil {
			res["dryRun"] = dry
		}
		snap := map[string]any{"apiVersion": "driftfix/v1", "kind": "Snapshot", "application": app,
			"resources": []any{res},
			"repo":      map[string]any{"files": map[string]any{"apps/app/resources.yaml": string(manifest), "argocd/app.yaml": string(appFile)}}}
		if cluster != nil {
			snap["cluster"] = cluster
		}
		raw, err := yaml.Marshal(snap)
		if err != nil {
			t.Skip(err)
		}
		s, err := drift.ParseSnapshot(raw)
		if err != nil {
			t.Skip(err) // a manager name the snapshot format cannot hold
		}
		rep, plans, err := Fix(s, remediations.RepoFromSnapshot(s), drift.Sensitivity{}, now, render.Limits{})
		if err != nil {
			return // an input Argo CD's diff rejects is not a plan
		}
		var prot []protected
		if isProtected {
			prot = append(prot, protected{kind: ref.Kind, name: ref.Name, path: path})
		}
		checkPlanSafety(t, s, rep, plans, prot, false)
	})
}

// fuzzApplication is the Application of FuzzPlanSafety: with Server-Side
// Apply or not, and the ignore rule of ruleKind on the resource ref (0: none,
// 1: the JSON pointer at, 2: its parent, or the containers by a jq
// expression, 3: the manager).
func fuzzApplication(ref drift.Ref, at, manager string, ssa bool, ruleKind uint8) map[string]any {
	path := drift.MustPointer(at)
	appSpec := map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "app"},
		"source": map[string]any{"repoURL": "https://git.example.com/app.git", "path": "apps/app", "targetRevision": "main"}}
	if ssa {
		appSpec["syncPolicy"] = map[string]any{"syncOptions": []any{"ServerSideApply=true"}}
	}
	rule := map[string]any{"group": ref.Group, "kind": ref.Kind, "name": ref.Name}
	switch ruleKind {
	case 1:
		rule["jsonPointers"] = []any{at}
	case 2:
		if len(path) > 4 && path[3] == "containers" {
			rule["jqPathExpressions"] = []any{`.spec.template.spec.containers[] | select(.name == "sidecar" or .name == "app")`}
		} else {
			rule["jsonPointers"] = []any{path[:len(path)-1].String()}
		}
	case 3:
		rule["managedFieldsManagers"] = []any{manager}
	}
	if ruleKind != 0 {
		appSpec["ignoreDifferences"] = []any{rule}
	}
	app := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "app", "namespace": "argocd"}, "spec": appSpec}
	return app
}

// fuzzCluster is the cluster context of FuzzPlanSafety: a mutating webhook
// for every resource, and an HPA outside Git scaling target.
func fuzzCluster(webhook, hpa bool, target map[string]any, ref drift.Ref) []any {
	var cluster []any
	if webhook {
		cluster = append(cluster,
			map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app", "labels": map[string]any{"kubernetes.io/metadata.name": "app"}}},
			map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration", "metadata": map[string]any{"name": "any"},
				"webhooks": []any{map[string]any{"name": "any.example.com", "clientConfig": map[string]any{"service": map[string]any{"name": "w", "namespace": "w"}},
					"rules": []any{map[string]any{"apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"*"}}}}}})
	}
	if hpa {
		cluster = append(cluster, map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
			"metadata": map[string]any{"name": ref.Name, "namespace": ref.Namespace},
			"spec":     map[string]any{"scaleTargetRef": map[string]any{"apiVersion": target["apiVersion"], "kind": ref.Kind, "name": ref.Name}, "minReplicas": 1, "maxReplicas": 1000}})
	}
	return cluster
}

// fuzzKinds are the kinds FuzzPlanSafety gives a custom resource: built-in
// kinds' names and others.
var fuzzKinds = []string{"Widget", "StatefulSet", "Service", "Rollout", "Deployment", "NetworkPolicy", "Pod", "CronJob"}

// customGroup reports whether group can name a custom resource's API group
// (a DNS name outside Kubernetes' own groups).
func customGroup(group string) bool {
	if !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io") || len(group) > 63 {
		return false
	}
	for _, r := range group {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return !strings.HasPrefix(group, ".") && !strings.HasSuffix(group, ".") && !strings.Contains(group, "..")
}
