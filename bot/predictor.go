package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/predict"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/templates"
)

// Predictor predicts pull requests' heads with what the cycle read: the
// Applications its instances list on the repository (read whole, once per
// cycle) and each instance's cluster context. Safe for concurrent use: the
// cycle predicts its pull requests while forks' are predicted apart.
type Predictor struct {
	// Charts fetches the charts a base branch names (nil: none).
	Charts predict.FetchCharts

	cfg       *config.Config
	instances []plan.Instance
	res       *plan.CycleResult
	// cluster is the cluster read of an instance (res.Cluster).
	cluster func(instance string) func(*drift.Snapshot) []drift.Object

	mu   sync.Mutex
	apps map[string]drift.Object // AppKey → the Application, read once
	// maxApps bounds the applications one pull request's prediction renders.
	maxApps int
	// spent is the time this cycle's predictions took, against the
	// policy's limits.predictPerCycle.
	spent time.Duration
}

// NewPredictor predicts with a cycle's instances and result.
func NewPredictor(cfg *config.Config, instances []plan.Instance, res *plan.CycleResult) *Predictor {
	return &Predictor{cfg: cfg, instances: instances, res: res, cluster: res.Cluster, apps: map[string]drift.Object{}, maxApps: maxPRApplications}
}

// maxPRApplications bounds the applications one pull request's prediction
// renders: a cycle predicts many pull requests.
const maxPRApplications = 25

// maxKnownApps bounds the Applications of one repository read whole for one
// pull request.
const maxKnownApps = 50

// Repositories are the repositories of the applications the cycle listed
// (their first source's), each once, in the order listed.
func (p *Predictor) Repositories() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range p.res.Apps {
		u := a.App.RepoURL
		if u == "" || seen[u] || !p.res.Owns(plan.AppKey(a.Instance, a.App.Namespace, a.App.Name)) {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || predict.SameRepository(u, o)
		}
		seen[u] = true
		if !dup {
			out = append(out, u)
		}
	}
	return out
}

// Predict renders every application of the repository the pull request
// touches, from its base branch and its head commit, and says which fields
// will stay OutOfSync after a sync of the change. An error says the
// repository could not be read (the head is tried again next cycle); a
// change that does not render gets a neutral check that says so.
func (p *Predictor) Predict(ctx context.Context, h proposals.PRHead) (proposals.PRPrediction, error) {
	var reader *plan.Instance
	for i := range p.instances {
		if p.instances[i].BranchFiles != nil {
			reader = &p.instances[i]
			break
		}
	}
	if reader == nil {
		return proposals.PRPrediction{}, errors.New("no instance reads repositories: pull requests cannot be predicted")
	}
	baseFiles, _, err := reader.BranchFiles(ctx, h.RepoURL, h.Base)
	if err != nil {
		return proposals.PRPrediction{}, fmt.Errorf("read %s at the base branch %s: %w", h.RepoURL, h.Base, err)
	}
	headFiles, sha, err := reader.BranchFiles(ctx, h.RepoURL, h.HeadSHA)
	if err != nil {
		return proposals.PRPrediction{}, fmt.Errorf("read %s at the head %s of #%d: %w", h.RepoURL, short(h.HeadSHA), h.Number, err)
	}
	if sha != h.HeadSHA {
		return proposals.PRPrediction{}, fmt.Errorf("read %s at %s: got commit %s", h.RepoURL, short(h.HeadSHA), short(sha))
	}
	var known []drift.Object
	var clusters map[string]func(*drift.Snapshot) []drift.Object
	var servers map[string]*plan.Instance
	if !h.Fork {
		if known, clusters, servers, err = p.known(ctx, h); err != nil {
			return proposals.PRPrediction{}, err
		}
	}
	rctx, cancel, err := p.budget(ctx)
	if err != nil {
		return proposals.PRPrediction{}, err
	}
	defer cancel()
	opt := predict.Options{Applications: known, Repositories: []string{h.RepoURL}, Suggest: true, Render: proposals.RenderLimits(p.cfg.Limits), MaxApplications: p.maxApps}
	// Charts are fetched only from the repositories the base branch names:
	// a pull request (a fork's above all) never chooses a URL the bot reads.
	opt.Charts, opt.ChartsFromBase, opt.NotFetched = p.Charts, true, "the bot fetches no chart here"
	if !h.Fork {
		// Argo CD renders what predict cannot (remote and OCI charts,
		// plugins, other repositories) at the base branch and the head
		// commit, which its repo-server fetches from the repository; a
		// fork's head is never sent to it.
		opt.Remote = func(app drift.Object, rev predict.Revision) ([]drift.Object, error) {
			ns, name := drift.Str(app, "metadata", "namespace"), drift.Str(app, "metadata", "name")
			in := servers[ns+"/"+name]
			if in == nil || in.Client == nil {
				return nil, fmt.Errorf("application %s is not one of Argo CD's", name)
			}
			return in.Client.Manifests(rctx, ns, name, argocd.RevisionAt(app, rev.Commit, func(u string) bool { return predict.SameRepository(u, h.RepoURL) }), false)
		}
		opt.ClusterFor = func(s *drift.Snapshot) []drift.Object {
			c := clusters[drift.Str(s.Application, "metadata", "name")]
			if c == nil {
				c = clusters[""]
			}
			if c == nil {
				return nil
			}
			return c(s)
		}
	}
	base := predict.Revision{Name: h.Base, Files: baseFiles, Commit: h.Base}
	head := predict.Revision{Name: short(h.HeadSHA), Files: headFiles, Commit: h.HeadSHA}
	start := time.Now()
	res, err := predict.Run(rctx, base, head, opt)
	cancel()
	p.mu.Lock()
	p.spent += time.Since(start)
	p.mu.Unlock()
	var over *predict.BudgetError
	if errors.As(err, &over) && res != nil {
		if over.Setting == cycleBudgetKey {
			// cut by the cycle's budget, not its own: tried again next cycle
			return proposals.PRPrediction{}, fmt.Errorf("predict #%d: %w", h.Number, proposals.ErrCycleBudget)
		}
		return overBudget(res, over), nil
	}
	if err != nil && ctx.Err() != nil {
		return proposals.PRPrediction{}, fmt.Errorf("predict #%d: %w", h.Number, err)
	}
	if errors.Is(err, predict.ErrNoApplication) {
		res, err = &predict.Result{}, nil
	}
	if errors.Is(err, predict.ErrTooManyApplications) {
		return proposals.PRPrediction{Check: githost.Check{Name: predict.CheckName, Neutral: true, Title: "driftfix did not predict this change",
			Summary: fmt.Sprintf("The change touches more than %d applications: the bot predicts up to %d per pull request (each is rendered up to four times). Run %s in CI to predict them all.",
				p.maxApps, p.maxApps, templates.Code("driftfix predict --repo . --base "+h.Base))}}, nil
	}
	if err != nil {
		return proposals.PRPrediction{Check: githost.Check{Name: predict.CheckName, Neutral: true, Title: "driftfix could not predict this change",
			Summary: "The change could not be predicted: " + templates.Text(err.Error()) + ". Argo CD may not render it either."}}, nil
	}
	out := proposals.PRPrediction{Check: predict.Check(res), Review: predict.Review(res, base, head, h.HeadSHA), Predictions: len(res.Predictions), Applications: res.Applications}
	if h.Fork {
		out.Check.Text += "\nThis pull request comes from a fork: it was predicted from Git alone (the repository's Application manifests), without Argo CD's Applications or the cluster's HorizontalPodAutoscalers, webhooks and CRDs.\n"
	}
	return out, nil
}

// The policy keys of the prediction budgets, as checks name them.
const (
	prBudgetKey    = "limits.predictPerPullRequest"
	cycleBudgetKey = "limits.predictPerCycle"
)

// budget is the context one pull request's renders run under: done when
// its own budget runs out, or the cycle's, whichever comes first (the cause
// a *predict.BudgetError naming it). A spent cycle budget is proposals.ErrCycleBudget.
func (p *Predictor) budget(ctx context.Context) (context.Context, context.CancelFunc, error) {
	perPR, perCycle := p.cfg.Limits.PredictBudgets()
	p.mu.Lock()
	left := perCycle - p.spent
	p.mu.Unlock()
	if left <= 0 {
		return nil, nil, proposals.ErrCycleBudget
	}
	b := &predict.BudgetError{Of: "per pull request", Budget: perPR, Setting: prBudgetKey}
	d := perPR
	if left < perPR {
		b, d = &predict.BudgetError{Of: "per cycle", Budget: perCycle, Setting: cycleBudgetKey}, left
	}
	rctx, cancel := context.WithTimeoutCause(ctx, d, b)
	return rctx, cancel, nil
}

// overBudget is the neutral check of a head whose renders ran past their
// budget: it names the budget and the key that raises it, keeps what was
// predicted in time as annotations, and lists what was not.
func overBudget(res *predict.Result, b *predict.BudgetError) proposals.PRPrediction {
	ck := predict.Check(res)
	ck.Neutral, ck.Success = true, false
	ck.Title = "driftfix stopped predicting this change: over its render budget"
	ck.Summary = fmt.Sprintf("Rendering this change took longer than driftfix's render budget %s (%s, the policy key %s): the renders were stopped and the check is neutral. %d %s predicted in time, %d not. Argo CD may take as long to render it.",
		b.Of, b.Budget, templates.Code(b.Setting), len(res.Applications), plural(len(res.Applications), "application was", "applications were"), len(res.NotPredicted))
	return proposals.PRPrediction{Check: ck, Predictions: len(res.Predictions), Applications: res.Applications}
}

// known are the Applications the cycle listed whose sources name the pull
// request's repository at its base branch, read whole, with the cluster
// read of the instance of each (by name; "" the first such instance's).
func (p *Predictor) known(ctx context.Context, h proposals.PRHead) ([]drift.Object, map[string]func(*drift.Snapshot) []drift.Object, map[string]*plan.Instance, error) {
	clusters := map[string]func(*drift.Snapshot) []drift.Object{}
	servers := map[string]*plan.Instance{}
	var out []drift.Object
	for _, a := range p.res.Apps {
		key := plan.AppKey(a.Instance, a.App.Namespace, a.App.Name)
		if a.App.RepoURL == "" || !predict.SameRepository(a.App.RepoURL, h.RepoURL) || !p.res.Owns(key) {
			continue
		}
		if len(out) >= maxKnownApps {
			break
		}
		in := p.instance(a.Instance)
		if in == nil || in.Client == nil {
			continue
		}
		p.mu.Lock()
		obj, ok := p.apps[key]
		p.mu.Unlock()
		if !ok {
			got, err := in.Client.GetApplication(ctx, a.App.Namespace, a.App.Name)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("read application %s/%s: %w", a.App.Namespace, a.App.Name, err)
			}
			obj = got
			p.mu.Lock()
			p.apps[key] = obj
			p.mu.Unlock()
		}
		if !readsBase(obj, h) {
			continue
		}
		out = append(out, obj)
		servers[drift.Str(obj, "metadata", "namespace")+"/"+drift.Str(obj, "metadata", "name")] = in
		c := p.cluster(a.Instance)
		clusters[a.App.Name] = c
		if clusters[""] == nil {
			clusters[""] = c
		}
	}
	if clusters[""] == nil {
		for _, in := range p.instances {
			if c := p.cluster(in.Name); c != nil {
				clusters[""] = c
				break
			}
		}
	}
	return out, clusters, servers, nil
}

// readsBase says whether an Application reads the pull request's repository
// at its base branch: a source of that repository whose targetRevision is
// the base, or HEAD (or empty) when the base is the default branch.
func readsBase(app drift.Object, h proposals.PRHead) bool {
	for _, src := range drift.Sources(app) {
		if !predict.SameRepository(src.RepoURL, h.RepoURL) {
			continue
		}
		rev := strings.TrimPrefix(src.TargetRevision, "refs/heads/")
		if rev == h.Base || ((rev == "" || rev == "HEAD") && h.Base == h.DefaultBranch) {
			return true
		}
	}
	return false
}

func (p *Predictor) instance(name string) *plan.Instance {
	for i := range p.instances {
		if p.instances[i].Name == name {
			return &p.instances[i]
		}
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
