// Package publishtest has in-memory stand-ins for the publisher's ports, for
// tests: a Git host that keeps its repositories' branches, pull requests,
// checks, comments and issues in maps, and a notifier with a plain-text
// format of its own. They stand where bot/github and bot/slack stand, and
// nowhere else: the state store behind the publisher stays the real one.
package publishtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/templates"
)

// Host is a Git host kept in memory. Its zero value is ready: its name is
// git.example.org and driftfix writes there as driftfix-bot. Methods are
// safe for concurrent use.
type Host struct {
	// Name is the host's name (default git.example.org); Bot the login
	// driftfix writes as (default driftfix-bot).
	Name, Bot string

	mu       sync.Mutex
	branches map[string]map[string][]byte // "owner/name branch" → files
	heads    map[string]string            // "owner/name branch" → head commit
	prs      map[string][]*githost.PullRequest
	comments map[string][]githost.Comment // "owner/name#number"
	checks   map[string][]githost.Check   // by commit, in the order set
	issues   map[string][]*githost.Issue
	perms    map[string]string // login → permission
	calls    map[string]int
	fail     map[string]error // method → the error its next call returns
	ids      int64
}

var (
	_ publish.GitHost  = (*Host)(nil)
	_ publish.Notifier = (*Notifier)(nil)
)

func (h *Host) init() {
	if h.branches == nil {
		h.branches, h.heads, h.prs, h.comments = map[string]map[string][]byte{}, map[string]string{}, map[string][]*githost.PullRequest{}, map[string][]githost.Comment{}
		h.checks, h.issues, h.perms, h.calls, h.fail = map[string][]githost.Check{}, map[string][]*githost.Issue{}, map[string]string{}, map[string]int{}, map[string]error{}
	}
}

// call counts a call of method and returns the error it was told to fail
// with, once. The caller holds h.mu.
func (h *Host) call(method string) error {
	h.init()
	h.calls[method]++
	err := h.fail[method]
	delete(h.fail, method)
	return err
}

// FailNext makes the next call of method (by its name, e.g. "OpenPR") fail with err.
func (h *Host) FailNext(method string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	h.fail[method] = err
}

// Calls is how many times method was called.
func (h *Host) Calls(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[method]
}

// SetPermission gives login a permission (githost's levels) on every repository.
func (h *Host) SetPermission(login, perm string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	h.perms[strings.ToLower(login)] = perm
}

// PRs are a repository's ("owner/name") pull requests, oldest first, with
// their heads as the branches now hold them.
func (h *Host) PRs(repo string) []githost.PullRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	var out []githost.PullRequest
	for _, pr := range h.prs[repo] {
		out = append(out, h.read(repo, pr))
	}
	return out
}

// Branch is what a branch of a repository holds; nil when there is no such branch.
func (h *Host) Branch(repo, branch string) map[string][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	return maps.Clone(h.branches[repo+" "+branch])
}

// Checks are the checks set on a commit, in the order they were set.
func (h *Host) Checks(sha string) []githost.Check {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	return slices.Clone(h.checks[sha])
}

// Issues are a repository's issues, oldest first.
func (h *Host) Issues(repo string) []githost.Issue {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	var out []githost.Issue
	for _, i := range h.issues[repo] {
		out = append(out, *i)
	}
	return out
}

// CommentAs adds a person's comment to a pull request or issue.
func (h *Host) CommentAs(repo string, number int, login, association, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	h.ids++
	k := fmt.Sprintf("%s#%d", repo, number)
	h.comments[k] = append(h.comments[k], githost.Comment{ID: h.ids, Author: login, Association: association, Body: body})
}

// CommentsOn are the comments on a pull request or issue, oldest first.
func (h *Host) CommentsOn(repo string, number int) []githost.Comment {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	return slices.Clone(h.comments[fmt.Sprintf("%s#%d", repo, number)])
}

// read is a pull request as the host shows it: its head is its branch's.
func (h *Host) read(repo string, pr *githost.PullRequest) githost.PullRequest {
	cp := *pr
	if sha, ok := h.heads[repo+" "+pr.Branch]; ok && cp.State == "open" {
		cp.HeadSHA = sha
	}
	return cp
}

func (h *Host) name() string {
	if h.Name == "" {
		return "git.example.org"
	}
	return h.Name
}

func (h *Host) bot() string {
	if h.Bot == "" {
		return "driftfix-bot"
	}
	return h.Bot
}

// Host names the host.
func (h *Host) Host() string { return h.name() }

// Repo reads owner/name from the last two parts of a repository URL,
// whatever host the URL names: this host stands for every repository.
func (h *Host) Repo(url string) (githost.Repo, error) {
	dir, name := path.Split(strings.TrimSuffix(url, ".git"))
	owner := path.Base(dir)
	if owner == "" || owner == "." || owner == "/" || name == "" {
		return githost.Repo{}, fmt.Errorf("%s is not a repository of %s", url, h.name())
	}
	return githost.Repo{Host: h.name(), Owner: owner, Name: name}, nil
}

// Login is the account driftfix writes as.
func (h *Host) Login(context.Context) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bot(), h.call("Login")
}

// DefaultBranch is main.
func (h *Host) DefaultBranch(context.Context, githost.Repo) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return "main", h.call("DefaultBranch")
}

// Permission is what SetPermission gave login, or none.
func (h *Host) Permission(_ context.Context, _ githost.Repo, login string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("Permission"); err != nil {
		return "", err
	}
	if p, ok := h.perms[strings.ToLower(login)]; ok {
		return p, nil
	}
	return githost.PermissionNone, nil
}

// Push makes branch hold files; a branch that already holds them is unchanged.
func (h *Host) Push(_ context.Context, r githost.Repo, _, branch, message string, files map[string]githost.Change) (bool, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("Push"); err != nil {
		return false, false, err
	}
	k := r.String() + " " + branch
	old, existed := h.branches[k]
	now := maps.Clone(old)
	if now == nil {
		now = map[string][]byte{}
	}
	for f, c := range files {
		now[f] = c.Content
	}
	if existed && maps.EqualFunc(old, now, func(a, b []byte) bool { return string(a) == string(b) }) {
		return false, false, nil
	}
	h.branches[k] = now
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%s", h.heads[k], branch, message)
	for _, f := range slices.Sorted(maps.Keys(now)) {
		fmt.Fprintf(sum, "\x00%s\x00%s", f, now[f])
	}
	h.heads[k] = hex.EncodeToString(sum.Sum(nil))[:40]
	return true, !existed, nil
}

// DeleteBranch deletes a branch.
func (h *Host) DeleteBranch(_ context.Context, r githost.Repo, branch string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("DeleteBranch"); err != nil {
		return err
	}
	delete(h.branches, r.String()+" "+branch)
	delete(h.heads, r.String()+" "+branch)
	return nil
}

// FindPR is the newest pull request from branch, or nil.
func (h *Host) FindPR(_ context.Context, r githost.Repo, branch string) (*githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("FindPR"); err != nil {
		return nil, err
	}
	prs := h.prs[r.String()]
	for i := len(prs) - 1; i >= 0; i-- {
		if prs[i].Branch == branch {
			pr := h.read(r.String(), prs[i])
			return &pr, nil
		}
	}
	return nil, nil
}

// GetPR reads one pull request.
func (h *Host) GetPR(_ context.Context, r githost.Repo, number int) (*githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("GetPR"); err != nil {
		return nil, err
	}
	pr := h.pr(r, number)
	if pr == nil {
		return nil, fmt.Errorf("%s has no pull request %d", r, number)
	}
	cp := h.read(r.String(), pr)
	return &cp, nil
}

func (h *Host) pr(r githost.Repo, number int) *githost.PullRequest {
	for _, pr := range h.prs[r.String()] {
		if pr.Number == number {
			return pr
		}
	}
	return nil
}

// Holds reports whether revision is commit.
func (h *Host) Holds(_ context.Context, _ githost.Repo, revision, commit string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return revision == commit, h.call("Holds")
}

// OpenPRs lists the open pull requests whose branch starts with prefix.
func (h *Host) OpenPRs(_ context.Context, r githost.Repo, prefix string) ([]githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("OpenPRs"); err != nil {
		return nil, err
	}
	var out []githost.PullRequest
	for _, pr := range h.prs[r.String()] {
		if pr.State == "open" && strings.HasPrefix(pr.Branch, prefix) {
			out = append(out, h.read(r.String(), pr))
		}
	}
	return out, nil
}

// OpenPR opens a pull request from an existing branch; pull requests and
// issues share one numbering, as on GitHub.
func (h *Host) OpenPR(_ context.Context, r githost.Repo, n githost.NewPullRequest) (*githost.PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("OpenPR"); err != nil {
		return nil, err
	}
	if _, ok := h.branches[r.String()+" "+n.Branch]; !ok {
		return nil, fmt.Errorf("%s has no branch %s", r, n.Branch)
	}
	num := h.next(r)
	pr := &githost.PullRequest{Number: num, Title: n.Title, Body: n.Body, Branch: n.Branch, Base: n.Base, State: "open", Draft: n.Draft,
		HeadRepo: r.String(), Author: h.bot(), Labels: slices.Clone(n.Labels), URL: fmt.Sprintf("https://%s/%s/pull/%d", h.name(), r, num)}
	h.prs[r.String()] = append(h.prs[r.String()], pr)
	cp := h.read(r.String(), pr)
	return &cp, nil
}

func (h *Host) next(r githost.Repo) int {
	return len(h.prs[r.String()]) + len(h.issues[r.String()]) + 1
}

// EditPR sets a pull request's title and body.
func (h *Host) EditPR(_ context.Context, r githost.Repo, number int, title, body string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("EditPR"); err != nil {
		return err
	}
	pr := h.pr(r, number)
	if pr == nil {
		return fmt.Errorf("%s has no pull request %d", r, number)
	}
	pr.Title, pr.Body = title, body
	return nil
}

// ClosePR comments, closes the pull request and deletes its branch.
func (h *Host) ClosePR(_ context.Context, r githost.Repo, number int, branch, comment string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("ClosePR"); err != nil {
		return err
	}
	pr := h.pr(r, number)
	if pr == nil {
		return fmt.Errorf("%s has no pull request %d", r, number)
	}
	h.ids++
	k := fmt.Sprintf("%s#%d", r, number)
	h.comments[k] = append(h.comments[k], githost.Comment{ID: h.ids, Author: h.bot(), Body: comment})
	pr.State = "closed"
	delete(h.branches, r.String()+" "+branch)
	delete(h.heads, r.String()+" "+branch)
	return nil
}

// Merge merges an open pull request, as a person does.
func (h *Host) Merge(repo string, number int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	for _, pr := range h.prs[repo] {
		if pr.Number == number {
			pr.HeadSHA = h.heads[repo+" "+pr.Branch]
			pr.State, pr.Merged, pr.MergeCommitSHA = "closed", true, "merge-"+pr.HeadSHA
		}
	}
}

// Close closes an open pull request unmerged, as a person does.
func (h *Host) Close(repo string, number int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	for _, pr := range h.prs[repo] {
		if pr.Number == number {
			pr.HeadSHA = h.heads[repo+" "+pr.Branch]
			pr.State = "closed"
		}
	}
}

// Comments are a pull request's comments, oldest first.
func (h *Host) Comments(_ context.Context, r githost.Repo, number int) ([]githost.Comment, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("Comments"); err != nil {
		return nil, err
	}
	return slices.Clone(h.comments[fmt.Sprintf("%s#%d", r, number)]), nil
}

// Comment adds driftfix's comment to a pull request.
func (h *Host) Comment(_ context.Context, r githost.Repo, number int, body string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("Comment"); err != nil {
		return err
	}
	h.ids++
	k := fmt.Sprintf("%s#%d", r, number)
	h.comments[k] = append(h.comments[k], githost.Comment{ID: h.ids, Author: h.bot(), Body: body})
	return nil
}

// React acknowledges a comment; Reacted says whether driftfix did.
func (h *Host) React(context.Context, githost.Repo, int64, string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.call("React")
}

// Reacted reports no reaction: what was followed is in the state store.
func (h *Host) Reacted(context.Context, githost.Repo, int64, string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return false, h.call("Reacted")
}

// SetCheck adds a check to a commit.
func (h *Host) SetCheck(_ context.Context, _ githost.Repo, sha string, c githost.Check) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("SetCheck"); err != nil {
		return err
	}
	h.checks[sha] = append(h.checks[sha], c)
	return nil
}

// FindIssue is the oldest issue driftfix opened whose body starts with marker.
func (h *Host) FindIssue(_ context.Context, r githost.Repo, marker string) (*githost.Issue, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("FindIssue"); err != nil {
		return nil, err
	}
	for _, i := range h.issues[r.String()] {
		if i.Author == h.bot() && strings.HasPrefix(i.Body, marker) {
			cp := *i
			return &cp, nil
		}
	}
	return nil, nil
}

// Issue reads one issue; nil when there is none of that number.
func (h *Host) Issue(_ context.Context, r githost.Repo, number int) (*githost.Issue, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("Issue"); err != nil {
		return nil, err
	}
	for _, i := range h.issues[r.String()] {
		if i.Number == number {
			cp := *i
			return &cp, nil
		}
	}
	return nil, nil
}

// IssueLastEditor reads an issue's body; no one but driftfix edits here.
func (h *Host) IssueLastEditor(ctx context.Context, r githost.Repo, number int) (string, string, error) {
	i, err := h.Issue(ctx, r, number)
	if err != nil {
		return "", "", err
	}
	if i == nil {
		return "", "", fmt.Errorf("%s has no issue %d", r, number)
	}
	return i.Body, "", nil
}

// OpenIssue opens an issue as driftfix.
func (h *Host) OpenIssue(_ context.Context, r githost.Repo, title, body string) (*githost.Issue, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("OpenIssue"); err != nil {
		return nil, err
	}
	i := &githost.Issue{Number: h.next(r), Title: title, Body: body, State: "open", Author: h.bot()}
	h.issues[r.String()] = append(h.issues[r.String()], i)
	cp := *i
	return &cp, nil
}

// EditIssue sets an issue's title and body.
func (h *Host) EditIssue(_ context.Context, r githost.Repo, number int, title, body string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("EditIssue"); err != nil {
		return err
	}
	for _, i := range h.issues[r.String()] {
		if i.Number == number {
			i.Title, i.Body = title, body
			return nil
		}
	}
	return fmt.Errorf("%s has no issue %d", r, number)
}

// CloseIssue closes an issue.
func (h *Host) CloseIssue(_ context.Context, r githost.Repo, number int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.call("CloseIssue"); err != nil {
		return err
	}
	for _, i := range h.issues[r.String()] {
		if i.Number == number {
			i.State = "closed"
			return nil
		}
	}
	return fmt.Errorf("%s has no issue %d", r, number)
}

// Notifier is a notifier with a plain-text format of its own, standing
// where bot/slack stands: it lays a digest out as a title message and one
// message per line of news, and keeps the views it was given and what it
// sent. Its zero value is ready; methods are safe for concurrent use.
type Notifier struct {
	mu     sync.Mutex
	views  []templates.DigestView
	sent   []Sent
	failAt int // the Send call, counted down, that fails with fail
	fail   error
}

// Sent is one message the notifier sent.
type Sent struct {
	Channel, Thread, Text string
	ID                    string // the id Send returned
}

// Render lays a digest out: "digest for <instance>", then a line a message.
func (n *Notifier) Render(v templates.DigestView) ([]string, error) {
	n.mu.Lock()
	n.views = append(n.views, v)
	n.mu.Unlock()
	if v.Empty() {
		return nil, nil
	}
	msgs := []string{"digest for " + v.Instance}
	for _, a := range v.NewStuck {
		msgs = append(msgs, fmt.Sprintf("newly stuck: %s/%s", a.Namespace, a.App))
	}
	for _, g := range []struct {
		what string
		prs  []templates.PRLine
	}{{"opened", v.Opened}, {"updated", v.Updated}, {"merged", v.Merged}, {"closed", v.Closed}} {
		for _, l := range g.prs {
			msgs = append(msgs, fmt.Sprintf("fix %s for %s/%s: %s %s", g.what, l.Namespace, l.App, l.Title, l.URL))
		}
	}
	for _, a := range v.Fixed {
		msgs = append(msgs, fmt.Sprintf("synced again: %s/%s", a.Namespace, a.App))
	}
	for _, p := range v.ForPeople {
		msgs = append(msgs, fmt.Sprintf("for people: %s/%s %s %s (%s)", p.Namespace, p.App, p.Resource, p.Path, p.Cause))
	}
	for _, a := range v.CannotCompare {
		msgs = append(msgs, fmt.Sprintf("cannot compare: %s/%s", a.Namespace, a.App))
	}
	return msgs, nil
}

// Send sends one message (or fails, as FailAt said).
func (n *Notifier) Send(_ context.Context, channel, thread, message string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail != nil {
		if n.failAt--; n.failAt == 0 {
			err := n.fail
			n.fail = nil
			return "", err
		}
	}
	id := fmt.Sprintf("m%d", len(n.sent)+1)
	n.sent = append(n.sent, Sent{Channel: channel, Thread: thread, Text: message, ID: id})
	return id, nil
}

// FailAt makes the k-th Send from now (1: the next) fail with err, once.
func (n *Notifier) FailAt(k int, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.failAt, n.fail = k, err
}

// Views are the digest views Render was given, in order.
func (n *Notifier) Views() []templates.DigestView {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.views)
}

// Sent are the messages sent, in order.
func (n *Notifier) Sent() []Sent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.sent)
}
