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

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
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

func TestChartAndKustomizeRenderTheSameObjects(t *testing.T) {
	chart, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	kust, err := render.Kustomize(files(t, "kustomize"), "kustomize")
	if err != nil {
		t.Fatal(err)
	}
	c, k := byKey(chart), byKey(kust)
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

// TestChartKubeVersionFloor: the chart's kubeVersion admits the Kubernetes
// versions the README says are supported, including providers' versions such
// as v1.25.16-eks-1234, and refuses older ones, by the check `helm install`
// and `helm template --kube-version` make (chartutil.IsCompatibleRange on the
// chart's kubeVersion; Helm's action package would add modules).
func TestChartKubeVersionFloor(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Kubernetes 1\.(\d+) or newer`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README states no supported Kubernetes version (\"Kubernetes 1.N or newer\")")
	}
	var minor int
	fmt.Sscan(string(m[1]), &minor)
	ch, err := loader.Load("chart")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{fmt.Sprintf("v1.%d.0", minor), true},
		{fmt.Sprintf("v1.%d.16-eks-1234", minor), true},
		{"v1.37.2", true}, // what client-go in go.mod is built for
		{fmt.Sprintf("v1.%d.17", minor-1), false},
		{"v1.20.0", false},
	} {
		kv, err := chartutil.ParseKubeVersion(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if got := chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, kv.String()); got != tc.ok {
			t.Errorf("kubeVersion %q admits Kubernetes %s: %v, want %v (the README: Kubernetes 1.%d or newer)", ch.Metadata.KubeVersion, tc.version, got, tc.ok, minor)
		}
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

// TestGitHubAppManifest: the App asks for the permissions driftfix uses
// and nothing else, and for no webhook.
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
	want := map[string]string{"contents": "write", "pull_requests": "write", "checks": "write", "metadata": "read", "issues": "write"}
	if !reflect.DeepEqual(m.Permissions, want) || m.Public || len(m.Events) != 0 || m.Hook["active"] != false || m.Name == "" ||
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
