package bot

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// memHost is a Git host kept in memory: the smallest thing that can stand
// behind the publisher's port, as a GitLab or Gitea package would.
type memHost struct {
	mu       sync.Mutex
	branches map[string]map[string][]byte // "owner/name branch" → files written
	prs      []githost.PullRequest
	checks   map[string]githost.Check    // by commit
	issues   map[string][]*githost.Issue // by owner/name
}

func (h *memHost) Host() string { return "git.example.org" }

func (h *memHost) Repo(url string) (githost.Repo, error) {
	dir, name := path.Split(strings.TrimSuffix(url, ".git"))
	owner := path.Base(dir)
	if owner == "" || name == "" {
		return githost.Repo{}, fmt.Errorf("%s is not owner/name", url)
	}
	return githost.Repo{Host: h.Host(), Owner: owner, Name: name}, nil
}

func (h *memHost) Login(context.Context) (string, error) { return "driftfix-bot", nil }

func (h *memHost) DefaultBranch(context.Context, githost.Repo) (string, error) { return "main", nil }

func (h *memHost) Push(_ context.Context, r githost.Repo, _, branch, _ string, files map[string]githost.Change) (bool, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := r.String() + " " + branch
	_, existed := h.branches[k]
	h.branches[k] = map[string][]byte{}
	for f, c := range files {
		h.branches[k][f] = c.Content
	}
	return true, !existed, nil
}

func (h *memHost) DeleteBranch(_ context.Context, r githost.Repo, branch string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.branches, r.String()+" "+branch)
	return nil
}

func (h *memHost) FindPR(_ context.Context, r githost.Repo, branch string) (*githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.prs) - 1; i >= 0; i-- {
		if h.prs[i].Branch == branch && h.prs[i].HeadRepo == r.String() {
			pr := h.prs[i]
			return &pr, nil
		}
	}
	return nil, nil
}

func (h *memHost) GetPR(_ context.Context, r githost.Repo, number int) (*githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if number < 1 || number > len(h.prs) {
		return nil, fmt.Errorf("%s has no pull request %d", r, number)
	}
	pr := h.prs[number-1]
	return &pr, nil
}

func (h *memHost) OpenPRs(_ context.Context, r githost.Repo, prefix string) ([]githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []githost.PullRequest
	for _, pr := range h.prs {
		if pr.State == "open" && strings.HasPrefix(pr.Branch, prefix) && pr.HeadRepo == r.String() {
			out = append(out, pr)
		}
	}
	return out, nil
}

func (h *memHost) OpenPR(_ context.Context, r githost.Repo, n githost.NewPullRequest) (*githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pr := githost.PullRequest{Number: len(h.prs) + 1, Title: n.Title, Body: n.Body, Branch: n.Branch, Base: n.Base, State: "open",
		HeadRepo: r.String(), Author: "driftfix-bot", Labels: n.Labels, URL: fmt.Sprintf("https://%s/%s/pulls/%d", h.Host(), r, len(h.prs)+1)}
	h.prs = append(h.prs, pr)
	return &pr, nil
}

func (h *memHost) EditPR(_ context.Context, _ githost.Repo, number int, title, body string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prs[number-1].Title, h.prs[number-1].Body = title, body
	return nil
}

func (h *memHost) ClosePR(_ context.Context, _ githost.Repo, number int, _, _ string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prs[number-1].State = "closed"
	return nil
}

func (h *memHost) Comments(context.Context, githost.Repo, int) ([]githost.Comment, error) {
	return nil, nil
}

func (h *memHost) Comment(context.Context, githost.Repo, int, string) error { return nil }

func (h *memHost) SetCheck(_ context.Context, _ githost.Repo, sha string, c githost.Check) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checks == nil {
		h.checks = map[string]githost.Check{}
	}
	h.checks[sha] = c
	return nil
}

func (h *memHost) React(context.Context, githost.Repo, int64, string) error { return nil }

func (h *memHost) Holds(_ context.Context, _ githost.Repo, revision, commit string) (bool, error) {
	return revision == commit, nil
}

func (h *memHost) Reacted(context.Context, githost.Repo, int64, string) (bool, error) {
	return false, nil
}

func (h *memHost) Permission(context.Context, githost.Repo, string) (string, error) {
	return githost.PermissionNone, nil
}

// memNotifier lays a digest out as one plain-text message, a line a
// group, and keeps the messages it is given, by channel: a notifier of its
// own format, behind the same port as Slack.
type memNotifier struct {
	mu   sync.Mutex
	sent []string // "channel thread text"
}

func (n *memNotifier) Render(v templates.DigestView) ([]string, error) {
	if v.Empty() {
		return nil, nil
	}
	text := "digest for " + v.Instance
	for _, l := range v.NewStuck {
		text += fmt.Sprintf("\nNewly stuck: %s/%s", l.Namespace, l.App)
	}
	for _, g := range []struct {
		what string
		prs  []templates.PRLine
	}{{"opened", v.Opened}, {"updated", v.Updated}, {"merged", v.Merged}, {"closed", v.Closed}} {
		for _, l := range g.prs {
			text += fmt.Sprintf("\nFix %s: %s %s", g.what, l.Title, l.URL)
		}
	}
	return []string{text}, nil
}

func (n *memNotifier) Send(_ context.Context, channel, thread, m string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent = append(n.sent, channel+" "+thread+" "+m)
	return fmt.Sprintf("m%d", len(n.sent)), nil
}

// TestPublishThroughPorts runs cycles whose publisher has only an in-memory
// Git host and notifier: the fix PR is opened on that host with the fixed
// file, remembered under the host's name, left alone while unchanged and
// closed when the drift goes; the digest goes to the notifier and the
// PR's news to its thread.
func TestPublishThroughPorts(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	host := &memHost{branches: map[string]map[string][]byte{}}
	note := &memNotifier{}
	st, err := state.Open(context.Background(), w.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, closeDB := w.runner()
	closeDB()
	r.Publisher = &publish.Publisher{Config: w.cfg, Store: st, Hosts: []publish.GitHost{host}, Notifier: note}
	once := func() Outcome {
		t.Helper()
		out, err := r.Once(context.Background(), now)
		if err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
			t.Fatalf("cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
		}
		now = now.Add(15 * time.Minute)
		return out
	}

	out := once()
	if len(out.Published.Opened) != 1 || out.Published.Opened[0] != "acme/shop#1" || len(host.prs) != 1 {
		t.Fatalf("one PR on the in-memory host expected: %+v, host %+v", out.Published, host.prs)
	}
	pr := host.prs[0]
	fixed := string(host.branches["acme/shop "+pr.Branch]["apps/shop/web.yaml"])
	if fixed == "" || strings.Contains(fixed, "replicas:") || !strings.HasPrefix(pr.Branch, "driftfix/shop/hpa-replicas-") {
		t.Fatalf("the branch must hold the file without replicas:\n%s", fixed)
	}
	recs, err := st.PRs(context.Background(), state.PROpen)
	if err != nil || len(recs) != 1 || recs[0].Repo != "git.example.org/acme/shop" {
		t.Fatalf("the PR must be remembered under its host: %+v %v", recs, err)
	}
	if len(note.sent) != 1 || !strings.HasPrefix(note.sent[0], "#gitops  ") || !strings.Contains(note.sent[0], "Newly stuck") {
		t.Fatalf("one digest through the notifier expected: %q", note.sent)
	}
	ghCalls := 0
	for _, n := range w.gh.Calls {
		ghCalls += n
	}
	if ghCalls+len(w.slack.Posts()) != 0 {
		t.Fatalf("nothing may reach GitHub or Slack: %d GitHub requests, %d Slack posts", ghCalls, len(w.slack.Posts()))
	}

	out = once() // unchanged: left alone, no digest
	if len(out.Published.Unchanged) != 1 || len(host.prs) != 1 || len(note.sent) != 1 {
		t.Fatalf("an unchanged fix must be left alone: %+v, %d PRs, %d messages", out.Published, len(host.prs), len(note.sent))
	}

	w.setApp("shop", "shop", false, now) // the drift went away
	out = once()
	if len(out.Published.Closed) != 1 || host.prs[0].State != "closed" {
		t.Fatalf("the PR must be closed when its drift goes: %+v, %+v", out.Published, host.prs[0])
	}
	if len(note.sent) != 2 || !strings.Contains(note.sent[1], " m1 ") {
		t.Fatalf("news of the PR must go in the thread of the digest that announced it: %q", note.sent)
	}
}

var (
	_ publish.GitHost  = (*memHost)(nil)
	_ publish.Notifier = (*memNotifier)(nil)
)

// The in-memory host's issues (the Drift Dashboard), kept beside its pull
// requests in the same numbering.

func (h *memHost) FindIssue(_ context.Context, r githost.Repo, marker string) (*githost.Issue, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range h.issues[r.String()] {
		if i.Author == "driftfix-bot" && strings.HasPrefix(i.Body, marker) {
			cp := *i
			return &cp, nil
		}
	}
	return nil, nil
}

func (h *memHost) Issue(_ context.Context, r githost.Repo, number int) (*githost.Issue, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range h.issues[r.String()] {
		if i.Number == number {
			cp := *i
			return &cp, nil
		}
	}
	return nil, nil
}

func (h *memHost) IssueLastEditor(ctx context.Context, r githost.Repo, number int) (string, string, error) {
	i, err := h.Issue(ctx, r, number)
	if err != nil || i == nil {
		return "", "", fmt.Errorf("%s has no issue %d", r, number)
	}
	return i.Body, "", nil
}

func (h *memHost) OpenIssue(_ context.Context, r githost.Repo, title, body string) (*githost.Issue, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.issues == nil {
		h.issues = map[string][]*githost.Issue{}
	}
	i := &githost.Issue{Number: 1000 + len(h.issues[r.String()]), Title: title, Body: body, State: "open", Author: "driftfix-bot"}
	h.issues[r.String()] = append(h.issues[r.String()], i)
	cp := *i
	return &cp, nil
}

func (h *memHost) EditIssue(_ context.Context, r githost.Repo, number int, title, body string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range h.issues[r.String()] {
		if i.Number == number {
			i.Title, i.Body = title, body
		}
	}
	return nil
}

func (h *memHost) CloseIssue(_ context.Context, r githost.Repo, number int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, i := range h.issues[r.String()] {
		if i.Number == number {
			i.State = "closed"
		}
	}
	return nil
}
