// Package events turns GitHub's webhook deliveries into units of work for
// the bot: a receiver that checks each delivery (its signature, size and
// id) and answers at once, and a queue that coalesces the work per pull
// request, dashboard or repository and runs it one unit at a time. The
// scheduled cycle stays the safety net: a delivery lost on the way is
// caught by the next poll.
package events

import (
	"fmt"
	"strings"
	"time"

	gh "github.com/google/go-github/v89/github"
)

// Kind is what a unit of work does.
type Kind string

// The kinds of work deliveries lead to.
const (
	// Predict publishes driftfix/predict on a pull request's current head.
	Predict Kind = "predict"
	// Comment follows the commands of a new or edited comment on an issue
	// or pull request.
	Comment Kind = "comment"
	// Dashboard acts on the boxes of an edited Drift Dashboard.
	Dashboard Kind = "dashboard"
	// Verify runs driftfix/verify again on a commit (a re-run asked on GitHub).
	Verify Kind = "verify"
	// Push re-checks the applications that track a branch that moved.
	Push Kind = "push"
	// Refresh looks the App's installations up again.
	Refresh Kind = "refresh"
	// App re-checks an Argo CD application that turned OutOfSync after a
	// sync (its watch stream or a notification said so).
	App Kind = "app"
	// Recheck diagnoses one application again now (a person pressed
	// Recheck in the Slack digest).
	Recheck Kind = "recheck"
)

// Work is one unit of work a delivery asks for.
type Work struct {
	Kind Kind
	// RepoURL is the repository's web address as GitHub sends it.
	RepoURL string
	// Repo is owner/name.
	Repo string
	// Number is the pull request's or issue's.
	Number int
	// HeadSHA is the commit a check is asked on (Predict, Verify) or the
	// commit a branch moved to (Push).
	HeadSHA string
	// Branch is the branch that moved (Push); DefaultBranch the
	// repository's.
	Branch, DefaultBranch string
	// Rerun says a person asked for the check again: it is published even
	// when the head was checked before.
	Rerun bool
	// Installation is the App installation the delivery came from (0: none).
	Installation int64
	// At is when the event happened, as the payload says (zero when it
	// does not): work older than what was already queued for the same key
	// does nothing.
	At time.Time
	// Delivery is the X-GitHub-Delivery the work came from, for the logs.
	Delivery string
	// App is the application's key (instance/namespace/name) an App or
	// Recheck unit is about.
	App string
}

// Key is what work is coalesced by: one pending unit per pull request,
// issue, branch or installation refresh.
func (w Work) Key() string {
	switch w.Kind {
	case Push:
		return fmt.Sprintf("push %s %s", strings.ToLower(w.Repo), w.Branch)
	case Refresh:
		return "refresh"
	case App:
		return "app " + w.App
	case Verify:
		return fmt.Sprintf("verify %s %s", strings.ToLower(w.Repo), w.HeadSHA)
	case Recheck:
		return "recheck " + w.App
	}
	return fmt.Sprintf("%s %s#%d", w.Kind, strings.ToLower(w.Repo), w.Number)
}

// String names the work as the logs say it.
func (w Work) String() string {
	switch w.Kind {
	case Push:
		return fmt.Sprintf("push to %s %s", w.Repo, w.Branch)
	case Refresh:
		return "refresh the installations"
	case App:
		return "re-check application " + w.App
	case Verify:
		return fmt.Sprintf("verify %s@%s", w.Repo, short(w.HeadSHA))
	case Recheck:
		return "recheck " + w.App
	}
	return fmt.Sprintf("%s %s#%d", w.Kind, w.Repo, w.Number)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Check names of driftfix's checks, which a re-run asks for again.
const (
	PredictCheck = "driftfix/predict"
	VerifyCheck  = "driftfix/verify"
)

// dashboardMarker starts a Drift Dashboard's body.
const dashboardMarker = "<!-- driftfix:dashboard="

// FromEvent maps a parsed delivery (go-github's type for it) to the work it
// asks for, or says why it asks for none.
func FromEvent(event any) ([]Work, string) {
	switch e := event.(type) {
	case *gh.PingEvent:
		return nil, "ping: the webhook reaches driftfix"
	case *gh.PullRequestEvent:
		switch a := e.GetAction(); a {
		case "opened", "synchronize", "reopened", "ready_for_review":
			pr := e.GetPullRequest()
			return one(Work{Kind: Predict, RepoURL: e.GetRepo().GetHTMLURL(), Repo: e.GetRepo().GetFullName(), Number: pr.GetNumber(),
				HeadSHA: pr.GetHead().GetSHA(), Installation: e.GetInstallation().GetID(), At: pr.GetUpdatedAt().Time})
		default:
			return nil, "pull_request " + a + ": driftfix acts on opened, synchronize, reopened and ready_for_review"
		}
	case *gh.IssueCommentEvent:
		switch a := e.GetAction(); a {
		case "created", "edited":
			if e.GetComment().GetUser().GetType() == "Bot" {
				return nil, "issue_comment by a bot account (" + e.GetComment().GetUser().GetLogin() + "): only people give commands"
			}
			return one(Work{Kind: Comment, RepoURL: e.GetRepo().GetHTMLURL(), Repo: e.GetRepo().GetFullName(), Number: e.GetIssue().GetNumber(),
				Installation: e.GetInstallation().GetID(), At: e.GetComment().GetUpdatedAt().Time})
		default:
			return nil, "issue_comment " + a + ": driftfix acts on created and edited"
		}
	case *gh.IssuesEvent:
		if a := e.GetAction(); a != "edited" {
			return nil, "issues " + a + ": driftfix acts on edited Drift Dashboards"
		}
		if !strings.Contains(e.GetIssue().GetBody(), dashboardMarker) {
			return nil, "issues edited: not a Drift Dashboard"
		}
		if e.GetSender().GetType() == "Bot" {
			return nil, "issues edited by a bot account (" + e.GetSender().GetLogin() + "): only people tick boxes"
		}
		return one(Work{Kind: Dashboard, RepoURL: e.GetRepo().GetHTMLURL(), Repo: e.GetRepo().GetFullName(), Number: e.GetIssue().GetNumber(),
			Installation: e.GetInstallation().GetID(), At: e.GetIssue().GetUpdatedAt().Time})
	case *gh.CheckRunEvent:
		if a := e.GetAction(); a != "rerequested" {
			return nil, "check_run " + a + ": driftfix acts on rerequested"
		}
		run := e.GetCheckRun()
		base := Work{RepoURL: e.GetRepo().GetHTMLURL(), Repo: e.GetRepo().GetFullName(), HeadSHA: run.GetHeadSHA(), Rerun: true, Installation: e.GetInstallation().GetID()}
		switch run.GetName() {
		case PredictCheck:
			var prs []*gh.PullRequest
			if run != nil {
				prs = run.PullRequests
			}
			return predictEach(base, prs)
		case VerifyCheck:
			base.Kind = Verify
			return one(base)
		}
		return nil, "check_run rerequested: " + run.GetName() + " is not a driftfix check"
	case *gh.CheckSuiteEvent:
		if a := e.GetAction(); a != "rerequested" {
			return nil, "check_suite " + a + ": driftfix acts on rerequested"
		}
		s := e.GetCheckSuite()
		base := Work{RepoURL: e.GetRepo().GetHTMLURL(), Repo: e.GetRepo().GetFullName(), HeadSHA: s.GetHeadSHA(), Rerun: true, Installation: e.GetInstallation().GetID()}
		var prs []*gh.PullRequest
		if s != nil {
			prs = s.PullRequests
		}
		works, _ := predictEach(base, prs)
		v := base
		v.Kind = Verify
		return append(works, v), ""
	case *gh.PushEvent:
		ref := e.GetRef()
		if !strings.HasPrefix(ref, "refs/heads/") {
			return nil, "push to " + ref + ": not a branch"
		}
		if e.GetDeleted() {
			return nil, "push deleted " + ref
		}
		r := e.GetRepo()
		return one(Work{Kind: Push, RepoURL: r.GetHTMLURL(), Repo: r.GetFullName(), Branch: strings.TrimPrefix(ref, "refs/heads/"),
			DefaultBranch: r.GetDefaultBranch(), HeadSHA: e.GetAfter(), Installation: e.GetInstallation().GetID()})
	case *gh.InstallationEvent:
		return one(Work{Kind: Refresh, Installation: e.GetInstallation().GetID()})
	case *gh.InstallationRepositoriesEvent:
		return one(Work{Kind: Refresh, Installation: e.GetInstallation().GetID()})
	}
	return nil, fmt.Sprintf("%T is not an event driftfix acts on", event)
}

func one(w Work) ([]Work, string) { return []Work{w}, "" }

// predictEach is Predict work on each pull request a check was on.
func predictEach(base Work, prs []*gh.PullRequest) ([]Work, string) {
	if len(prs) == 0 {
		return nil, "the check is on no pull request of the repository"
	}
	var out []Work
	for _, pr := range prs {
		w := base
		w.Kind, w.Number = Predict, pr.GetNumber()
		out = append(out, w)
	}
	return out, ""
}
