// Package deploy_test checks the Helm chart and the Kustomize base: they
// render the same objects, lint clean, give a policy driftfix accepts, and
// grant nothing beyond reading what a diagnosis consults.
package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
)

// fullValues turns every option on.
var fullValues = map[string]any{
	"mode": "cronjob", "dryRun": true, "jitter": "1m",
	"argocd":         map[string]any{"name": "prod", "server": "https://argocd.example.com", "namespace": "gitops", "insecure": true},
	"github":         map[string]any{"appID": 123456, "baseURL": "https://github.example.com/api/v3/"},
	"slack":          map[string]any{"channel": "#gitops-drift"},
	"existingSecret": "driftfix-secrets",
	"policy":         map[string]any{"stuckAfter": "20m", "draft": true, "reviewers": []any{"platform-oncall"}, "fixes": map[string]any{"hpa-replicas": []any{"remove-field"}}},
	"overrides":      []any{map[string]any{"match": map[string]any{"project": "payments"}, "policy": map[string]any{"dryRun": true}}},
	"platformRepos":  []any{"https://github.com/example-org/platform.git"},
	"persistence":    map[string]any{"enabled": true, "size": "2Gi", "storageClass": "standard"},
	"serviceMonitor": map[string]any{"enabled": true},
	"nodeSelector":   map[string]any{"kubernetes.io/os": "linux"},
}

func files(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(p)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func renderChart(t *testing.T, values map[string]any) ([]drift.Object, error) {
	t.Helper()
	return render.Helm(files(t, "chart"), render.HelmOptions{ChartDir: "chart", ValuesObject: values, ReleaseName: "driftfix", Namespace: "driftfix"})
}

func byKey(objs []drift.Object) map[string]drift.Object {
	out := map[string]drift.Object{}
	for _, o := range objs {
		out[drift.Str(o, "kind")+" "+drift.Str(o, "metadata", "namespace")+"/"+drift.Str(o, "metadata", "name")] = o
	}
	return out
}

// withoutHelm is the chart's objects by key as the Kustomize base renders
// them: the Kustomize base is not installed by Helm, so it carries the
// standard labels but Helm's own two, and it has no template to sum for
// checksum/config (the chart rolls its pods when what it renders changes,
// TestChartWebhook).
func withoutHelm(t *testing.T, chart []drift.Object) map[string]drift.Object {
	t.Helper()
	for _, o := range chart {
		for _, labels := range labelSets(o) {
			for _, l := range helmOnlyLabels {
				if _, ok := labels[l]; !ok {
					t.Errorf("%s %s: no label %s", drift.Str(o, "kind"), drift.Str(o, "metadata", "name"), l)
				}
				delete(labels, l)
			}
		}
	}
	c := byKey(chart)
	if md := drift.Map(c["Deployment driftfix/driftfix"], "spec", "template", "metadata"); md != nil {
		if a, _ := md["annotations"].(map[string]any); a != nil {
			delete(a, "checksum/config")
			if len(a) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return c
}

func TestChartAndKustomizeRenderTheSameObjects(t *testing.T) {
	chart, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	kust, err := render.Kustomize(files(t, "kustomize"), "kustomize")
	if err != nil {
		t.Fatal(err)
	}
	c, k := withoutHelm(t, chart), byKey(kust)
	var keys []string
	for key := range c {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	want := []string{"ClusterRole /driftfix", "ClusterRoleBinding /driftfix", "ConfigMap driftfix/driftfix", "Deployment driftfix/driftfix",
		"NetworkPolicy driftfix/driftfix", "Role argocd/driftfix-argocd-cm", "Role driftfix/driftfix-lease", "RoleBinding argocd/driftfix-argocd-cm", "RoleBinding driftfix/driftfix-lease",
		"Service driftfix/driftfix", "ServiceAccount driftfix/driftfix"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("the chart renders %q, want %q", keys, want)
	}
	// The fields that matter are there to compare, in both: an object that
	// lost them on both sides would still be equal.
	dep := k["Deployment driftfix/driftfix"]
	pod := drift.Map(dep, "spec", "template", "spec")
	ctr := map[string]any{}
	if cs := drift.List(pod, "containers"); len(cs) > 0 {
		ctr, _ = cs[0].(map[string]any)
	}
	for what, v := range map[string]any{
		"image":                     ctr["image"],
		"args":                      ctr["args"],
		"container securityContext": ctr["securityContext"],
		"volumeMounts":              ctr["volumeMounts"],
		"serviceAccountName":        pod["serviceAccountName"],
		"pod securityContext":       pod["securityContext"],
		"volumes":                   pod["volumes"],
		"ClusterRole rules":         drift.Lookup(k["ClusterRole /driftfix"], "rules"),
	} {
		if v == nil || reflect.ValueOf(v).IsZero() {
			t.Errorf("the Kustomize base renders no %s", what)
		}
	}
	// No difference is intended: every object is compared whole.
	for _, key := range keys {
		if !reflect.DeepEqual(c[key], k[key]) {
			a, _ := json.MarshalIndent(c[key], "", "  ")
			b, _ := json.MarshalIndent(k[key], "", "  ")
			t.Errorf("%s differs between the chart and the Kustomize base:\nchart:\n%s\nkustomize:\n%s", key, a, b)
		}
	}
	if len(k) != len(c) {
		t.Errorf("the Kustomize base renders %d objects, the chart %d", len(k), len(c))
	}
}

func TestChartLints(t *testing.T) {
	for name, vals := range map[string]map[string]any{"default": nil, "full": fullValues} {
		res := lint.All("chart", vals, "driftfix", false)
		for _, m := range res.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("helm lint (%s values): %s", name, m)
			}
		}
	}
}

// TestRenderedPolicyIsValid: whatever the values, the chart's ConfigMap holds
// a policy driftfix accepts, with every secret referenced by file.
func TestRenderedPolicyIsValid(t *testing.T) {
	for name, vals := range map[string]map[string]any{"default": nil, "full": fullValues,
		"token": {"github": map[string]any{"tokenMode": true}}} {
		objs, err := renderChart(t, vals)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o := byKey(objs)
		cm := o["ConfigMap driftfix/driftfix"]
		text := drift.Str(cm, "data", "driftfix.yaml")
		cfg, err := config.Parse([]byte(text))
		if err != nil {
			t.Fatalf("%s values render a policy driftfix refuses:\n%s\n%v", name, text, err)
		}
		if cfg.ArgoCD[0].TokenFile != "/var/run/secrets/driftfix/argocd-token" {
			t.Errorf("%s: Argo CD token from %q", name, cfg.ArgoCD[0].TokenFile)
		}
		switch name {
		case "full":
			if cfg.GitHub.AppID != 123456 || cfg.GitHub.PrivateKeyFile == "" || cfg.Slack.Channel != "#gitops-drift" || !cfg.DryRun || cfg.ArgoCD[0].Namespace != "gitops" || len(cfg.Overrides) != 1 {
				t.Errorf("full values lost in the policy: %+v", cfg)
			}
			if _, ok := o["CronJob driftfix/driftfix"]; !ok {
				t.Error("mode cronjob renders no CronJob")
			}
			if _, ok := o["Deployment driftfix/driftfix"]; ok {
				t.Error("mode cronjob still renders the Deployment")
			}
			if _, ok := o["PersistentVolumeClaim driftfix/driftfix-state"]; !ok {
				t.Error("persistence renders no PVC")
			}
		case "token":
			if cfg.GitHub.TokenFile != "/var/run/secrets/driftfix/github-token" {
				t.Errorf("token mode: %+v", cfg.GitHub)
			}
		}
	}
}

// TestLeastPrivilege: read-only verbs on the kinds a diagnosis consults, the
// one ConfigMap argocd-cm, and the Lease; never Secrets, never a wildcard.
func TestLeastPrivilege(t *testing.T) {
	objs, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		kind := drift.Str(o, "kind")
		if kind != "ClusterRole" && kind != "Role" {
			continue
		}
		for _, r := range drift.List(o, "rules") {
			raw, _ := json.Marshal(r)
			s := string(raw)
			if strings.Contains(s, `"*"`) || strings.Contains(s, "secrets") {
				t.Errorf("%s %s grants too much: %s", kind, drift.Str(o, "metadata", "name"), s)
			}
			lease := strings.Contains(s, "leases")
			for _, v := range drift.List(r, "verbs") {
				switch v {
				case "get", "list", "watch":
				case "create", "update":
					if !lease {
						t.Errorf("%s %s may %s: %s", kind, drift.Str(o, "metadata", "name"), v, s)
					}
				default:
					t.Errorf("%s %s may %s: %s", kind, drift.Str(o, "metadata", "name"), v, s)
				}
			}
		}
	}
}

func TestSchemaRejectsBadValues(t *testing.T) {
	for _, vals := range []map[string]any{{"mode": "daemonset"}, {"argocd": map[string]any{"server": "argocd:443"}}, {"replica": 2}, {"slack": map[string]any{"channel": "gitops"}}} {
		if _, err := renderChart(t, vals); err == nil {
			t.Errorf("values %v were accepted", vals)
		}
	}
}

// TestGitHubAppManifest: the App is private, with no webhook and no event,
// and sends the browser back to loopback. That it asks for the permissions
// driftfix's calls need and nothing else is checked against those calls
// (bot TestAppManifestPermissionsExact), not against a copy here.
func TestGitHubAppManifest(t *testing.T) {
	raw, err := os.ReadFile("github-app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Name        string            `json:"name"`
		URL         string            `json:"url"`
		Description string            `json:"description"`
		Public      bool              `json:"public"`
		RedirectURL string            `json:"redirect_url"`
		Hook        map[string]any    `json:"hook_attributes"`
		Events      []string          `json:"default_events"`
		Permissions map[string]string `json:"default_permissions"`
	}
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		t.Fatalf("github-app.yaml: %v", err)
	}
	// The permissions are held to the bot's calls by
	// TestAppManifestPermissionsExact (bot). Every event subscribed needs a permission the App asks for (GitHub
	// refuses the manifest otherwise); the hook is off until setup's
	// --webhook-url turns it on.
	events := []string{"pull_request", "issue_comment", "issues", "check_run", "check_suite", "push"}
	if len(m.Permissions) == 0 || m.Public || !reflect.DeepEqual(m.Events, events) || m.Hook["active"] != false || m.Name == "" ||
		!strings.HasPrefix(m.RedirectURL, "http://127.0.0.1:") {
		t.Fatalf("manifest %+v", m)
	}
}

// TestArgoCDAccount: the RBAC line grants applications/get only.
func TestArgoCDAccount(t *testing.T) {
	raw, err := os.ReadFile("argocd/argocd-rbac-cm-patch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(cm.Data["policy.csv"]), "\n")
	if len(lines) != 1 || strings.Join(strings.Fields(strings.ReplaceAll(lines[0], ",", " ")), " ") != "p driftfix applications get */* allow" {
		t.Fatalf("policy.csv %q", cm.Data["policy.csv"])
	}
}

// TestSafeDefaults: Argo CD is reached over https (http only with
// insecurePlaintext), a NetworkPolicy limits the pods to DNS, HTTPS, the API
// server and argocd-server and to ingress on the metrics port (off with a
// value), and two replicas never share one SQLite file.
func TestSafeDefaults(t *testing.T) {
	objs, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := byKey(objs)
	cfg, err := config.Parse([]byte(drift.Str(o["ConfigMap driftfix/driftfix"], "data", "driftfix.yaml")))
	if err != nil || !strings.HasPrefix(cfg.ArgoCD[0].Server, "https://") {
		t.Fatalf("default Argo CD server: %v %v", cfg, err)
	}
	np, ok := o["NetworkPolicy driftfix/driftfix"]
	if !ok {
		t.Fatal("no NetworkPolicy by default")
	}
	var ports []string
	for _, dir := range []string{"ingress", "egress"} {
		for _, r := range drift.List(np, "spec", dir) {
			rule := r.(map[string]any)
			if rule["from"] != nil || rule["to"] != nil {
				t.Errorf("%s rule with peers: %v", dir, rule)
			}
			for _, p := range drift.List(rule, "ports") {
				pm := p.(map[string]any)
				ports = append(ports, fmt.Sprintf("%s %v/%v", dir, pm["port"], pm["protocol"]))
			}
		}
	}
	want := []string{"ingress 8080/TCP", "egress 53/UDP", "egress 53/TCP", "egress 443/TCP", "egress 6443/TCP", "egress 8080/TCP"}
	if !reflect.DeepEqual(ports, want) {
		t.Errorf("NetworkPolicy ports %q, want %q", ports, want)
	}
	if off, err := renderChart(t, map[string]any{"networkPolicy": map[string]any{"enabled": false}}); err != nil {
		t.Fatal(err)
	} else if _, ok := byKey(off)["NetworkPolicy driftfix/driftfix"]; ok {
		t.Error("networkPolicy.enabled=false still renders one")
	}

	for _, tc := range []struct {
		name string
		vals map[string]any
		err  string
	}{
		{"http Argo CD", map[string]any{"argocd": map[string]any{"server": "http://argocd-server.argocd"}}, "https://"},
		{"two replicas sharing a PVC", map[string]any{"replicas": 2, "persistence": map[string]any{"enabled": true}}, "would share one SQLite file"},
	} {
		if _, err := renderChart(t, tc.vals); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: accepted or unclear: %v", tc.name, err)
		}
	}
	plain, err := renderChart(t, map[string]any{"argocd": map[string]any{"server": "http://argocd-server.argocd", "insecurePlaintext": true, "caKey": "ca.crt"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = config.Parse([]byte(drift.Str(byKey(plain)["ConfigMap driftfix/driftfix"], "data", "driftfix.yaml")))
	if err != nil || !cfg.ArgoCD[0].InsecurePlaintext || cfg.ArgoCD[0].CAFile != "/var/run/secrets/driftfix/ca.crt" {
		t.Errorf("insecurePlaintext and caKey: %+v %v", cfg, err)
	}
	if _, err := renderChart(t, map[string]any{"replicas": 2}); err != nil {
		t.Errorf("two replicas, each with its own database (emptyDir), must render: %v", err)
	}
}

// standardLabels are the labels every object and every pod template carries;
// helmOnlyLabels are those of them that only an install by Helm sets.
var (
	standardLabels = []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart"}
	helmOnlyLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by"}
	selectorLabels = []string{"app.kubernetes.io/name", "app.kubernetes.io/instance"}
)

// labelSets returns the labels of an object and of the pods it makes (an
// empty map where it has none).
func labelSets(o drift.Object) []map[string]any {
	paths := [][]string{{"metadata", "labels"}}
	switch drift.Str(o, "kind") {
	case "Deployment":
		paths = append(paths, []string{"spec", "template", "metadata", "labels"})
	case "CronJob":
		paths = append(paths, []string{"spec", "jobTemplate", "spec", "template", "metadata", "labels"})
	}
	var out []map[string]any
	for _, p := range paths {
		m := drift.Map(o, p...)
		if m == nil {
			m = map[string]any{}
		}
		out = append(out, m)
	}
	return out
}

// helmTemplate renders the chart as `helm template driftfix deploy/chart -n
// driftfix` does with no --kube-version: Helm's default capabilities, the
// chart's kubeVersion checked against them as an install checks it, the
// values checked against values.schema.json. It returns the objects and the
// rendered NOTES.txt.
func helmTemplate(t *testing.T, values map[string]any, edit func(*chart.Chart)) ([]drift.Object, string, error) {
	t.Helper()
	ch, err := loader.Load("chart")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(ch)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if kv := ch.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, "", fmt.Errorf("chart requires kubeVersion %s, which is incompatible with Helm's default Kubernetes %s", kv, caps.KubeVersion)
	}
	rv, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "driftfix", Namespace: "driftfix", IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, "", err
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return nil, "", err
	}
	var objs []drift.Object
	notes := ""
	for name, text := range out {
		if strings.HasSuffix(name, "/NOTES.txt") {
			notes = text
			continue
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
			var o map[string]any
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if o != nil {
				objs = append(objs, o)
			}
		}
	}
	return objs, notes, nil
}

// TestChartAsHelmTemplate: with no --kube-version and every values variant,
// the chart renders; every object and pod template carries the standard
// labels with their values; selectors hold only name and instance, which
// match the pods and do not change with the chart's or the app's version; the
// overrides name the objects and the app.
func TestChartAsHelmTemplate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		values   map[string]any
		fullname string // every object's name starts with it
		app      string // app.kubernetes.io/name
	}{
		{name: "default", fullname: "driftfix", app: "driftfix"},
		{name: "full", values: fullValues, fullname: "driftfix", app: "driftfix"},
		{name: "everything on", values: map[string]any{"podDisruptionBudget": map[string]any{"enabled": true}, "serviceMonitor": map[string]any{"enabled": true}, "persistence": map[string]any{"enabled": true}}, fullname: "driftfix", app: "driftfix"},
		{name: "fullnameOverride", values: map[string]any{"fullnameOverride": "drift-bot"}, fullname: "drift-bot", app: "driftfix"},
		{name: "nameOverride", values: map[string]any{"nameOverride": "gitops-drift"}, fullname: "driftfix", app: "gitops-drift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, _, err := helmTemplate(t, tc.values, nil)
			if err != nil {
				t.Fatalf("helm template with no --kube-version: %v", err)
			}
			bumped, _, err := helmTemplate(t, tc.values, func(c *chart.Chart) { c.Metadata.Version, c.Metadata.AppVersion = "9.8.7", "9.8.7" })
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"app.kubernetes.io/name": tc.app, "app.kubernetes.io/instance": "driftfix",
				"app.kubernetes.io/version": "0.1.0", "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "driftfix-0.1.0"}
			kinds, other := map[string]bool{}, byKey(bumped)
			for key, o := range byKey(objs) {
				id := drift.Str(o, "kind") + " " + drift.Str(o, "metadata", "name")
				kinds[drift.Str(o, "kind")] = true
				if n := drift.Str(o, "metadata", "name"); !strings.HasPrefix(n, tc.fullname) {
					t.Errorf("%s: name %q does not start with %q", id, n, tc.fullname)
				}
				for j, labels := range labelSets(o) {
					for _, l := range standardLabels {
						if labels[l] != want[l] {
							t.Errorf("%s (label set %d): %s is %v, want %q", id, j, l, labels[l], want[l])
						}
					}
				}
				sel := selectorOf(o)
				if sel == nil {
					continue
				}
				if len(sel) != len(selectorLabels) || sel["app.kubernetes.io/name"] != tc.app || sel["app.kubernetes.io/instance"] != "driftfix" {
					t.Errorf("%s: selector %v, want name and instance only", id, sel)
				}
				if next := selectorOf(other[key]); !reflect.DeepEqual(next, sel) {
					t.Errorf("%s: selector %v changes to %v with a new chart version", id, sel, next)
				}
			}
			if !kinds["Deployment"] && !kinds["CronJob"] {
				t.Errorf("renders %v: no workload", kinds)
			}
		})
	}
	// The pods a selector picks are this release's pods.
	objs, _, err := helmTemplate(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if drift.Str(o, "kind") != "Deployment" {
			continue
		}
		pod := labelSets(o)[1]
		for k, v := range selectorOf(o) {
			if pod[k] != v {
				t.Errorf("the Deployment selects %s=%v; its pods have %v", k, v, pod[k])
			}
		}
	}
	if _, _, err := helmTemplate(t, map[string]any{"fullnameOverride": "Not_A_Name"}, nil); err == nil {
		t.Error("fullnameOverride Not_A_Name rendered; want the schema to refuse it")
	}
}

// selectorOf returns the labels a Deployment, PDB, NetworkPolicy,
// ServiceMonitor or Service selects on, or nil for other kinds.
func selectorOf(o drift.Object) map[string]any {
	switch drift.Str(o, "kind") {
	case "Deployment", "PodDisruptionBudget", "ServiceMonitor":
		return drift.Map(o, "spec", "selector", "matchLabels")
	case "NetworkPolicy":
		return drift.Map(o, "spec", "podSelector", "matchLabels")
	case "Service":
		return drift.Map(o, "spec", "selector")
	}
	return nil
}

// TestChartNotes: what Helm prints after an install tells the next steps for
// the values given: where the proposals are read in a dry run and the upgrade
// that goes live, the CronJob's own way to read a cycle, and a missing GitHub
// credential.
func TestChartNotes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  map[string]any
		want    []string
		notWant []string
	}{
		{name: "dry run", values: map[string]any{"dryRun": true, "github": map[string]any{"appID": 42}},
			want:    []string{"Dry run", "kubectl -n driftfix logs deploy/driftfix", "helm upgrade driftfix deploy/chart -n driftfix --reuse-values --set dryRun=false", "github-app.pem", "port-forward svc/driftfix 8080"},
			notWant: []string{"No GitHub credential"}},
		{name: "live", values: map[string]any{"github": map[string]any{"tokenMode": true}, "slack": map[string]any{"channel": "#drift"}},
			want:    []string{"Live", "--set dryRun=true", "kubectl -n driftfix logs deploy/driftfix", "github-token", "slack-token", "#drift"},
			notWant: []string{"--set dryRun=false", "No GitHub credential"}},
		{name: "notifications", values: map[string]any{"argocd": map[string]any{"notifications": map[string]any{"enabled": true}}},
			want:    []string{"and driftfix-notify-secret (Argo CD Notifications' shared secret)", "http://driftfix.driftfix.svc:8081/argocd", "argocd-notifications-webhook-patch.yaml"},
			notWant: []string{"of the Secret"}},
		{name: "notifications secretValue", values: map[string]any{"argocd": map[string]any{"notifications": map[string]any{"enabled": true, "secretValue": "s"}}},
			want:    []string{"of the Secret driftfix/driftfix-argocd-notify (key driftfix-notify-secret)"},
			notWant: []string{"Argo CD Notifications' shared secret)"}},
		{name: "cronjob", values: map[string]any{"mode": "cronjob", "dryRun": true, "fullnameOverride": "bot"},
			want:    []string{"kubectl -n driftfix create job --from=cronjob/bot bot-now", "kubectl -n driftfix logs -f job/bot-now", "--set dryRun=false", "No GitHub credential"},
			notWant: []string{"deploy/bot", "svc/bot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, notes, err := helmTemplate(t, tc.values, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("NOTES.txt lacks %q:\n%s", w, notes)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(notes, w) {
					t.Errorf("NOTES.txt says %q:\n%s", w, notes)
				}
			}
		})
	}
}
