package publish

import (
	"context"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/templates"
)

// GitHost is the whole port to a Git host, where the applications'
// repositories live and their pull requests are opened: the composition
// of the capability ports below, which is what a host's adapter (bot/github)
// provides and Publisher.Hosts holds. Each part of the publisher asks only
// for the ports it uses; a GitLab or Gitea package would provide them in
// the same githost terms.
type GitHost interface {
	RepoHost
	BranchHost
	PullHost
	CheckHost
	IssueHost
	SteerHost
}

// RepoHost names a host and its repositories and says who may write to
// them: what every other port builds on.
type RepoHost interface {
	// Host names the host (its web address, e.g. github.com); it is the
	// Host of the repositories this host serves.
	Host() string
	// Repo reads a repository URL as Argo CD has it, or says why it is not
	// one of this host's repositories.
	Repo(url string) (githost.Repo, error)
	// Login is the account driftfix writes as.
	Login(ctx context.Context) (string, error)
	// DefaultBranch is the repository's default branch.
	DefaultBranch(ctx context.Context, r githost.Repo) (string, error)
	// Permission is an account's permission on the repository (githost's
	// Permission levels); only accounts that can write may steer driftfix.
	Permission(ctx context.Context, r githost.Repo, login string) (string, error)
}

// BranchHost writes the branches a pull request is opened from: the
// contents driftfix proposes.
type BranchHost interface {
	RepoHost
	// Push makes branch hold base's head plus files as one commit, never
	// reverting a file changed since it was synced (githost.ErrFileChanged)
	// and never overwriting a person's commits (githost.ErrNotOurs). It
	// reports whether the branch changed and whether it was created.
	Push(ctx context.Context, r githost.Repo, base, branch, message string, files map[string]githost.Change) (changed, created bool, err error)
	// DeleteBranch deletes a branch driftfix made.
	DeleteBranch(ctx context.Context, r githost.Repo, branch string) error
}

// PullHost finds, opens, edits and closes pull requests.
type PullHost interface {
	RepoHost
	// FindPR is the newest pull request from branch, open or closed, or nil.
	FindPR(ctx context.Context, r githost.Repo, branch string) (*githost.PullRequest, error)
	// GetPR reads one pull request.
	GetPR(ctx context.Context, r githost.Repo, number int) (*githost.PullRequest, error)
	// Holds reports whether revision holds commit (is it, or a later commit
	// on top of it): Argo CD may sync a revision past a merge.
	Holds(ctx context.Context, r githost.Repo, revision, commit string) (bool, error)
	// OpenPRs lists the open pull requests whose branch starts with prefix.
	OpenPRs(ctx context.Context, r githost.Repo, prefix string) ([]githost.PullRequest, error)
	// OpenPR opens a pull request from an existing branch.
	OpenPR(ctx context.Context, r githost.Repo, n githost.NewPullRequest) (*githost.PullRequest, error)
	// EditPR sets a pull request's title and body.
	EditPR(ctx context.Context, r githost.Repo, number int, title, body string) error
	// ClosePR comments, closes the pull request and deletes its branch.
	ClosePR(ctx context.Context, r githost.Repo, number int, branch, comment string) error
}

// CheckHost publishes checks of commits: the fix pull requests' cooldown
// and driftfix/predict.
type CheckHost interface {
	RepoHost
	// SetCheck publishes a check of a commit under c.Name, replacing the
	// one published before under that name on the same commit.
	SetCheck(ctx context.Context, r githost.Repo, sha string, c githost.Check) error
}

// SteerHost is the conversation on a pull request, where people steer
// driftfix: comments, and the reactions that acknowledge commands.
type SteerHost interface {
	RepoHost
	// Comments are a pull request's comments, oldest first, with their authors.
	Comments(ctx context.Context, r githost.Repo, number int) ([]githost.Comment, error)
	// Comment adds a comment to a pull request.
	Comment(ctx context.Context, r githost.Repo, number int, body string) error
	// React acknowledges a comment with a reaction ("+1": a command followed).
	React(ctx context.Context, r githost.Repo, commentID int64, reaction string) error
	// Reacted reports whether login reacted to the comment: driftfix's own
	// acknowledgement says a command was followed, even after its state
	// database was lost.
	Reacted(ctx context.Context, r githost.Repo, commentID int64, login string) (bool, error)
}

// IssueHost keeps issues: the Drift Dashboard.
type IssueHost interface {
	RepoHost
	// FindIssue is the oldest issue, open or closed, that driftfix's own
	// account opened and whose body starts with marker, or nil. Pull
	// requests and other accounts' issues never count.
	FindIssue(ctx context.Context, r githost.Repo, marker string) (*githost.Issue, error)
	// Issue reads one issue; nil when the number is no issue (or a pull request).
	Issue(ctx context.Context, r githost.Repo, number int) (*githost.Issue, error)
	// IssueLastEditor reads an issue's body together with the login of the
	// account that edited it last ("" if it was never edited), in one read.
	IssueLastEditor(ctx context.Context, r githost.Repo, number int) (body, editor string, err error)
	// OpenIssue opens an issue.
	OpenIssue(ctx context.Context, r githost.Repo, title, body string) (*githost.Issue, error)
	// EditIssue sets an issue's title and body.
	EditIssue(ctx context.Context, r githost.Repo, number int, title, body string) error
	// CloseIssue closes an issue driftfix opened (a duplicate of an older one).
	CloseIssue(ctx context.Context, r githost.Repo, number int) error
}

// LabelHost is a Git host that can say who applied a label to a pull
// request. A host that cannot is never stopped by a label alone: anyone
// with triage access may label, and only accounts that can write to the
// repository steer driftfix (they can still comment /driftfix ignore).
type LabelHost interface {
	// LabeledBy is the login that last applied label to pull request
	// number and the id of that event; "" when no event shows it applied.
	LabeledBy(ctx context.Context, r githost.Repo, number int, label string) (login string, event int64, err error)
}

// FileHost is a Git host that can read one file of a repository: the
// policy file a writers entry chosen on the Drift Dashboard is added to. On
// a host that cannot, no such pull request is proposed.
type FileHost interface {
	// File is the content of file at ref (a branch or commit), nil when
	// there is no such file.
	File(ctx context.Context, r githost.Repo, ref, file string) ([]byte, error)
}

// HistoryHost is a Git host that can list a branch's newest commit
// subjects: a policy's titleStyle auto reads a repository's style from
// them. On a host that cannot, titles under auto are plain.
type HistoryHost interface {
	// RecentSubjects are the first lines of ref's newest commits, at most
	// n, newest first, merge commits left out.
	RecentSubjects(ctx context.Context, r githost.Repo, ref string, n int) ([]string, error)
}

// SignerHost is a Git host that can say which name and email the commits
// driftfix pushes carry as their author, for the Signed-off-by trailer
// signOff asks for. On a host that cannot, a signed-off pull request is
// not published.
type SignerHost interface {
	// CommitIdentity is the author name and email of driftfix's commits to r.
	CommitIdentity(ctx context.Context, r githost.Repo) (name, email string, err error)
}

// Notifier is the port to where digests are read (Slack today, by
// bot/slack). The publisher hands it the neutral digest view
// (templates.DigestView: applications, findings, fix pull requests, links)
// and never sees the notifier's own format: Render lays a digest out as the
// messages it is sent as, which the publisher queues in the state store,
// opaque, and Send sends one at a time, so a digest stopped half-way goes
// on where it stopped. A digest is a first message and its thread.
type Notifier interface {
	// Render lays a digest out as messages, in order: the first one, then
	// the replies in its thread. An empty digest is no message.
	Render(v templates.DigestView) ([]string, error)
	// Send sends one message Render made to channel, in thread unless it is
	// empty, and returns the message's id (its thread, when it starts one).
	Send(ctx context.Context, channel, thread, message string) (string, error)
}
