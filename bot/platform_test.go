package bot

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

var update = flag.Bool("update", false, "rewrite the golden files of the platform pull request tests")

const platformConfig = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack: {tokenEnv: S, channel: "#gitops"}
policy: {labels: [driftfix], dashboard: {enabled: true}}
`

const webhookSnapshot = "remediations/testdata/app-ignore-webhook.yaml"

// The three ways a platform repository declares argocd-cm, with comments
// that must survive the edit.
var argocdCMStyles = []struct{ name, file, content string }{
	{"manifest", "argocd/argocd-cm.yaml", `# Argo CD's settings. Owned by the platform team; reviewed by #platform.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/part-of: argocd
data:
  # resource tracking by annotation, see ADR-12
  application.resourceTrackingMethod: annotation
  timeout.reconciliation: 180s # the default is too slow for us
`},
	{"kustomize-json6902", "overlays/prod/argocd-cm-patch.yaml", `# argocd-cm for prod, patched onto the upstream install (kustomization.yaml: patches).
- op: add
  path: /data/timeout.reconciliation
  value: 180s # keep in sync with staging
`},
	{"helm-values", "argo-cd/values.yaml", `# Values of the argo-cd chart for the prod cluster.
global:
  domain: argocd.example.com
configs:
  # argocd-cm
  cm:
    admin.enabled: false # SSO only
  params:
    server.insecure: true
`},
}

// platformWorld is a world with one stuck application per name, each with
// the same webhook mutation, and a platform repository acme/argocd-config
// declaring argocd-cm in file.
func platformWorld(t *testing.T, file, content string, names ...string) (*world, time.Time) {
	t.Helper()
	w := newWorld(t, platformConfig)
	w.base = corpus.Load(t, webhookSnapshot)
	for _, n := range names {
		files := map[string]string{}
		for k, v := range w.base.Repo.Files {
			if k == "argocd/orders.yaml" {
				k, v = "argocd/"+n+".yaml", strings.Replace(v, "  name: orders\n  namespace: argocd\n", "  name: "+n+"\n  namespace: argocd\n", 1)
			}
			files[k] = v
		}
		w.addRepoFiles(n, files)
		w.setWebhookApp(n, true)
	}
	u := w.addRepoFiles("argocd-config", map[string]string{file: content, "README.md": "Argo CD's own configuration.\n"})
	var err error
	if w.cfg, err = config.Parse([]byte(platformConfig + "platformRepos:\n  - {url: " + u + ", instance: main, file: " + file + "}\n")); err != nil {
		t.Fatal(err)
	}
	return w, worldNow
}

func (w *world) addRepoFiles(name string, files map[string]string) string {
	u, err := githubtest.NewRepo(filepath.Join(w.dir, "git"), "acme", name, files)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.gh.AddRepo(filepath.Join(w.dir, "git"), "acme", name); err != nil {
		w.t.Fatal(err)
	}
	w.repoURL[name] = u
	return u
}

// setWebhookApp serves application name, stuck with the webhook's drift or Synced.
func (w *world) setWebhookApp(name string, stuck bool) { w.setWebhookAppWith(name, stuck, nil) }

// setWebhookAppWith is setWebhookApp with the snapshot changed by change first.
func (w *world) setWebhookAppWith(name string, stuck bool, change func(*drift.Snapshot)) {
	s := corpus.Load(w.t, webhookSnapshot)
	if change != nil {
		change(s)
	}
	drift.Map(s.Application, "metadata")["name"] = name
	if w.dry == nil {
		w.dry = map[string]*drift.Snapshot{}
	}
	w.dry[name] = s
	drift.Map(s.Application, "spec")["source"] = map[string]any{"repoURL": w.repoURL[name], "path": "apps/orders", "targetRevision": "main"}
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": worldNow.Add(-time.Hour).Format(time.RFC3339)}
	st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
	if !stuck {
		st["sync"] = map[string]any{"status": "Synced", "revision": "main"}
		s.Resources = nil
	}
	w.argo.Add(s)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "platform", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from the golden file:\n%s", name, got)
	}
}

var apps3 = []string{"billing", "orders", "search"}

// TestPlatformPRStyles: three applications drifted by one webhook get one
// pull request to the platform repository, whichever way it declares
// argocd-cm, editing that file in place with its comments kept, listing
// every application; their per-application fixes are held back and say so.
func TestPlatformPRStyles(t *testing.T) {
	for _, style := range argocdCMStyles {
		t.Run(style.name, func(t *testing.T) {
			w, now := platformWorld(t, style.file, style.content, apps3...)
			out := w.cycle(&now)
			prs := w.open("argocd-config")
			if len(prs) != 1 || len(out.Result.Platform) != 1 {
				t.Fatalf("want one platform PR, got %d (%d proposed); skipped %v", len(prs), len(out.Result.Platform), out.Result.Skipped)
			}
			pr := prs[0]
			after, err := w.gh.File("acme", "argocd-config", pr.Head, style.file)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, style.name+".golden", after)
			for _, line := range strings.Split(strings.TrimSpace(style.content), "\n") {
				if strings.Contains(line, "#") && !strings.Contains(after, line) {
					t.Errorf("comment line lost: %q", line)
				}
			}
			for _, a := range apps3 {
				if !strings.Contains(pr.Body, "argocd/"+a+"`](https://argocd.example.com/applications/argocd/"+a+")") {
					t.Errorf("the body does not list %s:\n%s", a, pr.Body)
				}
				if n := len(w.open(a)); n != 0 {
					t.Errorf("%s: %d per-application PRs opened while the platform PR is open", a, n)
				}
			}
			// Each application's item lists its own proof: the webhook,
			// the dry run that reproduced the live value (never the value,
			// which is the webhook's) and the allow-list entry.
			items := strings.Split(pr.Body, "\n- [")
			for _, a := range apps3 {
				proved := false
				for _, it := range items {
					it, _, _ = strings.Cut(it, "\n\n")
					proved = proved || (strings.HasPrefix(it, "`argocd/"+a+"`") && strings.Contains(it, "`MutatingWebhookConfiguration policy-mutator` (webhook `") &&
						strings.Contains(it, "stores the live value at this path (no value is shown") && strings.Contains(it, "by the allow-list of hand-overs, "))
				}
				if !proved {
					t.Errorf("the body does not list the proof of %s:\n%s", a, pr.Body)
				}
			}
			if !strings.Contains(pr.Body, "re-diagnosed all 3 applications with the new argocd-cm in their cluster context: 3 findings gone, no new difference") {
				t.Errorf("the body does not say how it was verified:\n%s", pr.Body)
			}
			held := 0
			for _, s := range out.Published.Skipped {
				if strings.Contains(s, "held back: the platform pull request acme/argocd-config#") {
					held++
				}
			}
			if held != len(apps3) {
				t.Errorf("want %d per-application fixes held back naming the platform PR, got %d: %v", len(apps3), held, out.Published.Skipped)
			}
			for _, a := range apps3 {
				dash := ""
				for _, i := range w.gh.Issues("acme", a) {
					dash += i.Body
				}
				if !strings.Contains(dash, `held back: the platform pull request acme/argocd-config\#`) {
					t.Errorf("the Drift Dashboard of %s does not point to the platform PR:\n%s", a, dash)
				}
			}
		})
	}
}

// TestPlatformPRLifecycle: the platform PR is found again by its branch
// after a restart with a lost database (never a second one), is left alone
// while the finding stays, and is closed with a comment when the finding is
// gone from every application; when the finding comes back a new one opens,
// and once a person closes that one it is never proposed again; below the threshold no platform PR is
// proposed and the per-application PRs go ahead.
func TestPlatformPRLifecycle(t *testing.T) {
	style := argocdCMStyles[0]
	w, now := platformWorld(t, style.file, style.content, apps3...)
	w.cycle(&now)
	first := w.open("argocd-config")
	w.loseDatabase()
	out := w.cycle(&now)
	if prs := w.open("argocd-config"); len(prs) != 1 || prs[0].Number != first[0].Number || len(out.Published.Unchanged) == 0 {
		t.Fatalf("after a restart: %+v, published %+v", prs, out.Published)
	}
	// a fourth application with the same finding: the same PR, its body updated
	w.addRepoFiles("cart", w.base.Repo.Files)
	w.setWebhookApp("cart", true)
	out = w.cycle(&now)
	if prs := w.open("argocd-config"); len(prs) != 1 || prs[0].Number != first[0].Number || len(out.Published.Updated) != 1 ||
		!strings.Contains(prs[0].Body, "argocd/cart`]") || !strings.Contains(prs[0].Title, "for 4 applications") {
		t.Fatalf("a fourth application must update the platform PR: %+v, published %+v", prs, out.Published)
	}
	apps4 := append([]string{"cart"}, apps3...)
	var slackText string
	for _, p := range w.slack.Posts() {
		slackText += p["text"] + p["attachments"] + p["blocks"]
	}
	if !strings.Contains(slackText, "Platform pull request") {
		t.Errorf("the digest does not point to the platform PR: %s", slackText)
	}
	for _, a := range apps4 {
		w.setWebhookApp(a, false)
	}
	out = w.cycle(&now)
	if len(w.open("argocd-config")) != 0 || len(out.Published.Closed) != 1 {
		t.Fatalf("the platform PR must close when the finding is gone: closed %v", out.Published.Closed)
	}
	cs := w.gh.Comments("acme", "argocd-config", first[0].Number)
	if len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "the difference this change fixes is gone") {
		t.Fatalf("closing comment: %+v", cs)
	}

	// a person closing it unmerged stops it for good: the per-application PRs go ahead
	for _, a := range apps4 {
		w.setWebhookApp(a, true)
	}
	w.cycle(&now)
	again := w.open("argocd-config")
	if len(again) != 1 || again[0].Number == first[0].Number {
		t.Fatalf("the finding came back: want a new platform PR, got %+v", again)
	}
	if err := w.gh.CloseUnmerged("acme", "argocd-config", again[0].Number); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now)
	if len(w.open("argocd-config")) != 0 {
		t.Fatal("a platform PR a person closed was proposed again")
	}
	for _, a := range apps3 {
		if len(w.open(a)) != 1 {
			t.Errorf("%s: the per-application PR must go ahead once a person closed the platform PR", a)
		}
	}

	// two applications are below the threshold: per-application PRs only
	w2, now2 := platformWorld(t, style.file, style.content, "billing", "orders")
	out = w2.cycle(&now2)
	if len(w2.open("argocd-config")) != 0 || len(out.Result.Platform) != 0 {
		t.Fatalf("a platform PR for two applications")
	}
	if len(w2.open("billing")) != 1 || len(w2.open("orders")) != 1 {
		t.Fatalf("per-application PRs must go ahead below the threshold: %v", out.Published.Skipped)
	}
}

// TestPlatformPRNeverHidesPrivilege: when what the webhook writes grants a
// privilege (privileged: true over Git's false, as the dry run shows), no
// platform rule is proposed, whatever the number of applications, and the
// cycle says why.
func TestPlatformPRNeverHidesPrivilege(t *testing.T) {
	style := argocdCMStyles[0]
	w, now := platformWorld(t, style.file, style.content)
	for _, n := range apps3 {
		w.addRepoFiles(n, w.base.Repo.Files)
		w.setWebhookAppWith(n, true, func(s *drift.Snapshot) {
			r := &s.Resources[0]
			drift.List(r.Target, "spec", "template", "spec", "containers")[0].(map[string]any)["securityContext"] = map[string]any{"privileged": false}
			for _, o := range []drift.Object{r.Live, r.DryRun} {
				drift.List(o, "spec", "template", "spec", "containers")[0].(map[string]any)["securityContext"] = map[string]any{"privileged": true}
				mf := drift.List(o, "metadata", "managedFields")[0].(map[string]any)
				owned := drift.Map(mf, "fieldsV1", "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"orders"}`)
				owned["f:securityContext"] = map[string]any{".": map[string]any{}, "f:privileged": map[string]any{}}
			}
		})
	}
	out := w.cycle(&now)
	if len(w.open("argocd-config")) != 0 || len(out.Result.Platform) != 0 {
		t.Fatal("a platform PR that hides a privileged container")
	}
	said := false
	for _, s := range out.Result.Skipped {
		if strings.HasPrefix(s, "platform fix for MutatingWebhookConfiguration policy-mutator on Deployment on main:") && strings.Contains(s, "privileged") {
			said = true
		}
	}
	if !said {
		t.Fatalf("the cycle does not say why no platform PR: %v", out.Result.Skipped)
	}
}

// TestPlatformPRCoversApplicationSetApps: an application an ApplicationSet
// generates (its ownerReferences) is in a platform rule's reach like any
// other: it counts toward the fleet, is judged and verified with the rest,
// and the pull request lists it with its own proof.
func TestPlatformPRCoversApplicationSetApps(t *testing.T) {
	style := argocdCMStyles[0]
	w, now := platformWorld(t, style.file, style.content, "billing", "orders")
	w.addRepoFiles("search", w.base.Repo.Files)
	w.setWebhookAppWith("search", true, func(s *drift.Snapshot) {
		drift.Map(s.Application, "metadata")["ownerReferences"] = []any{map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "platform-apps", "uid": "5c1d", "controller": true}}
	})
	out := w.cycle(&now)
	prs := w.open("argocd-config")
	if len(prs) != 1 || len(out.Result.Platform) != 1 {
		t.Fatalf("two applications and one an ApplicationSet generates: want one platform PR, got %d; skipped %v", len(prs), out.Result.Skipped)
	}
	if got := out.Result.Platform[0].Apps; len(got) != 3 || !strings.Contains(strings.Join(got, " "), "main/argocd/search") {
		t.Fatalf("the platform fix covers %v, want the generated application too", got)
	}
	proved := false
	for _, it := range strings.Split(prs[0].Body, "\n- [") {
		it, _, _ = strings.Cut(it, "\n\n")
		proved = proved || (strings.HasPrefix(it, "`argocd/search`") && strings.Contains(it, "stores the live value at this path (no value is shown"))
	}
	if !proved || !strings.Contains(prs[0].Body, "re-diagnosed all 3 applications") {
		t.Errorf("the body does not list the generated application with its proof, verified:\n%s", prs[0].Body)
	}
}
