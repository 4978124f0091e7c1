package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/predict/sariftest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkSARIF validates b against the SARIF 2.1.0 schema and returns the
// parts the tests read.
func checkSARIF(t *testing.T, b []byte) (results []sarifResultDoc, inv sarifInvocationDoc) {
	t.Helper()
	sch, err := sariftest.Schema()
	if err != nil {
		t.Fatalf("load the SARIF schema: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v\n%s", err, b)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("SARIF does not validate against the 2.1.0 schema: %v\n%s", err, b)
	}
	var doc struct {
		Runs []struct {
			Invocations []sarifInvocationDoc `json:"invocations"`
			Results     []sarifResultDoc     `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Runs) != 1 || len(doc.Runs[0].Invocations) != 1 {
		t.Fatalf("want one run and one invocation (%v):\n%s", err, b)
	}
	// What code scanning needs of each result beyond the schema.
	for i, r := range doc.Runs[0].Results {
		if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" || r.Locations[0].PhysicalLocation.Region == nil ||
			r.Locations[0].PhysicalLocation.Region.StartLine < 1 || len(r.PartialFingerprints) == 0 {
			t.Fatalf("result %d lacks a file, a line or a fingerprint:\n%s", i, b)
		}
	}
	return doc.Runs[0].Results, doc.Runs[0].Invocations[0]
}

type sarifResultDoc struct {
	RuleID    string `json:"ruleId"`
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region *struct {
				StartLine int `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifInvocationDoc struct {
	ExecutionSuccessful bool `json:"executionSuccessful"`
	Notifications       []struct {
		Level   string `json:"level"`
		Message struct {
			Text string `json:"text"`
		} `json:"message"`
	} `json:"toolExecutionNotifications"`
}

// prRepos makes the repositories of a pull request on GitHub: a bare
// "origin" whose main has two commits (base0, then base1: a plain-directory
// application), a tag v1 at base1, and refs/pull/1/merge, the merge of a
// pull request that adds an HPA over the Deployment that declares replicas.
func prRepos(t *testing.T) (origin string, c prCommits) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	src := filepath.Join(root, "src")
	origin = filepath.Join(root, "origin.git")
	when := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	write := func(name, content string) {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	gitAt(t, src, when, "init", "-q", "-b", "main")
	write("apps/web.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: \"file://"+filepath.ToSlash(origin)+"\", path: apps/web, targetRevision: main}\n")
	write("apps/web/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: web, image: \"nginx:1.27\"}\n")
	gitAt(t, src, when, "add", ".")
	gitAt(t, src, when, "commit", "-q", "-m", "base0")
	c.base0 = gitAt(t, src, when, "rev-parse", "HEAD")
	write("README.md", "shop\n")
	gitAt(t, src, when, "add", ".")
	gitAt(t, src, when, "commit", "-q", "-m", "base1")
	c.base1 = gitAt(t, src, when, "rev-parse", "HEAD")
	gitAt(t, src, when, "tag", "v1")
	gitAt(t, src, when, "checkout", "-q", "-b", "pr")
	write("apps/web/hpa.yaml", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 5\n")
	gitAt(t, src, when, "add", ".")
	gitAt(t, src, when, "commit", "-q", "-m", "add an HPA")
	c.pr = gitAt(t, src, when, "rev-parse", "HEAD")
	gitAt(t, src, when, "checkout", "-q", "--detach", "main")
	gitAt(t, src, when, "merge", "-q", "--no-ff", "-m", "Merge pr into main", "pr")
	c.merge = gitAt(t, src, when, "rev-parse", "HEAD")
	gitAt(t, src, when, "checkout", "-q", "main")
	gitAt(t, root, when, "clone", "-q", "--bare", src, origin)
	gitAt(t, origin, when, "update-ref", "refs/pull/1/merge", c.merge)
	return origin, c
}

type prCommits struct{ base0, base1, pr, merge string }

// actionsCheckout makes the checkout actions/checkout makes for a pull
// request: git init, the remote, a depth-1 fetch of the merge commit into
// refs/remotes/pull/1/merge and a detached HEAD there; no local branch.
func actionsCheckout(t *testing.T, origin, merge string) string {
	t.Helper()
	dir := t.TempDir()
	when := time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)
	gitAt(t, dir, when, "init", "-q")
	gitAt(t, dir, when, "remote", "add", "origin", "file://"+filepath.ToSlash(origin))
	gitAt(t, dir, when, "fetch", "-q", "--no-tags", "--prune", "--no-recurse-submodules", "--depth=1", "origin", "+"+merge+":refs/remotes/pull/1/merge")
	gitAt(t, dir, when, "checkout", "-q", "--force", "--detach", "refs/remotes/pull/1/merge")
	return dir
}

// has says whether the clone holds a commit.
func has(dir, commit string) bool {
	cmd := exec.Command("git", "cat-file", "-e", commit+"^{commit}")
	cmd.Dir = dir
	return cmd.Run() == nil
}

// refsOf lists the clone's refs.
func refsOf(t *testing.T, dir string) []string {
	out := gitAt(t, dir, time.Now(), "for-each-ref", "--format=%(refname)")
	return strings.Fields(out)
}

// shellWords splits a command line as a shell would, for the quoting the
// docs use (double and single quotes), up to a redirection.
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case r == '>':
			if in {
				out = append(out, cur.String())
			}
			return out
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// docsPredictStep is the command of the predict step docs/usage.md shows
// for GitHub Actions without the action.
func docsPredictStep(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*- run: (driftfix predict .*)$`).FindAllStringSubmatch(string(b), -1)
	if len(m) != 1 {
		t.Fatalf("docs/usage.md shows %d `- run: driftfix predict` steps, want 1", len(m))
	}
	return m[0][1]
}

// actionStep is the run script of the step of action.yml with the id.
func actionStep(t *testing.T, id string) (run string, env map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				ID    string            `yaml:"id"`
				Name  string            `yaml:"name"`
				Uses  string            `yaml:"uses"`
				Shell string            `yaml:"shell"`
				Run   string            `yaml:"run"`
				Env   map[string]string `yaml:"env"`
				If    string            `yaml:"if"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs.using %q, want composite", a.Runs.Using)
	}
	var uses []string
	for _, s := range a.Runs.Steps {
		uses = append(uses, s.Uses)
	}
	if !slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, "github/codeql-action/upload-sarif@") }) {
		t.Errorf("action.yml uploads no SARIF: steps use %q", uses)
	}
	for _, s := range a.Runs.Steps {
		// Inputs reach a script through env only (a value in the script
		// itself would be run as shell).
		if strings.Contains(s.Run, "${{") {
			t.Errorf("action.yml step %q puts an expression in its script: pass it through env", s.Name)
		}
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("action.yml step %q has shell %q: a composite action's run step names bash", s.Name, s.Shell)
		}
	}
	for _, s := range a.Runs.Steps {
		if s.ID != id && s.Name != id {
			continue
		}
		env := map[string]string{}
		for k, v := range s.Env {
			if m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`).FindStringSubmatch(v); m != nil {
				v = a.Inputs[m[1]].Default
			}
			env[k] = v
		}
		return s.Run, env
	}
	t.Fatalf("action.yml has no step %q", id)
	return "", nil
}

// flagsOf are the flags of a predict command line, with their values when
// they are literal ("-o sarif").
func flagsOf(words []string) []string {
	var out []string
	for i, w := range words {
		if !strings.HasPrefix(w, "-") {
			continue
		}
		f := w
		if w == "-o" && i+1 < len(words) {
			f += " " + words[i+1]
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// TestPredictInPullRequestCheckout reproduces the checkout actions/checkout
// makes for a pull request (shallow, detached at the merge commit, no local
// branch, the base not in the clone) and runs the step docs/usage.md shows
// and the action's own step in it: each succeeds, fetches only the base
// commit, and writes valid, non-empty SARIF at the line that declares the
// drift. Every other form of --base a CI uses works there too, and what
// cannot work says what to do.
func TestPredictInPullRequestCheckout(t *testing.T) {
	origin, c := prRepos(t)

	t.Run("the documented step", func(t *testing.T) { checkDocumentedPredictStep(t, origin, c) })
	t.Run("the action's step", func(t *testing.T) { checkActionPredictStep(t, origin, c) })

	for _, tc := range []struct {
		name     string
		prepare  []string // a git command run in the checkout first
		args     []string
		code     int
		fetched  []string // commits the clone holds after
		absent   []string // commits it still lacks
		refs     []string // refs it has after
		inStderr string
	}{
		{name: "origin/main, fetched into its remote-tracking ref", args: []string{"--base", "origin/main"}, code: exitDrift,
			fetched: []string{c.base1}, absent: []string{c.base0}, refs: []string{"refs/remotes/origin/main", "refs/remotes/pull/1/merge"}},
		{name: "a branch name known only as origin/NAME", args: []string{"--base", "main", "--no-fetch"}, code: exitDrift,
			prepare: []string{"fetch", "-q", "--depth=1", "origin", "+refs/heads/main:refs/remotes/origin/main"}, fetched: []string{c.base1}},
		{name: "a branch name fetched", args: []string{"--base", "main"}, code: exitDrift, fetched: []string{c.base1}, absent: []string{c.base0},
			refs: []string{"refs/remotes/origin/main", "refs/remotes/pull/1/merge"}},
		{name: "a tag", args: []string{"--base", "v1"}, code: exitDrift, fetched: []string{c.base1}, absent: []string{c.base0},
			refs: []string{"refs/remotes/pull/1/merge", "refs/tags/v1"}},
		{name: "the merge commit's first parent", args: []string{"--base", "HEAD^"}, code: exitDrift, fetched: []string{c.base1}, absent: []string{c.base0, c.pr}},
		{name: "two commits back needs a deeper fetch", args: []string{"--base", "HEAD~2"}, code: exitUsage, absent: []string{c.base1, c.base0},
			inStderr: "--fetch-depth allows 1: give --fetch-depth 2"},
		{name: "two commits back with --fetch-depth 2", args: []string{"--base", "HEAD~2", "--fetch-depth", "2"}, code: exitDrift, fetched: []string{c.base1, c.base0}},
		{name: "the pull request's head commit as --head", args: []string{"--base", c.base1, "--head", c.pr}, code: exitDrift,
			fetched: []string{c.base1, c.pr}, absent: []string{c.base0}, refs: []string{"refs/remotes/pull/1/merge"}},
		{name: "--no-fetch", args: []string{"--base", c.base1, "--no-fetch"}, code: exitUsage, absent: []string{c.base1}, inStderr: "--no-fetch"},
		{name: "a branch the remote lacks", args: []string{"--base", "nosuch"}, code: exitUsage,
			inStderr: "--base nosuch: no such revision in"},
		{name: "a short hash", args: []string{"--base", c.base1[:10]}, code: exitUsage, inStderr: "give the whole commit hash"},
		{name: "another remote", args: []string{"--base", "main", "--remote", "upstream"}, code: exitUsage, inStderr: `no remote "upstream"`},
		{name: "an option as a revision", args: []string{"--base=--upload-pack=touch /tmp/x"}, code: exitUsage, inStderr: "no such revision"},
		{name: "a refspec as a revision", args: []string{"--base", "main:refs/heads/evil"}, code: exitUsage, inStderr: "no such revision",
			refs: []string{"refs/remotes/pull/1/merge"}},
		{name: "--fetch-depth 0", args: []string{"--base", "main", "--fetch-depth", "0"}, code: exitUsage, inStderr: "--fetch-depth 0: want 1 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := actionsCheckout(t, origin, c.merge)
			if tc.prepare != nil {
				gitAt(t, dir, time.Now(), tc.prepare...)
			}
			args := append([]string{"predict", "--repo", dir, "-o", "sarif"}, tc.args...)
			code, out, stderr := runCLI(args...)
			if code != tc.code || !strings.Contains(stderr, tc.inStderr) {
				t.Fatalf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.inStderr)
			}
			results, inv := checkSARIF(t, []byte(out))
			switch {
			case tc.code == exitUsage && (inv.ExecutionSuccessful || len(inv.Notifications) != 1 || inv.Notifications[0].Level != "error" ||
				!strings.Contains(stderr, inv.Notifications[0].Message.Text)):
				t.Errorf("a failed run's SARIF: %+v", inv)
			case tc.code == exitDrift && len(results) != 1:
				t.Errorf("results %d, want 1", len(results))
			}
			for _, h := range tc.fetched {
				if !has(dir, h) {
					t.Errorf("the clone lacks %s", h[:12])
				}
			}
			for _, h := range tc.absent {
				if has(dir, h) {
					t.Errorf("the clone holds %s, which was not needed", h[:12])
				}
			}
			if tc.refs != nil {
				if refs := refsOf(t, dir); !slices.Equal(refs, tc.refs) {
					t.Errorf("refs %q, want %q", refs, tc.refs)
				}
			}
		})
	}
}

// checkDocumentedPredictStep runs the predict step the docs show, in a
// checkout as actions/checkout makes it of the pull request's merge commit
// in origin: it fetches the base commit alone, once, and predicts the drift.
func checkDocumentedPredictStep(t *testing.T, origin string, c prCommits) {
	dir := actionsCheckout(t, origin, c.merge)
	if has(dir, c.base1) {
		t.Fatal("the checkout already holds the base: not the layout actions/checkout makes")
	}
	line := docsPredictStep(t)
	line = strings.ReplaceAll(line, "${{ github.event.pull_request.base.sha }}", c.base1)
	line = strings.ReplaceAll(line, "${{ github.base_ref }}", "main")
	args := shellWords(line)
	if len(args) < 2 || args[0] != "driftfix" || strings.Contains(line, "${{") {
		t.Fatalf("the documented step %q is not a driftfix command this test can run", line)
	}
	t.Chdir(dir)
	code, out, stderr := runCLI(args[1:]...)
	if code != exitDrift {
		t.Fatalf("%s: exit %d, want %d (drift predicted)\n%s", line, code, exitDrift, stderr)
	}
	results, inv := checkSARIF(t, []byte(out))
	if !inv.ExecutionSuccessful || len(results) != 1 || results[0].RuleID != "hpa-replicas" ||
		results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "apps/web/deploy.yaml" ||
		results[0].Locations[0].PhysicalLocation.Region == nil || results[0].Locations[0].PhysicalLocation.Region.StartLine != 6 {
		t.Errorf("SARIF:\n%s", out)
	}
	// Only the base commit came: not its parent, not the pull request's
	// own history, and no ref was written.
	if !has(dir, c.base1) || has(dir, c.base0) || has(dir, c.pr) {
		t.Errorf("fetched more or less than the base: base1 %v, base0 %v, pr %v", has(dir, c.base1), has(dir, c.base0), has(dir, c.pr))
	}
	if refs := refsOf(t, dir); !slices.Equal(refs, []string{"refs/remotes/pull/1/merge"}) {
		t.Errorf("refs after the run: %q", refs)
	}
	if !strings.Contains(stderr, "fetched "+c.base1+" from origin, 1 commit deep") {
		t.Errorf("stderr does not say what was fetched: %q", stderr)
	}
	// A second run fetches nothing.
	if code, _, stderr := runCLI(args[1:]...); code != exitDrift || strings.Contains(stderr, "fetched") {
		t.Errorf("second run: exit %d, %q", code, stderr)
	}
}

// checkActionPredictStep runs the driftfix action's predict step with bash in
// such a checkout: it runs predict as the docs show, writes its exit code
// and SARIF; the result step then fails on 2 always, on 1 only when asked.
func checkActionPredictStep(t *testing.T, origin string, c prCommits) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	dir := actionsCheckout(t, origin, c.merge)
	run, env := actionStep(t, "predict")
	docs := flagsOf(shellWords(docsPredictStep(t)))
	var cmdLine string
	for _, l := range strings.Split(run, "\n") {
		if strings.Contains(l, " predict --repo ") {
			cmdLine = l
		}
	}
	if got := flagsOf(shellWords(cmdLine)); !slices.Equal(got, docs) {
		t.Errorf("the action runs predict with %q, the docs show %q", got, docs)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outputs := filepath.Join(t.TempDir(), "outputs")
	sh := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", run)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "DRIFTFIX_TEST_MAIN=1", "DRIFTFIX_BIN="+exe, "GITHUB_OUTPUT="+outputs,
		"EVENT_BASE="+c.base1, "EVENT_BEFORE=")
	for k, v := range env {
		if k != "EVENT_BASE" && k != "EVENT_BEFORE" {
			sh.Env = append(sh.Env, k+"="+v)
		}
	}
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the action's predict step failed: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(outputs)
	if strings.TrimSpace(string(got)) != "exit-code=1" {
		t.Errorf("outputs %q, want exit-code=1", got)
	}
	sarif, err := os.ReadFile(filepath.Join(dir, env["SARIF_FILE"]))
	if err != nil {
		t.Fatal(err)
	}
	if results, _ := checkSARIF(t, sarif); len(results) != 1 {
		t.Errorf("the action's SARIF has %d results, want 1", len(results))
	}
	if !has(dir, c.base1) || has(dir, c.base0) {
		t.Error("the action's step fetched more or less than the base commit")
	}

	// The result step fails on 2 always, on 1 only when asked.
	result, _ := actionStep(t, "Result")
	for _, tc := range []struct {
		code, fail string
		want       int
	}{{"0", "false", 0}, {"1", "false", 0}, {"1", "true", 1}, {"2", "false", 2}, {"", "false", 2}} {
		sh := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", result)
		sh.Env = append(os.Environ(), "CODE="+tc.code, "FAIL_ON_DRIFT="+tc.fail)
		err := sh.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		if code != tc.want {
			t.Errorf("result step with exit code %q, fail-on-drift %s: %d, want %d", tc.code, tc.fail, code, tc.want)
		}
	}
}
