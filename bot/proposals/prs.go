package proposals

import (
	"errors"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// PlatformPR is one pull request to a platform repository: one change to
// argocd-cm that ends a finding many applications of one instance share.
type PlatformPR struct {
	Instance string
	// Key names the shared finding (instance, source, cause, kind); it
	// names the branch, so restarts and replicas find the same PR again.
	Key         string
	Fingerprint string // the change's content; a changed change updates the PR
	Source      string // as the digest's fleet line names it
	RepoURL     string
	Base        string // "" or HEAD: the repository's default branch
	Branch      string
	Title, Body string
	Policy      config.Policy // the global policy: labels, reviewers, draft, dry run, quiet hours
	Edit        remediations.PlatformEdit
	Apps        []string // the applications it fixes, by AppKey
	// Held are the per-application fixes (by key) it holds back while open.
	Held []string
}

// IgnorePR is one pull request to the file that declares ignore rules: it
// removes the rules that hid nothing for the policy's staleAfter, and
// narrows at most one broad rule with the narrow-ignore remedy.
type IgnorePR struct {
	Instance string
	// Key names the file (instance, repository, file); it names the branch,
	// so restarts and replicas find the same pull request again.
	Key         string
	Fingerprint string // the change's content; a changed change updates the PR
	RepoURL     string
	Base        string // "" or HEAD: the repository's default branch
	Branch      string
	Title, Body string
	Policy      config.Policy // the global policy: labels, reviewers, draft, dry run, quiet hours
	File        string
	Before      []byte
	After       []byte
	// Rules are the identities of the rules it removes or narrows.
	Rules []string
	// Holds are the rules it changes by holder and place
	// (remediations.RuleAt): an application's own narrow-ignore fix of one
	// of them is held back while it is open.
	Holds []string
}

// PRHead is an open pull request whose head commit is to be predicted.
type PRHead struct {
	// RepoURL is the repository as Argo CD's Applications name it.
	RepoURL string
	Number  int
	// Base is the branch the pull request merges into; DefaultBranch the
	// repository's (an Application's HEAD or empty targetRevision).
	Base, DefaultBranch string
	HeadSHA             string
	// Fork says the head is in another repository: it is predicted from
	// Git alone, with the repository's own Application manifests and
	// without the cluster context or Argo CD's Applications, so nothing
	// read from the cluster is shown to an author outside the repository.
	Fork bool
}

// PRPrediction is what predicting a pull request's head gave.
type PRPrediction struct {
	// Check is driftfix/predict's check of the head: failed with an
	// annotation per prediction, or neutral.
	Check githost.Check
	// Review carries a suggestion for each prediction whose fix is one
	// line's edit on a line of the change; nil when there is none.
	Review *githost.Review
	// Predictions counts the fields predicted; Applications the
	// applications predicted.
	Predictions  int
	Applications []string
}

// ErrCycleBudget says the cycle's prediction budget (limits.predictPerCycle)
// is spent: the pull request waits for the next cycle, unpredicted.
var ErrCycleBudget = errors.New("this cycle's prediction budget (limits.predictPerCycle) is spent: the next cycle predicts it")

// RenderLimits are the policy's bounds for the renders a proposed fix is
// verified with (and a pull request predicted with); fields the policy
// leaves out keep render.DefaultLimits.
func RenderLimits(l config.Limits) render.Limits {
	return render.Limits{MaxChartBytes: l.ChartBytes, MaxValuesBytes: l.ValuesBytes, MaxRenderedBytes: l.RenderedBytes, Timeout: l.RenderTimeout}
}
