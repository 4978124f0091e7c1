package bot

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
	"github.com/driftfix/driftfix/bot/state"
)

// world is a fleet on loopback: an emulated argocd-server serving stuck
// applications read from a snapshot, an emulated GitHub over real bare git
// repositories (which Argo CD's side reads too), an emulated Slack, and a
// state database on disk.
type world struct {
	t     testing.TB
	dir   string
	argo  *argocdtest.Server
	gh    *githubtest.Server
	slack *slacktest.Server
	base  *drift.Snapshot // the hpa-replicas snapshot every app copies
	// dry holds, per application, the snapshot whose dry-run answers its
	// cluster read adds (the base's when none).
	dry     map[string]*drift.Snapshot
	repoURL map[string]string
	cfg     *config.Config
	dbPath  string
	logs    lockedBuffer // everything the bots logged
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const slackToken = "xoxb-world-secret-token"

func newWorld(t testing.TB, cfgYAML string) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), repoURL: map[string]string{}}
	var err error
	if w.base, err = drift.LoadSnapshot("../remediations/testdata/plain-remove-hpa.yaml"); err != nil {
		t.Fatal(err)
	}
	if w.gh, err = githubtest.NewServer(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.gh.Close)
	w.argo = argocdtest.NewServer("argo-token")
	t.Cleanup(w.argo.Close)
	w.slack = slacktest.NewServer(slackToken)
	t.Cleanup(w.slack.Close)
	if w.cfg, err = config.Parse([]byte(cfgYAML)); err != nil {
		t.Fatal(err)
	}
	w.dbPath = filepath.Join(w.dir, "state.db")
	return w
}

// worldNow is when the tests' cycles run.
var worldNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// stuckWorld is a world with one repository and one stuck application per name.
func stuckWorld(t testing.TB, cfgYAML string, names ...string) (*world, time.Time) {
	t.Helper()
	w := newWorld(t, cfgYAML)
	for _, n := range names {
		w.addRepo(n)
		w.setApp(n, n, true, worldNow)
	}
	return w, worldNow
}

// addRepo creates acme/<name> holding the snapshot's files.
func (w *world) addRepo(name string) string {
	files := map[string]string{}
	for k, v := range w.base.Repo.Files {
		files[k] = v
	}
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

// setApp serves application name from repo: stuck OutOfSync with the HPA
// drift, or Synced with none. It returns the snapshot served, which a test
// may change between cycles.
func (w *world) setApp(name, repo string, stuck bool, now time.Time) *drift.Snapshot {
	return w.setAppAt(name, repo, stuck, now, "main")
}

// setAppAt is setApp with the revision Argo CD compared (synced).
func (w *world) setAppAt(name, repo string, stuck bool, now time.Time, revision string) *drift.Snapshot {
	s := corpus.Load(w.t, "remediations/testdata/plain-remove-hpa.yaml")
	md := drift.Map(s.Application, "metadata")
	md["name"] = name
	drift.Map(s.Application, "spec")["source"] = map[string]any{"repoURL": w.repoURL[repo], "path": "apps/shop", "targetRevision": "main"}
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
	if stuck {
		st["sync"] = map[string]any{"status": "OutOfSync", "revision": revision}
	} else {
		st["sync"] = map[string]any{"status": "Synced", "revision": revision}
		s.Resources = nil
	}
	w.argo.Add(s)
	return s
}

// runner builds a bot as a fresh process would: new clients, the state
// database reopened from disk.
func (w *world) runner() (*Runner, func()) {
	w.t.Helper()
	log := slog.New(slog.NewJSONHandler(&w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ac, err := argocd.New(argocd.Config{Logger: log, BaseURL: w.argo.URL, Token: "argo-token", Retries: 2, Backoff: 5 * time.Millisecond, Timeout: 500 * time.Millisecond})
	if err != nil {
		w.t.Fatal(err)
	}
	gh, err := github.New(github.Config{Logger: log, AppID: w.gh.AppID, PrivateKey: w.gh.PrivateKeyPEM, BaseURL: w.gh.API, Backoff: 5 * time.Millisecond})
	if err != nil {
		w.t.Fatal(err)
	}
	sl, err := slack.New(slack.Config{Logger: log, Token: slackToken, APIURL: w.slack.URL})
	if err != nil {
		w.t.Fatal(err)
	}
	st, err := state.Open(context.Background(), w.dbPath, rowSeal)
	if err != nil {
		w.t.Fatal(err)
	}
	in := plan.Instance{Name: "main", URL: "https://argocd.example.com", Client: ac,
		Cluster: func(s *drift.Snapshot) []drift.Object {
			// As with dryRunEvidence, the cluster read adds the API
			// server's dry-run answers: here the application's snapshot's.
			from := w.dry[s.AppName()]
			if from == nil {
				from = w.base
			}
			for i := range s.Resources {
				for _, r := range from.Resources {
					if r.DryRun != nil && r.Ref() == s.Resources[i].Ref() {
						s.Resources[i].DryRun = r.DryRun
					}
				}
			}
			return w.base.Cluster
		},
		RepoFiles: func(ctx context.Context, s *drift.Snapshot) (map[string]string, error) {
			src := drift.Sources(s.Application)[0]
			return gitrepo.Files(ctx, src.RepoURL, src.TargetRevision, gitrepo.Limits{})
		},
		BranchFiles: func(ctx context.Context, repoURL, branch string) (map[string]string, string, error) {
			return gitrepo.Head(ctx, repoURL, branch, gitrepo.Limits{})
		}}
	r := &Runner{Config: w.cfg, Instances: []plan.Instance{in}, Metrics: NewMetrics(), Log: log,
		Publisher: &publish.Publisher{Config: w.cfg, Store: st, Hosts: []publish.GitHost{gh}, Notifier: sl, Log: log}}
	r.Metrics.Watch("argocd", "main", ac)
	r.Metrics.Watch("github", "", gh)
	r.Metrics.Watch("slack", "", sl)
	return r, func() { st.Close() }
}

// cycle runs one cycle at *now as a fresh process would, fails the test on
// any error, and moves *now on by 15 minutes.
func (w *world) cycle(now *time.Time) Outcome {
	w.t.Helper()
	r, closeDB := w.runner()
	defer closeDB()
	out, err := r.Once(context.Background(), *now)
	if err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
		w.t.Fatalf("cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
	}
	*now = now.Add(15 * time.Minute)
	return out
}

func (w *world) loseDatabase() {
	for _, f := range []string{w.dbPath, w.dbPath + "-wal", w.dbPath + "-shm"} {
		os.Remove(f)
	}
}

// open returns the open pull requests of a repository.
func (w *world) open(repo string) []githubtest.PullRequest {
	var out []githubtest.PullRequest
	for _, p := range w.gh.PullRequests("acme", repo) {
		if p.State == "open" {
			out = append(out, p)
		}
	}
	return out
}
