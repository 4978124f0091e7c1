package remediations_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// gitRepo commits files into a new Git repository and returns its directory
// and the commit.
func gitRepo(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for f, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "layout"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil && args[0] == "init" {
			continue
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// readCommit reads a commit of a local repository as the bot reads one.
func readCommit(t *testing.T, dir, rev string) remediations.Repo {
	t.Helper()
	files, err := gitrepo.Files(context.Background(), "file://"+filepath.ToSlash(dir), rev, gitrepo.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	repo := remediations.Repo{}
	for k, v := range files {
		repo[k] = []byte(v)
	}
	return repo
}

// TestIgnoreWhereGenerated plans the fix of each generating layout (the
// ignore rule of an application no file of its repository defines; a field
// a vendored copy sets) committed to a real Git repository: the plan is
// verified only with an edit in the generating source (never in the file
// others share or a generator rewrites), and once that edit is committed,
// planning again changes nothing.
func TestIgnoreWhereGenerated(t *testing.T) {
	cases := []struct {
		scenario  string
		edits     string // the one file the rule goes into
		verified  bool
		untouched []string
		refusal   string        // for a plan that is an instruction: what it says
		kind      drift.FixKind // the plan's kind; ignore-difference when empty
	}{
		{scenario: "appset-ignore-template", edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-ignore-templatepatch", edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-ignore-element", edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-ignore-gitdirs", edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-ignore-instruction", refusal: "cannot tell which resources Application payments manages"},
		{scenario: "appset-ignore-gitfiles-json", edits: "config/orders.json", verified: true, untouched: []string{"appsets/platform.yaml", "config/payments.json"}},
		{scenario: "appset-ignore-gitfiles-yaml", edits: "config/orders.yaml", verified: true, untouched: []string{"appsets/platform.yaml", "config/payments.yaml"}},
		{scenario: "appset-ignore-identity", edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-narrow-identity", kind: drift.FixNarrowIgnore, edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-narrow-element", kind: drift.FixNarrowIgnore, edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-narrow-shared", kind: drift.FixNarrowIgnore, refusal: "on Application payments it matches Deployment shop/payments"},
		{scenario: "appset-ignore-identity-cluster", edits: "appsets/platform.yaml", verified: true},
		{scenario: "appset-ignore-samename", refusal: "Application orders-west, which the set also makes, manages Deployment shop/orders too"},
		{scenario: "overlay-ignore-patch", edits: "apps/overlays/prod/orders.yaml", verified: true, untouched: []string{"apps/base/orders.yaml"}},
		{scenario: "overlay-ignore-json6902", edits: "apps/overlays/prod/orders-ops.yaml", verified: true, untouched: []string{"apps/base/orders.yaml"}},
		{scenario: "appofapps-chart-ignore-values", edits: "charts/apps/values.yaml", verified: true, untouched: []string{"charts/apps/templates/apps.yaml"}},
		{scenario: "appofapps-chart-ignore-template", edits: "charts/apps/templates/orders.yaml", verified: true, untouched: []string{"charts/apps/templates/payments.yaml"}},
		{scenario: "vendored-upstream-patch", kind: drift.FixRemoveField, edits: "deploy/web/local.yaml", verified: true, untouched: []string{"deploy/web/upstream.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.scenario, func(t *testing.T) {
			snap, err := drift.LoadSnapshot(filepath.Join("testdata", tc.scenario+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			rev := gitRepo(t, dir, remediations.RepoFromSnapshot(snap))
			repo := readCommit(t, dir, rev)
			_, plans, err := pipeline.Fix(snap, repo, drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			kind := tc.kind
			if kind == "" {
				kind = drift.FixIgnoreDifference
			}
			p := planOf(t, plans, kind)
			for _, q := range plans {
				if q.Verified() && len(q.Edits) == 0 {
					t.Errorf("%s plan for %s says verified with no edit", q.Kind, q.Resource)
				}
			}
			if p.Verified() != tc.verified {
				t.Fatalf("verified = %v, want %v (dropped %q, instructions %q)", p.Verified(), tc.verified, p.Dropped, p.Instructions)
			}
			if !tc.verified {
				if len(p.Edits) != 0 || !strings.Contains(p.Instructions, tc.refusal) {
					t.Fatalf("want an instruction saying %q, got edits %d and %q", tc.refusal, len(p.Edits), p.Instructions)
				}
				return
			}
			if len(p.Edits) != 1 || p.Edits[0].File != tc.edits {
				t.Fatalf("edits %v, want %s only", editFiles(p), tc.edits)
			}
			for _, e := range remediations.Files(plans) {
				for _, u := range tc.untouched {
					if e.File == u {
						t.Errorf("%s is edited; it must not be", u)
					}
				}
			}
			// Commit the edits and plan on the new commit: nothing to change.
			after := map[string][]byte{}
			for _, e := range remediations.Files(plans) {
				after[e.File] = e.After
			}
			rev2 := gitRepo(t, dir, after)
			if rev2 == rev {
				t.Fatal("the edit made no commit")
			}
			_, again, err := pipeline.Fix(snap, readCommit(t, dir, rev2), drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if files := remediations.Files(again); len(files) != 0 {
				t.Errorf("planning on the fixed commit changes %s again", files[0].File)
			}
			if q := planOf(t, again, kind); q.Verified() || !strings.Contains(q.Dropped, "already") {
				t.Errorf("on the fixed commit the plan is not the repository's fix already: dropped %q", q.Dropped)
			}
		})
	}
}

func planOf(t *testing.T, plans []remediations.Plan, kind drift.FixKind) remediations.Plan {
	t.Helper()
	for _, p := range plans {
		if p.Kind == kind {
			return p
		}
	}
	t.Fatalf("no %s plan among %d", kind, len(plans))
	return remediations.Plan{}
}

func editFiles(p remediations.Plan) []string {
	var out []string
	for _, e := range p.Edits {
		out = append(out, e.File)
	}
	return out
}

// TestAppSetBlastRadius checks that an edit of a Kustomize base is refused
// when an Application an ApplicationSet makes (no file holds it) renders
// the base too, and allowed when no other Application reads it.
func TestAppSetBlastRadius(t *testing.T) {
	snap, err := drift.LoadSnapshot("testdata/appset-shared-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		change  map[string]string // files replaced in the repository
		dropped string            // "" when the plan must verify
	}{
		{name: "staging shares the base", dropped: "Application shop-staging (argocd/shop.yaml, made by ApplicationSet shop"},
		{name: "staging has its own manifests", change: map[string]string{
			"apps/shop/overlays/staging/kustomization.yaml": "resources:\n  - web.yaml\n",
			"apps/shop/overlays/staging/web.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: staging-web\nspec:\n  replicas: 1\n",
		}},
		{name: "the set makes only prod", change: map[string]string{
			"argocd/shop.yaml": strings.Replace(string(remediations.RepoFromSnapshot(snap)["argocd/shop.yaml"]), "apps/shop/overlays/*", "apps/shop/overlays/prod", 1),
		}},
		{name: "a parent's chart makes staging", change: map[string]string{
			"argocd/shop.yaml": strings.Replace(string(remediations.RepoFromSnapshot(snap)["argocd/shop.yaml"]), "apps/shop/overlays/*", "apps/shop/overlays/prod", 1),
			"argocd/root.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: root, namespace: argocd}\nspec:\n  project: default\n" +
				"  destination: {server: https://kubernetes.default.svc, namespace: argocd}\n  source: {repoURL: https://git.example.com/shop.git, path: charts/root, targetRevision: main}\n",
			"charts/root/Chart.yaml":  "apiVersion: v2\nname: root\nversion: 1.0.0\n",
			"charts/root/values.yaml": "envs: [staging]\n",
			"charts/root/templates/apps.yaml": "{{- range .Values.envs }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: shop-{{ . }}\n  namespace: argocd\nspec:\n  project: default\n" +
				"  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  source: {repoURL: https://git.example.com/shop.git, path: apps/shop/overlays/{{ . }}, targetRevision: main}\n{{- end }}\n",
		}, dropped: "Application shop-staging (argocd/root.yaml, rendered by Application root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := remediations.RepoFromSnapshot(snap)
			for f, c := range tc.change {
				repo[f] = []byte(c)
			}
			_, plans, err := pipeline.Fix(snap, repo, drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(plans) != 1 {
				t.Fatalf("%d plans, want 1", len(plans))
			}
			p := plans[0]
			if tc.dropped == "" {
				if !p.Verified() {
					t.Fatalf("plan not verified: %s", p.Dropped)
				}
				return
			}
			if p.Verified() || !strings.Contains(p.Dropped, tc.dropped) {
				t.Fatalf("dropped %q, want it to name %q", p.Dropped, tc.dropped)
			}
		})
	}
}

// TestVendoredCopyNeverEdited: a field a vendored upstream copy sets is
// changed in the repository's own patch; without one, nothing is edited
// and the plan says why, naming the copy and what writes it.
func TestVendoredCopyNeverEdited(t *testing.T) {
	snap, err := drift.LoadSnapshot("testdata/vendored-upstream-patch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		change  map[string]string
		edits   string // the one file edited; "" when the plan is dropped
		dropped string
	}{
		{name: "own patch", edits: "deploy/web/local.yaml"},
		{name: "no own patch", change: map[string]string{"deploy/web/kustomization.yaml": "resources:\n  - upstream.yaml\n"},
			dropped: "deploy/web/upstream.yaml (Makefile writes it), a vendored copy"},
		{name: "not vendored", change: map[string]string{"Makefile": "test:\n\tgo test ./...\n"}, edits: "deploy/web/upstream.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := remediations.RepoFromSnapshot(snap)
			for f, c := range tc.change {
				repo[f] = []byte(c)
			}
			_, plans, err := pipeline.Fix(snap, repo, drift.Sensitivity{}, now, render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(plans) != 1 {
				t.Fatalf("%d plans, want 1", len(plans))
			}
			p := plans[0]
			if tc.dropped != "" {
				if p.Verified() || len(p.Edits) != 0 || !strings.Contains(p.Dropped, tc.dropped) {
					t.Fatalf("dropped %q with %d edits, want it to name %q", p.Dropped, len(p.Edits), tc.dropped)
				}
				return
			}
			if !p.Verified() || len(p.Edits) != 1 || p.Edits[0].File != tc.edits {
				t.Fatalf("verified %v, edits %v (dropped %q), want %s", p.Verified(), editFiles(p), p.Dropped, tc.edits)
			}
		})
	}
}

// TestIdentityFromCluster: an Application of the set whose source is not at
// hand is known by its copy in the cluster; when that copy lists the
// drifting resource, the shared rule would hide its drift too, and the plan
// stays an instruction naming it.
func TestIdentityFromCluster(t *testing.T) {
	snap, err := drift.LoadSnapshot("testdata/appset-ignore-identity-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range snap.Cluster {
		if drift.Str(o, "kind") == "Application" {
			// payments runs on another cluster: the same Deployment there is
			// not shared with orders, but a rule in the template would hide it
			drift.Map(o, "spec", "destination")["server"] = "https://west.example.com"
			drift.Map(o, "status")["resources"] = append(drift.List(o, "status", "resources"), map[string]any{"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "orders"})
		}
	}
	_, plans, err := pipeline.Fix(snap, remediations.RepoFromSnapshot(snap), drift.Sensitivity{}, now, render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p := planOf(t, plans, drift.FixIgnoreDifference)
	if len(p.Edits) != 0 || !strings.Contains(p.Instructions, "Application payments, which the set also makes, manages Deployment shop/orders too") {
		t.Errorf("want an instruction naming payments, got %d edits and %q", len(p.Edits), p.Instructions)
	}
}
