package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/predict"
)

// predictRepo makes a Git repository with a plain-directory application on
// main, and in the work tree a change that adds an HPA over a Deployment
// declaring replicas; it returns the directory.
func predictRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	gitAt(t, dir, when, "init", "-q", "-b", "main")
	write("apps/web.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}\n")
	write("apps/web/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: web, image: \"nginx:1.27\"}\n")
	gitAt(t, dir, when, "add", ".")
	gitAt(t, dir, when, "commit", "-q", "-m", "base")
	write("apps/web/hpa.yaml", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n")
	return dir
}

// TestPredictCommand runs driftfix predict on a real repository: the work
// tree's change predicted in each format with exit code 1, a committed head
// and HEAD as base with 0, and every bad input refused with exit code 2 and
// an error that names it.
func TestPredictCommand(t *testing.T) {
	dir := predictRepo(t)
	code, out, stderr := runCLI("predict", "--repo", dir, "--base", "main", "-o", "json")
	if code != exitDrift {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitDrift, stderr)
	}
	var doc struct {
		Applications []string `json:"applications"`
		Predictions  []struct {
			File     string            `json:"file"`
			Line     int               `json:"line"`
			Resource map[string]string `json:"resource"`
			Path     string            `json:"path"`
			Cause    string            `json:"cause"`
			Fix      string            `json:"fix"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(doc.Predictions) != 1 {
		t.Fatalf("predictions: %s", out)
	}
	p := doc.Predictions[0]
	if p.File != "apps/web/deploy.yaml" || p.Line != 6 || p.Resource["kind"] != "Deployment" || p.Resource["name"] != "web" ||
		p.Path != "/spec/replicas" || p.Cause != "hpa-replicas" || p.Fix != "remove-field" {
		t.Errorf("prediction: %+v", p)
	}

	code, out, _ = runCLI("predict", "--repo", dir, "--base", "main")
	if code != exitDrift || !strings.Contains(out, "1 field will differ after sync") || !strings.Contains(out, "apps/web/deploy.yaml:6") {
		t.Errorf("text: exit %d\n%s", code, out)
	}

	code, out, _ = runCLI("predict", "--repo", dir, "--base", "main", "-o", "sarif")
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || code != exitDrift {
		t.Fatalf("sarif: exit %d, %v\n%s", code, err, out)
	}
	if sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || sarif.Runs[0].Tool.Driver.Name != "driftfix" || len(sarif.Runs[0].Tool.Driver.Rules) != 1 ||
		len(sarif.Runs[0].Results) != 1 || sarif.Runs[0].Results[0].RuleID != "hpa-replicas" ||
		sarif.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "apps/web/deploy.yaml" ||
		sarif.Runs[0].Results[0].Locations[0].PhysicalLocation.Region.StartLine != 6 {
		t.Errorf("sarif:\n%s", out)
	}

	// Committed, the change is the head of HEAD~1..HEAD; HEAD against itself adds nothing.
	when := time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)
	gitAt(t, dir, when, "add", ".")
	gitAt(t, dir, when, "commit", "-q", "-m", "hpa")
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "-o", "json"); code != exitDrift || !strings.Contains(out, "hpa-replicas") {
		t.Errorf("HEAD~1..HEAD: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD"); code != exitClean || !strings.Contains(out, "nothing to predict") {
		t.Errorf("HEAD..work tree: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD", "--all"); code != exitDrift || !strings.Contains(out, "predicted at head") {
		t.Errorf("--all: exit %d\n%s\n%s", code, out, stderr)
	}

	notRepo := t.TempDir()
	badCluster := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(badCluster, []byte("- {kind: Namespace, metadata: {name: x}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--base", "main"}, "--repo DIR is required"},
		{[]string{"predict", "--repo", dir}, "--base REV is required"},
		{[]string{"predict", "--repo", dir, "--base", "nosuch"}, "--base nosuch: no such revision"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--head", "nosuch"}, "--head nosuch: no such revision"},
		{[]string{"predict", "--repo", filepath.Join(dir, "nosuch"), "--base", "main"}, "not a directory"},
		{[]string{"predict", "--repo", notRepo, "--base", "main"}, "not a Git repository"},
		{[]string{"predict", "--repo", dir, "--base", "main", "-o", "xml"}, `-o "xml"`},
		{[]string{"predict", "--repo", dir, "--base", "main", "--cluster", "/nonexistent/c.yaml"}, "--cluster /nonexistent/c.yaml"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--cluster", badCluster}, "line 1: object 0 has no apiVersion"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--app", "apps/nosuch"}, "--app apps/nosuch: no such file or directory"},
		{[]string{"predict", "--repo", dir, "--base", "main", "--app", "apps/web/deploy.yaml"}, "holds no Argo CD Application"},
		{[]string{"predict", "--repo", dir, "--base", "main", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	// --app with a directory: an Application is made for it.
	if code, out, stderr := runCLI("predict", "--repo", dir, "--base", "HEAD~1", "--head", "HEAD", "--app", "apps/web"); code != exitDrift || !strings.Contains(out, "hpa-replicas") {
		t.Errorf("--app apps/web: exit %d\n%s\n%s", code, out, stderr)
	}
	// A repository without any Application manifest.
	empty := t.TempDir()
	gitAt(t, empty, when, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(empty, "x.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitAt(t, empty, when, "add", ".")
	gitAt(t, empty, when, "commit", "-q", "-m", "x")
	if code, _, stderr := runCLI("predict", "--repo", empty, "--base", "main"); code != exitUsage || !strings.Contains(stderr, "no Argo CD Application manifest") {
		t.Errorf("no application: exit %d, %s", code, stderr)
	}
}

// TestPredictDocsExample: the table docs/usage.md shows under "Before the
// merge" is what predict prints for the repository it describes.
func TestPredictDocsExample(t *testing.T) {
	dir := predictRepo(t)
	code, out, stderr := runCLI("predict", "--repo", dir, "--base", "main")
	if code != exitDrift {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Before the merge")
	j := strings.Index(s[i:], "```\n")
	k := strings.Index(s[i+j+4:], "```")
	if i < 0 || j < 0 || k < 0 {
		t.Fatal("docs/usage.md has no example under ## Before the merge")
	}
	if doc := s[i+j+4 : i+j+4+k]; doc != out {
		t.Errorf("docs/usage.md shows\n%s\npredict prints\n%s", doc, out)
	}
}

// TestPredictFlagsAndCompletion: predict takes the other commands' flag
// habits (two dashes, a hint for one, help with every flag's default) and
// completes its flags, the -o values, --app paths in the repository and
// --base revisions.
func TestPredictFlagsAndCompletion(t *testing.T) {
	dir := predictRepo(t)
	code, out, _ := runCLI("predict", "--help")
	if code != exitClean || !strings.Contains(out, "--fetch-depth int") || !strings.Contains(out, "(default 1)") || !strings.Contains(out, "text, wide, json or sarif") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
	if code, _, stderr := runCLI("predict", "-repo", dir, "--base", "main"); code != exitUsage || !strings.Contains(stderr, "a long flag takes two dashes: --repo") {
		t.Errorf("-repo: exit %d, %q", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"predict", "--"}, []string{"--repo", "--base", "--head", "--app", "--cluster", "--strict", "--fetch-depth", "--no-fetch", "--output"}, nil},
		{[]string{"predict", "-o", ""}, []string{"text", "wide", "json", "sarif"}, nil},
		{[]string{"predict", "--repo", dir, "--app", "ap"}, []string{"apps/"}, nil},
		{[]string{"predict", "--repo", dir, "--app", "apps/"}, []string{"apps/web/", "apps/web.yaml"}, nil},
		{[]string{"predict", "--repo", dir, "--app", "apps/web/"}, []string{"apps/web/deploy.yaml", "apps/web/hpa.yaml"}, nil},
		{[]string{"predict", "--repo", dir, "--app", "../"}, nil, []string{"../"}},
		{[]string{"predict", "--repo", dir, "--base", "ma"}, []string{"main"}, nil},
	} {
		code, out, stderr := runCLI(append([]string{"__complete"}, tc.args...)...)
		lines := strings.Split(out, "\n")
		names := map[string]bool{}
		for _, l := range lines {
			name, _, _ := strings.Cut(l, "\t")
			names[name] = true
		}
		for _, w := range tc.want {
			if !names[w] {
				t.Errorf("complete %q: no %q in\n%s%s", tc.args, w, out, stderr)
			}
		}
		for _, w := range tc.not {
			for n := range names {
				if strings.HasPrefix(n, w) {
					t.Errorf("complete %q offers %q", tc.args, n)
				}
			}
		}
		if code != exitClean {
			t.Errorf("complete %q: exit %d", tc.args, code)
		}
	}
}

// longResult is a run with long names: two predictions, one application
// not predicted.
func longResult() *predict.Result {
	return &predict.Result{
		Applications: []string{"payments-gateway-production-eu-west-1"},
		Predictions: []predict.Prediction{{
			Application: "payments-gateway-production-eu-west-1", File: "clusters/production/eu-west-1/payments/gateway/base/deployment.yaml", Line: 42,
			Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "payments-production", Name: "payments-gateway-api-server"},
			Path:     drift.Pointer{"spec", "template", "spec", "containers", "0", "resources", "limits", "cpu"},
			Cause:    drift.CauseNormalized, Fix: drift.FixSetValue, FixFile: "clusters/production/eu-west-1/payments/gateway/base/deployment.yaml",
			Git: "1000m", Evidence: []drift.Evidence{drift.Say(drift.EvidenceAPIServer, "the API server stores cpu 1000m as \"1\""), drift.Say(drift.EvidenceAPIServer, "Argo CD compares the stored form")},
		}, {
			Application: "payments-gateway-production-eu-west-1", Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "payments-production", Name: "w"},
			Cause: drift.CauseWebhookMutation, Fix: drift.FixNone, Reason: "not known before it runs",
		}},
		NotPredicted: []predict.NotPredicted{{Application: "charts", Kind: "Application", File: "apps/charts.yaml",
			Reason: "its chart comes from a Helm repository (https://charts.example.com), which predict does not fetch", Needs: "Argo CD at hand: --argocd-server"}},
	}
}

// TestPredictTextFits: the text table fits 100 columns however long the
// names, cutting a file from the left so its line stays; -o wide writes
// every cell whole with the Git value, the evidence and the fix; both list
// the applications not predicted with why and what would let them be.
func TestPredictTextFits(t *testing.T) {
	res := longResult()
	text := string(predictText(res, false, false))
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > predictWidth {
			t.Errorf("a line of %d columns:\n%s", n, l)
		}
	}
	for _, want := range []string{"APPLICATION", "FILE:LINE", "…deployment.yaml:42", "…sources/limits/cpu", "normalized", "webhook-mutation",
		"Not predicted (1):", "  charts (apps/charts.yaml)", "why:    its chart comes from a Helm repository", "needs:  Argo CD at hand: --argocd-server"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "EVIDENCE") {
		t.Errorf("the narrow table has the wide columns:\n%s", text)
	}
	wide := string(predictText(res, false, true))
	for _, want := range []string{"GIT", "EVIDENCE", "FIX", `"1000m"`, "clusters/production/eu-west-1/payments/gateway/base/deployment.yaml:42",
		`the API server stores cpu 1000m as "1"; Argo CD compares the stored form`, "none (not known before it runs)", "Not predicted (1):"} {
		if !strings.Contains(wide, want) {
			t.Errorf("wide lacks %q:\n%s", want, wide)
		}
	}
	// Terminal control characters from the repository are made inert.
	res.NotPredicted[0].Application = "x\x1b[2Jy"
	if s := string(predictText(res, false, false)); strings.Contains(s, "\x1b") {
		t.Errorf("an escape sequence reached the terminal: %q", s)
	}
}

// TestPredictNotPredictedAndStrict: every output lists the applications
// not predicted; --strict exits 2 after the whole report, which says why.
func TestPredictNotPredictedAndStrict(t *testing.T) {
	for _, format := range predictFormats {
		for _, strict := range []bool{false, true} {
			var out, errb bytes.Buffer
			c := &cli{ctx: context.Background(), stdout: &out, stderr: &errb}
			code, err := c.writePredict(format, longResult(), map[string]string{"payments-gateway-production-eu-west-1": "apps/payments.yaml"}, false, strict)
			want := exitDrift
			if strict {
				want = exitUsage
			}
			if code != want || (err != nil) != strict || (strict && !strings.Contains(err.Error(), "--strict: 1 application was not predicted")) {
				t.Errorf("%s strict=%v: exit %d, %v", format, strict, code, err)
			}
			switch format {
			case "json":
				var doc predictDoc
				if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
					t.Fatalf("json: %v\n%s", err, out.String())
				}
				if len(doc.NotPredicted) != 1 || doc.NotPredicted[0].Application != "charts" || doc.NotPredicted[0].Needs == "" || len(doc.Predictions) != 2 ||
					(doc.Error != "") != strict {
					t.Errorf("json strict=%v:\n%s", strict, out.String())
				}
			case "sarif":
				_, inv := checkSARIF(t, out.Bytes())
				if len(inv.Notifications) != 1+btoi(strict) || inv.Notifications[0].Level != "warning" || !strings.Contains(inv.Notifications[0].Message.Text, "charts was not predicted") {
					t.Errorf("sarif strict=%v: %+v", strict, inv)
				}
			default:
				if !strings.Contains(out.String(), "Not predicted (1):") || !strings.Contains(out.String(), "APPLICATION") {
					t.Errorf("%s strict=%v:\n%s", format, strict, out.String())
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPredictFailureDocuments: with -o json or -o sarif a run that fails,
// for any reason (a flag cobra refuses, an argument, a missing revision),
// still writes a whole document with the error, and exits 2; text writes
// nothing to stdout.
func TestPredictFailureDocuments(t *testing.T) {
	dir := predictRepo(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--repo", dir, "--base", "nosuch", "--no-fetch"}, "--base nosuch: no such revision"},
		{[]string{"--repo", dir, "--base", "main", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"--repo", dir, "--base", "main", "extra"}, `unexpected argument "extra"`},
		{[]string{"--base", "main"}, "--repo DIR is required"},
		{[]string{"--repo", dir, "--base", "main", "--app", "apps/nosuch"}, "--app apps/nosuch"},
	} {
		for _, format := range []string{"json", "sarif", "text"} {
			args := append([]string{"predict", "-o", format}, tc.args...)
			code, out, stderr := runCLI(args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
			}
			switch format {
			case "json":
				var doc predictDoc
				if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.Contains(doc.Error, tc.want) || doc.Predictions == nil || doc.NotPredicted == nil {
					t.Errorf("%q: json %v\n%s", args, err, out)
				}
			case "sarif":
				results, inv := checkSARIF(t, []byte(out))
				if inv.ExecutionSuccessful || len(results) != 0 || len(inv.Notifications) != 1 || !strings.Contains(inv.Notifications[0].Message.Text, tc.want) {
					t.Errorf("%q: sarif %+v", args, inv)
				}
			default:
				if out != "" {
					t.Errorf("%q: stdout %q", args, out)
				}
			}
		}
	}
}

// TestPredictTimeout runs driftfix predict on a change whose Jsonnet runs
// for minutes, with --timeout 2s: the render is killed at the budget, the
// application is listed as not predicted naming --timeout (exit 2 with
// --strict), and a --timeout of zero is refused.
func TestPredictTimeout(t *testing.T) {
	dir := predictRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, "apps/slow"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"apps/slow.yaml":         "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: slow, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: https://git.example.com/shop.git, path: apps/slow, targetRevision: main}\n",
		"apps/slow/main.jsonnet": "local fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2);\n{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'slow'}, data: {n: std.toString(fib(40))}}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	code, out, stderr := runCLI("predict", "--repo", dir, "--base", "main", "--timeout", "2s", "--strict", "-o", "json")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("predict with --timeout 2s took %v", took)
	}
	var doc predictDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var slow *predict.NotPredicted
	for i := range doc.NotPredicted {
		if doc.NotPredicted[i].Application == "slow" {
			slow = &doc.NotPredicted[i]
		}
	}
	if code != exitUsage || slow == nil || !strings.Contains(slow.Reason, "--timeout") || !strings.Contains(slow.Reason, "2s") || !strings.Contains(slow.Needs, "--timeout") {
		t.Errorf("exit %d, not predicted %+v, stderr %q; want slow not predicted for --timeout", code, doc.NotPredicted, stderr)
	}
	if code, _, stderr := runCLI("predict", "--repo", dir, "--base", "main", "--timeout", "0s"); code != exitUsage || !strings.Contains(stderr, "--timeout 0s") {
		t.Errorf("--timeout 0s: exit %d, %q", code, stderr)
	}
}
