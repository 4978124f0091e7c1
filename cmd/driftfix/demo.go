package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/memo"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// demoFleet are the snapshots of the fix corpus the demo serves, one
// application and one repository each: an HPA owning replicas, a value
// changed by hand, a Kustomize overlay and a Helm value.
var demoFleet = []string{"plain-remove-hpa.yaml", "plain-set-value.yaml", "kustomize-overlay.yaml", "helm-set-value.yaml"}

// demoFleetDir is where the fleet is read from, inside the module.
const demoFleetDir = "remediations/testdata"

// demoCmd is `driftfix demo`: one cycle of the bot against emulated Argo
// CD, GitHub and Slack on loopback, printing what it published.
func (c *cli) demoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run one cycle against emulated Argo CD, GitHub and Slack and print what the bot publishes",
		Long: `Starts an emulated argocd-server, GitHub (over real git repositories in a
temporary directory) and Slack, on 127.0.0.1 in this process, serving a small
fleet of stuck applications taken from the fix corpus (` + demoFleetDir + `).
Runs one cycle of the bot against them and prints the Slack digest, each fix
pull request's title and body, its driftfix/verify check and the Drift
Dashboard, then exits. No cluster, no network, nothing kept.`,
		Example: `  go run ./cmd/driftfix demo      # from the clone
  driftfix demo --fleet remediations/testdata`,
		Args: noArgs,
	}
	fleet := cmd.Flags().String("fleet", "", "directory holding the fleet's snapshots (default: "+demoFleetDir+" of the clone the command runs in)")
	_ = cmd.MarkFlagDirname("fleet")
	cmd.RunE = c.runE(func(cmd *cobra.Command, args []string) (int, error) {
		dir := *fleet
		if dir == "" {
			root, err := moduleRoot()
			if err != nil {
				return exitUsage, err
			}
			dir = filepath.Join(root, demoFleetDir)
		}
		return demo(c.ctx, dir, c.stdout, c.stderr, c.now())
	})
	return cmd
}

// moduleRoot is the directory of driftfix's go.mod at or above the working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the clone: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/driftfix/driftfix\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the demo reads its fleet from " + demoFleetDir + " of a driftfix clone: run it inside one, or give --fleet DIR")
		}
		dir = parent
	}
}

// demo runs the cycle; every server it starts is closed when it returns.
func demo(ctx context.Context, fleetDir string, stdout, stderr io.Writer, now time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "driftfix-demo-")
	if err != nil {
		return exitUsage, fmt.Errorf("make the demo's directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	const argoToken, slackToken, channel = "demo-argocd-token", "xoxb-demo-token", "#gitops-drift"
	gh, err := githubtest.NewServer()
	if err != nil {
		return exitUsage, fmt.Errorf("start the GitHub emulator: %w", err)
	}
	defer gh.Close()
	argo := argocdtest.NewServer(argoToken)
	defer argo.Close()
	sl := slacktest.NewServer(slackToken)
	defer sl.Close()

	cluster, repos, err := loadDemoFleet(fleetDir, filepath.Join(tmp, "git"), gh, argo, now)
	if err != nil {
		return exitUsage, err
	}

	cfg, err := config.Parse([]byte(`argocd: [{name: demo, server: https://argocd.example.com, tokenEnv: DRIFTFIX_DEMO_UNUSED}]
slack: {tokenEnv: DRIFTFIX_DEMO_UNUSED, channel: "` + channel + `"}
policy: {labels: [driftfix], dashboard: {enabled: true}}
`))
	if err != nil {
		return exitUsage, fmt.Errorf("the demo's policy: %w", err)
	}
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ac, err := argocd.New(argocd.Config{Logger: log, BaseURL: argo.URL, Token: argoToken})
	if err != nil {
		return exitUsage, err
	}
	gc, err := github.New(github.Config{Logger: log, AppID: gh.AppID, PrivateKey: gh.PrivateKeyPEM, BaseURL: gh.API})
	if err != nil {
		return exitUsage, err
	}
	sc, err := slack.New(slack.Config{Logger: log, Token: slackToken, APIURL: sl.URL})
	if err != nil {
		return exitUsage, err
	}
	db, err := openDemoState(ctx, tmp)
	if err != nil {
		return exitUsage, err
	}
	defer db.Close()
	in := plan.Instance{Name: "demo", URL: "https://argocd.example.com", Client: ac,
		Cluster: func(s *drift.Snapshot) []drift.Object { return cluster[drift.Str(s.Application, "metadata", "name")] },
		RepoFiles: func(ctx context.Context, s *drift.Snapshot) (map[string]string, error) {
			src := drift.Sources(s.Application)[0]
			return gitrepo.Files(ctx, src.RepoURL, src.TargetRevision, gitrepo.Limits{})
		},
		BranchFiles: func(ctx context.Context, repoURL, branch string) (map[string]string, string, error) {
			return gitrepo.Head(ctx, repoURL, branch, gitrepo.Limits{})
		}}
	r := &bot.Runner{Config: cfg, Instances: []plan.Instance{in}, Metrics: bot.NewMetrics(), Log: log,
		Publisher: &publish.Publisher{Config: cfg, Store: db, Hosts: []publish.GitHost{gc}, Notifier: sc, Log: log}}
	start := time.Now()
	out, err := r.Once(ctx, now)
	if err != nil {
		fmt.Fprint(stderr, logs.String())
		return exitDrift, fmt.Errorf("run the demo's cycle: %w", err)
	}

	w := &demoWriter{w: stdout}
	w.printf("driftfix demo: one cycle against emulated Argo CD, GitHub and Slack on 127.0.0.1 (%d applications, %s)\n", len(repos), time.Since(start).Round(time.Millisecond))
	w.printf("%d applications scanned, %d stuck; %d fix pull requests opened.\n", len(out.Result.Apps), len(out.Result.Stuck), len(out.Published.Opened))
	if err := w.digests(sl); err != nil {
		return exitUsage, err
	}
	w.pullRequests(gh, repos)
	if problems := logs.String(); problems != "" {
		w.section("Warnings the bot logged")
		w.printf("%s\n", termLines(strings.TrimSpace(problems)))
	}
	if w.err != nil {
		return exitUsage, fmt.Errorf("write the demo: %w", w.err)
	}
	if errs := append(out.Result.Errors, out.Published.Errors...); len(errs) > 0 {
		return exitDrift, fmt.Errorf("the demo's cycle had %d errors: %v", len(errs), errors.Join(errs...))
	}
	return exitClean, nil
}

// loadDemoFleet serves each application of the demo fleet under fleetDir:
// its repository from gitDir on the GitHub emulator, its Application,
// OutOfSync an hour after a successful sync, on the Argo CD emulator. It
// returns each application's cluster objects and the repositories, by name.
func loadDemoFleet(fleetDir, gitDir string, gh *githubtest.Server, argo *argocdtest.Server, now time.Time) (map[string][]drift.Object, []string, error) {
	cluster := map[string][]drift.Object{}
	var repos []string
	for _, f := range demoFleet {
		s, err := drift.LoadSnapshot(filepath.Join(fleetDir, f))
		if err != nil {
			return nil, nil, fmt.Errorf("load the demo fleet: %w", err)
		}
		name := strings.TrimSuffix(f, ".yaml")
		srcs := drift.Sources(s.Application)
		if len(srcs) == 0 || len(s.Repo.Files) == 0 {
			return nil, nil, fmt.Errorf("load the demo fleet: %s has no source or repository files", f)
		}
		url, err := githubtest.NewRepo(gitDir, "acme", name, s.Repo.Files)
		if err != nil {
			return nil, nil, fmt.Errorf("create the demo repository %s: %w", name, err)
		}
		if err := gh.AddRepo(gitDir, "acme", name); err != nil {
			return nil, nil, fmt.Errorf("serve the demo repository %s: %w", name, err)
		}
		src := drift.Map(s.Application, "spec", "source")
		if src == nil {
			return nil, nil, fmt.Errorf("load the demo fleet: %s has no spec.source", f)
		}
		src["repoURL"], src["targetRevision"] = url, "main"
		drift.Map(s.Application, "metadata")["name"] = name
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
		st["operationState"] = map[string]any{"phase": "Succeeded", "startedAt": now.Add(-time.Hour - time.Minute).Format(time.RFC3339), "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		argo.Add(s)
		cluster[name] = s.Cluster
		repos = append(repos, name)
	}
	return cluster, repos, nil
}

// digests prints each Slack digest the cycle posted, block by block.
func (w *demoWriter) digests(sl *slacktest.Server) error {
	for _, p := range sl.Posts() {
		w.section("Slack digest to " + p["channel"])
		var atts []any
		if err := json.Unmarshal([]byte(p["attachments"]), &atts); err != nil && p["attachments"] != "" {
			return fmt.Errorf("read the digest's blocks: %w", err)
		}
		texts := blockTexts(atts)
		if len(texts) == 0 { // the fallback text is all there is
			texts = []string{p["text"]}
		}
		for i, text := range texts {
			if i > 0 {
				w.printf("\n")
			}
			w.printf("%s\n", termLines(text))
		}
	}
	return nil
}

// pullRequests prints the pull requests the cycle opened in each
// repository, one check run and one Drift Dashboard issue, then how many
// there are of each.
func (w *demoWriter) pullRequests(gh *githubtest.Server, repos []string) {
	sort.Strings(repos)
	checks, dashboards := 0, 0
	for _, repo := range repos {
		for _, pr := range gh.PullRequests("acme", repo) {
			w.section(fmt.Sprintf("Pull request acme/%s#%d: %s", repo, pr.Number, pr.Title))
			w.printf("branch %s, labels %s\n\n%s\n", templates.Terminal(pr.Head), templates.Terminal(strings.Join(pr.Labels, ", ")), termLines(pr.Body))
			for _, run := range gh.CheckRuns("acme", repo, gh.Head("acme", repo, pr.Head)) {
				if checks++; checks > 1 {
					continue // one check shows what they all look like
				}
				w.section(fmt.Sprintf("Check %s on acme/%s#%d: %s", run.Name, repo, pr.Number, run.Conclusion))
				w.printf("%s\n\n%s\n\n%s\n", termLines(run.Title), termLines(run.Summary), termLines(run.Text))
			}
		}
		for _, is := range gh.Issues("acme", repo) {
			if is.Author != gh.AppSlug+"[bot]" {
				continue
			}
			if dashboards++; dashboards > 1 {
				continue
			}
			w.section(fmt.Sprintf("Issue acme/%s#%d: %s", repo, is.Number, is.Title))
			w.printf("%s\n", termLines(is.Body))
		}
	}
	w.printf("\n(%d driftfix/verify checks and %d Drift Dashboards in all, one of each shown.)\n", checks, dashboards)
}

// termLines renders text of many lines for a terminal, each line made inert
// (templates.Terminal).
func termLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = templates.Terminal(l)
	}
	return strings.Join(lines, "\n")
}

// blockTexts are the texts of Slack attachments' Block Kit blocks, in order:
// each block's text, then its fields' and elements'.
func blockTexts(v any) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			out = append(out, blockTexts(x)...)
		}
	case map[string]any:
		if t, ok := v["text"].(string); ok {
			out = append(out, t)
		}
		for _, k := range []string{"blocks", "text", "fields", "elements"} {
			if _, isString := v[k].(string); !isString {
				out = append(out, blockTexts(v[k])...)
			}
		}
	}
	return out
}

// demoWriter writes the demo's report, keeping the first error.
type demoWriter struct {
	w   io.Writer
	err error
}

func (d *demoWriter) printf(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, args...)
	}
}

func (d *demoWriter) section(title string) {
	d.printf("\n== %s\n\n", templates.Terminal(title))
}

// openDemoState opens the demo's state database in dir, its rows sealed
// with a secret of this process.
func openDemoState(ctx context.Context, dir string) (*state.Store, error) {
	seal, err := memo.ProcessSeal()
	if err != nil {
		return nil, err
	}
	return state.Open(ctx, filepath.Join(dir, "state.db"), seal)
}
