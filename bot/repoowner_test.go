package bot

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/templates"
)

// The repository owner's side, through the GitHub emulator: titles in the
// repository's style, sign-off, the commands section, and the repository's
// own .github/driftfix.yaml.

// TestTitleStyle: a pull request's title and its commit's subject follow
// the repository: Conventional Commits when most of the default branch's
// recent commits are, or when the policy says so; plain otherwise.
func TestTitleStyle(t *testing.T) {
	conventional := []string{"feat(cart): add coupons", "fix: typo in README", "chore(deps): bump helm", "docs: usage", "Update values.yaml"}
	plain := []string{"Add coupons", "Fix typo", "feat: one", "Bump helm", "fix(x): two"}
	for _, tc := range []struct {
		name, policy string
		history      []string
		want         string // the title's start
	}{
		{"auto, conventional history", "", conventional, "fix(shop): "},
		{"auto, plain history", "", plain, "driftfix(shop): "},
		{"auto, no history to speak of", "", nil, "driftfix(shop): "},
		{"set conventional", "titleStyle: conventional, ", plain, "fix(shop): "},
		{"set plain", "titleStyle: plain, ", conventional, "driftfix(shop): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := strings.Replace(worldConfig, "policy: {", "policy: {"+tc.policy, 1)
			w, now := stuckWorld(t, cfg, "shop")
			for i, s := range tc.history {
				if err := w.gh.CommitMessage("acme", "shop", "main", "NOTES.md", strings.Repeat("n", i+1), "dev", s+"\n\nbody"); err != nil {
					t.Fatal(err)
				}
			}
			w.cycle(&now)
			prs := w.open("shop")
			if len(prs) != 1 {
				t.Fatalf("want one pull request, got %+v", prs)
			}
			if !strings.HasPrefix(prs[0].Title, tc.want) {
				t.Errorf("title %q, want it to start %q", prs[0].Title, tc.want)
			}
			cs, err := w.gh.Commits("acme", "shop", prs[0].Head)
			if err != nil {
				t.Fatal(err)
			}
			if subject, _, _ := strings.Cut(cs[0].Message, "\n"); subject != prs[0].Title {
				t.Errorf("the commit's subject %q is not the title %q", subject, prs[0].Title)
			}
			if strings.Contains(cs[0].Message, "Signed-off-by:") {
				t.Errorf("signed off without being asked:\n%s", cs[0].Message)
			}
		})
	}
}

// TestSignOff: with signOff, every commit driftfix makes carries a
// Signed-off-by trailer naming the commit's own author, as a DCO check
// requires; set by the central policy or by the repository's file.
func TestSignOff(t *testing.T) {
	for _, tc := range []struct{ name, policy, file string }{
		{"central policy", "signOff: true, ", ""},
		{"the repository's file", "", "signOff: true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := stuckWorld(t, strings.Replace(worldConfig, "policy: {", "policy: {"+tc.policy, 1), "shop")
			if tc.file != "" {
				if err := w.gh.CommitMessage("acme", "shop", "main", ".github/driftfix.yaml", tc.file, "dev", "chore: driftfix settings"); err != nil {
					t.Fatal(err)
				}
			}
			w.cycle(&now)
			prs := w.open("shop")
			if len(prs) != 1 {
				t.Fatalf("want one pull request, got %+v", prs)
			}
			cs, err := w.gh.Commits("acme", "shop", prs[0].Head)
			if err != nil {
				t.Fatal(err)
			}
			c := cs[0]
			want := "Signed-off-by: " + c.AuthorName + " <" + c.AuthorEmail + ">"
			if c.AuthorName != "driftfix[bot]" || !strings.Contains(c.AuthorEmail, "+driftfix[bot]@users.noreply.") {
				t.Fatalf("the commit is not the App's: %s <%s>", c.AuthorName, c.AuthorEmail)
			}
			lines := strings.Split(strings.TrimRight(c.Message, "\n"), "\n")
			if lines[len(lines)-1] != want || !strings.HasPrefix(lines[len(lines)-2], "driftfix-fix: ") {
				t.Errorf("the message must end with the fix's key and %q, one trailer block:\n%s", want, c.Message)
			}
		})
	}
}

// TestCommandsInEveryPR: a fix pull request's body lists every command in a
// collapsed section, as templates.Commands has them.
func TestCommandsInEveryPR(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	w.cycle(&now)
	prs := w.open("shop")
	if len(prs) != 1 {
		t.Fatalf("want one pull request, got %+v", prs)
	}
	body := prs[0].Body
	start, end := strings.Index(body, "<details>\n<summary>driftfix commands</summary>"), strings.Index(body, "</details>")
	if start < 0 || end < start {
		t.Fatalf("no collapsed commands section:\n%s", body)
	}
	for _, c := range templates.Commands {
		if !strings.Contains(body[start:end], "`"+c.Example+"`") {
			t.Errorf("the section does not list %s", c.Example)
		}
	}
}

// TestRepoFile: a repository's own .github/driftfix.yaml, on its default
// branch, adds labels and reviewers and sets the title style; one that sets
// a key the central policy keeps is not used, and says so with the key and
// line on the repository's dashboard and in the cycle's result, while the
// other repositories' pull requests go on; fixes: false stops the
// repository's fix pull requests.
func TestRepoFile(t *testing.T) {
	cfg := strings.Replace(worldConfig, "policy: {", "policy: {dashboard: {enabled: true}, titleStyle: plain, ", 1)
	w, now := stuckWorld(t, cfg, "shop", "cart", "ledger")
	files := map[string]string{
		"shop":   "# our settings\nlabels: [gitops]\nreviewers: [shop-team]\ntitleStyle: conventional\n",
		"cart":   "labels: [gitops]\n\nsensitivePaths: [/spec]\n",
		"ledger": "fixes: false\n",
	}
	for repo, f := range files {
		if err := w.gh.CommitMessage("acme", repo, "main", ".github/driftfix.yaml", f, "dev", "chore: driftfix settings"); err != nil {
			t.Fatal(err)
		}
	}
	out := w.cycle(&now)

	shop := w.open("shop")
	if len(shop) != 1 {
		t.Fatalf("shop: want one pull request, got %+v", shop)
	}
	if p := shop[0]; !strings.HasPrefix(p.Title, "fix(shop): ") || !slices.Equal(p.Labels, []string{"driftfix", "gitops"}) || !slices.Equal(p.Reviewers, []string{"platform-oncall", "shop-team"}) {
		t.Errorf("shop's file is not honoured: title %q, labels %v, reviewers %v", p.Title, p.Labels, p.Reviewers)
	}

	cart := w.open("cart")
	if len(cart) != 1 {
		t.Fatalf("a broken file must not stop cart's pull request: %+v", cart)
	}
	if p := cart[0]; !strings.HasPrefix(p.Title, "driftfix(cart): ") || !slices.Equal(p.Labels, []string{"driftfix"}) {
		t.Errorf("cart's broken file must leave the central policy alone: title %q, labels %v", p.Title, p.Labels)
	}
	want := "line 3: sensitivePaths: a repository cannot decide it"
	if len(out.Published.RepoFiles) != 1 || !strings.Contains(out.Published.RepoFiles[0], "acme/cart") || !strings.Contains(out.Published.RepoFiles[0], want) {
		t.Errorf("the cycle must report cart's file with its key and line: %q", out.Published.RepoFiles)
	}
	var dash string
	for _, i := range w.gh.Issues("acme", "cart") {
		dash = i.Body
	}
	if !strings.Contains(dash, "`.github/driftfix.yaml` is not used") || !strings.Contains(dash, want) {
		t.Errorf("cart's Drift Dashboard must say why its file is not used:\n%s", dash)
	}

	if ledger := w.open("ledger"); len(ledger) != 0 {
		t.Errorf("ledger turned fix pull requests off, got %+v", ledger)
	}
	if !slices.ContainsFunc(out.Published.Skipped, func(s string) bool { return strings.Contains(s, "turns fix pull requests off") }) {
		t.Errorf("the cycle must say why ledger's fix was held: %q", out.Published.Skipped)
	}

	// the file is fixed: the next cycle uses it, and the dashboard says no more
	if err := w.gh.CommitMessage("acme", "cart", "main", ".github/driftfix.yaml", "labels: [gitops]\n", "dev", "fix: driftfix settings"); err != nil {
		t.Fatal(err)
	}
	out = w.cycle(&now)
	if len(out.Published.RepoFiles) != 0 {
		t.Errorf("a fixed file is still reported: %q", out.Published.RepoFiles)
	}
	for _, i := range w.gh.Issues("acme", "cart") {
		if strings.Contains(i.Body, "is not used") {
			t.Errorf("the dashboard still says the file is not used:\n%s", i.Body)
		}
	}
}

// TestRepoFileRefused: a file the central policy's repoFile.allow does not
// allow, or that is not YAML, is refused with its line and not used at all:
// the fix is opened under the central policy.
func TestRepoFileRefused(t *testing.T) {
	for _, tc := range []struct{ name, policy, file, want string }{
		{"a key not allowed", "repoFile: {allow: [labels]}, ", "labels: [gitops]\nfixes: false\n",
			"line 2: fixes: the central policy does not let repositories set it (policy.repoFile.allow: labels)"},
		{"not YAML", "", "labels: [gitops\nfixes: false\n", "line 1: (file): not valid YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, now := stuckWorld(t, strings.Replace(worldConfig, "policy: {", "policy: {"+tc.policy, 1), "shop")
			if err := w.gh.CommitMessage("acme", "shop", "main", ".github/driftfix.yaml", tc.file, "dev", "chore: opt out"); err != nil {
				t.Fatal(err)
			}
			out := w.cycle(&now)
			prs := w.open("shop")
			if len(prs) != 1 {
				t.Fatalf("the fix must be opened under the central policy: %+v", out.Published)
			}
			if len(out.Published.RepoFiles) != 1 || !strings.Contains(out.Published.RepoFiles[0], tc.want) {
				t.Errorf("want %q: %q", tc.want, out.Published.RepoFiles)
			}
			if slices.Contains(prs[0].Labels, "gitops") {
				t.Errorf("a refused file must not be used at all: labels %v", prs[0].Labels)
			}
		})
	}
}

// TestPlatformPRFollowsItsRepository: a pull request that changes one file
// (here argocd-cm, in the platform repository) follows that repository's
// own file too: a conventional title, the commit's subject and sign-off,
// the repository's labels; its body lists the commands and says it takes none.
func TestPlatformPRFollowsItsRepository(t *testing.T) {
	style := argocdCMStyles[0]
	w, now := platformWorld(t, style.file, style.content, apps3...)
	if err := w.gh.CommitMessage("acme", "argocd-config", "main", ".github/driftfix.yaml", "titleStyle: conventional\nsignOff: true\nlabels: [platform]\n", "dev", "chore: driftfix settings"); err != nil {
		t.Fatal(err)
	}
	w.cycle(&now)
	prs := w.open("argocd-config")
	if len(prs) != 1 {
		t.Fatalf("want the platform pull request, got %+v", prs)
	}
	p := prs[0]
	if !strings.HasPrefix(p.Title, "chore(driftfix): ignore what ") || !slices.Equal(p.Labels, []string{"driftfix", "platform"}) {
		t.Errorf("title %q, labels %v", p.Title, p.Labels)
	}
	cs, err := w.gh.Commits("acme", "argocd-config", p.Head)
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	if subject, _, _ := strings.Cut(c.Message, "\n"); subject != p.Title ||
		!strings.HasSuffix(c.Message, "\nSigned-off-by: "+c.AuthorName+" <"+c.AuthorEmail+">\n") {
		t.Errorf("the commit must carry the title and the sign-off:\n%s", c.Message)
	}
	if !strings.Contains(p.Body, templates.CommandsSection(templates.OtherPR)) {
		t.Errorf("the body lacks the commands section:\n%s", p.Body)
	}
	// unchanged next cycle: the same title is not written again
	out := w.cycle(&now)
	if len(out.Published.Updated) != 0 {
		t.Errorf("an unchanged platform pull request was updated: %+v", out.Published)
	}
}

// TestRepoFileAbsentAskedHourly: a running bot asks a repository that had
// no file of its own again only after an hour (GitHub counts each 404),
// and then uses the file the repository added: the open pull request is
// retitled in the style the file sets.
func TestRepoFileAbsentAskedHourly(t *testing.T) {
	cfg := strings.Replace(worldConfig, "policy: {", "policy: {titleStyle: plain, ", 1)
	w, now := stuckWorld(t, cfg, "shop")
	r, closeDB := w.runner()
	defer closeDB()
	r.PredictPerCycle = -1 // predict reads the file for itself (TestPredictOnPullRequests)
	once := func(at time.Time) Outcome {
		t.Helper()
		out, err := r.Once(context.Background(), at)
		if err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
			t.Fatalf("cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
		}
		return out
	}
	once(now)
	if err := w.gh.CommitMessage("acme", "shop", "main", ".github/driftfix.yaml", "titleStyle: conventional\n", "dev", "chore: driftfix settings"); err != nil {
		t.Fatal(err)
	}
	once(now.Add(15 * time.Minute)) // within the hour: the file is not asked for (used, it would retitle the PR)
	if p := w.open("shop"); len(p) != 1 || !strings.HasPrefix(p[0].Title, "driftfix(shop): ") {
		t.Fatalf("a repository without a file was asked again within the hour: %+v", p)
	}
	once(now.Add(75 * time.Minute))
	if p := w.open("shop"); len(p) != 1 || !strings.HasPrefix(p[0].Title, "fix(shop): ") {
		t.Errorf("an hour on, the repository's file must be read and used: %+v", p)
	}
}
