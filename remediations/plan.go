package remediations

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
)

// Repo is the application's repository as path → content.
type Repo map[string][]byte

// RepoFromSnapshot returns the repository files a snapshot carries.
func RepoFromSnapshot(s *drift.Snapshot) Repo {
	r := Repo{}
	for k, v := range s.Repo.Files {
		r[k] = []byte(v)
	}
	return r
}

// Edit is one changed file.
type Edit struct {
	File   string
	Before []byte
	After  []byte
	// steps make the change; they are re-run when several plans edit one file.
	steps []func([]byte) ([]byte, error)
}

// Rationale says why a plan is the fix: what causes the drift, the evidence,
// why this change is the narrowest, its risk and how to undo it.
type Rationale struct {
	Cause    drift.Cause
	Evidence []drift.Evidence
	Why      string
	Risk     string
	Undo     string
}

// Plan is the fix for one resource (or one rule, or one platform setting):
// non-overlapping file edits, the findings they fix and the rationale. A plan
// whose edits could not be made or verified has no edits and says why in Dropped.
type Plan struct {
	Kind      drift.FixKind
	Resource  drift.Ref
	Findings  []drift.Finding
	Edits     []Edit
	Rationale Rationale
	// Verification says how the plan's edits were checked; it is set only
	// on a plan that edits a file. Read Verified, not this field, to tell a
	// verified fix.
	Verification string
	// Instructions say what to change, and where, when the file is not in the
	// repository driftfix edits (an Application defined elsewhere, argocd-cm in
	// a platform repository). A plan with instructions and no edits is never
	// verified: nothing driftfix wrote was checked.
	Instructions string
	Dropped      string // why nothing is proposed
	// Passed are the fix kinds considered for these findings before this
	// one, and why they were not used (the policy, the safety model, a plan
	// that did not verify).
	Passed []Attempt
	// assumes states what re-diagnosis had to assume, added to Verification.
	assumes string
	// checked states what rendering the generating source again showed
	// (generated.go), added to Verification.
	checked string
	// reached are edited files whose reach the remedy checked itself, by
	// rendering everything they make again (an ApplicationSet, a parent's
	// overlay or chart); sharedEdit leaves them to it.
	reached []string
	// rendered are the parent applications whose render of the edit the
	// remedy checked; sharedEdit leaves them to it.
	rendered []string
}

// Verified reports whether the plan is a verified fix: it edits at least one
// file, was not dropped, and re-diagnosing the application with its edits
// applied showed its findings gone. It is the one place that decides it:
// every check, pull request, digest and CLI output reads it. A plan of
// instructions only (no file edited) is never verified, whatever a stored
// copy of it says.
func (p Plan) Verified() bool {
	return p.Dropped == "" && len(p.Edits) > 0 && p.Verification != ""
}

// Options are the inputs of planning besides the diagnosis.
type Options struct {
	Now         time.Time
	Sensitivity drift.Sensitivity
	// Rediagnose diagnoses a changed snapshot; plans are verified with it.
	Rediagnose func(*drift.Snapshot) (*drift.Report, error)
	// RuleCovers returns the paths an ignore rule removes from a resource
	// (jsonPointers, jq expressions, the fields its managedFieldsManagers own);
	// the rules a plan adds are judged by them. Without it only jsonPointers
	// are judged before verification.
	RuleCovers func(drift.IgnoreRule, *drift.Resource) []drift.Pointer
	// Render bounds every render a plan is verified with (zero fields take
	// render.DefaultLimits).
	Render render.Limits
	// Decide chooses each finding's fix kinds, in order, before anything is
	// rendered (the policy's Decide); nil keeps the classifier's suggestion.
	Decide Decider
}

// Remedy plans one fix kind. Everything driftfix knows about a kind is here:
// the policy accepts its Kind, the fix table of docs/causes-and-fixes.md shows its Doc, the pull
// request is titled by its Title, findings are grouped and located by it.
type Remedy struct {
	// Kind is the fix kind, as used in the policy, PRs and output.
	Kind drift.FixKind
	// Doc says in one line what the fix changes (the fix table of docs/causes-and-fixes.md).
	Doc string
	// Title is what the pull request does, for its title: {paths} stands for
	// the fixed paths and {resource} for the resource.
	Title string
	// Group names the plan a finding joins: findings with the same group share
	// one plan. Nil groups by resource.
	Group func(f drift.Finding) string
	// Locate returns the file of the repository the fix is written in, or ""
	// when it cannot be located with certainty. Nil locates the resource's own
	// source: its chart template or values, or its manifest.
	Locate func(s *drift.Snapshot, repo Repo, ref drift.Ref) string
	// Applies says why the kind cannot fix a finding, or "" when it may be
	// planned for it; it is asked before anything is rendered. Nil applies to
	// every finding.
	Applies func(c *Context, f drift.Finding) string
	// Plan builds the plan for a group of findings of this kind. It returns the
	// changed snapshot the plan's effect is verified on, or nil when the plan
	// cannot be verified offline.
	Plan func(c *Context, group []drift.Finding) (Plan, *drift.Snapshot)
}

// Remedies lists the fix kinds in order of preference.
var Remedies = []Remedy{RemoveField, SetValue, PinHelmValue, IgnoreDifference, TrackingMethod, NarrowIgnore, AdoptLive}

// Lookup returns the remedy of a fix kind.
func Lookup(k drift.FixKind) (Remedy, bool) {
	for _, r := range Remedies {
		if r.Kind == k {
			return r, true
		}
	}
	return Remedy{}, false
}

// group names the plan a finding of this remedy's kind joins.
func (r Remedy) group(f drift.Finding) string {
	if r.Group != nil {
		return r.Group(f)
	}
	return f.Resource.String()
}

// perApplication groups every finding of an application into one plan (one
// platform setting, or one chart value).
func perApplication(drift.Finding) string { return "" }

// Context is what every remedy of one planning run shares.
type Context struct {
	Snapshot *drift.Snapshot
	Report   *drift.Report
	Repo     Repo
	Options
	// readers are the repository's other Applications and what they read,
	// found on the first plan that edits a file (sharedEdit).
	readers []reader
}

// PlanAll plans fixes for a diagnosis. Each finding's fix kinds are decided
// first (Options.Decide; without it the classifier's suggestion), before
// anything is rendered. Findings are then grouped by fix kind and remedy
// group, each group planned by its remedy and verified by re-diagnosing the
// snapshot with the plan applied; a finding whose plan does not verify is
// planned again with its next kind, and the first that verifies is kept.
// Findings with no fix are not planned.
func PlanAll(s *drift.Snapshot, rep *drift.Report, repo Repo, opt Options) []Plan {
	c := &Context{Snapshot: s, Report: rep, Repo: repo, Options: opt}
	decide := opt.Decide
	if decide == nil {
		decide = Suggested
	}
	handled := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Remediation.Kind == drift.FixNarrowIgnore {
			for k := range c.keptByNarrowing(f) {
				handled[k] = true
			}
		}
	}
	var plans []Plan
	var work []*pending
	byPolicy := map[string]int{} // refused by the policy: one plan per kind and group, as a planned group would be
	for _, f := range rep.Findings {
		k := f.Remediation.Kind
		if handled[findingKey(f)] {
			continue // kept by a narrowed rule
		}
		_, fixable := Lookup(k)
		if !fixable && f.Cause != drift.CauseManualChange {
			continue // no fix (none); a manual change may be adopted by policy
		}
		d := decide(f, c.candidates(f))
		if !fixable && len(d.Kinds) == 0 {
			continue // left for people, as the finding says
		}
		if len(d.Kinds) == 0 {
			if !d.ByPolicy {
				plans = append(plans, refusedPlan(f, d.Why))
				continue
			}
			r, _ := Lookup(k)
			key := string(k) + "\x00" + r.group(f) + "\x00" + d.Why
			if i, ok := byPolicy[key]; ok {
				plans[i].Findings = append(plans[i].Findings, f)
				plans[i].Rationale.Evidence = append(plans[i].Rationale.Evidence, f.Evidence...)
				continue
			}
			byPolicy[key] = len(plans)
			plans = append(plans, refusedPlan(f, d.Why))
			continue
		}
		work = append(work, &pending{f: f, kinds: d.Kinds, passed: d.Passed})
	}
	for len(work) > 0 {
		var again []*pending
		for _, g := range groupPending(work) {
			p := c.plan(g)
			var last []*pending // findings with no kind left to try
			if p.Dropped != "" {
				for _, w := range g {
					if len(w.kinds) > 1 {
						w.passed = append(w.passed, Attempt{Kind: w.kinds[0], Why: p.Dropped})
						w.kinds = w.kinds[1:]
						again = append(again, w)
					} else {
						last = append(last, w)
					}
				}
				if len(last) == 0 {
					continue
				}
				if len(last) < len(g) {
					p = c.plan(last)
				}
				g = last
			}
			for _, w := range g {
				p.Passed = appendNew(p.Passed, w.passed...)
			}
			plans = append(plans, p)
		}
		work = again
	}
	combine(plans, repo)
	return plans
}

// pending is a finding still to plan: the kinds left to try, in order, and
// those passed over so far.
type pending struct {
	f      drift.Finding
	kinds  []drift.FixKind
	passed []Attempt
}

// groupPending groups findings by their next kind and its remedy's group, in
// the order the groups first appear.
func groupPending(work []*pending) [][]*pending {
	index := map[string]int{}
	var out [][]*pending
	for _, w := range work {
		r, _ := Lookup(w.kinds[0])
		key := string(r.Kind) + "\x00" + r.group(w.f)
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], w)
	}
	return out
}

// plan plans one group of findings with the remedy of their next kind, judges
// its effect and verifies it.
func (c *Context) plan(g []*pending) Plan {
	remedy, _ := Lookup(g[0].kinds[0])
	fs := make([]drift.Finding, len(g))
	for i, w := range g {
		fs[i] = w.f
	}
	p, changed := remedy.Plan(c, fs)
	p.Kind, p.Findings = remedy.Kind, fs
	if p.Resource == (drift.Ref{}) {
		p.Resource = fs[0].Resource
	}
	if p.Rationale.Cause == "" {
		p.Rationale.Cause = fs[0].Cause
	}
	if len(p.Rationale.Evidence) == 0 {
		for _, f := range fs {
			p.Rationale.Evidence = append(p.Rationale.Evidence, f.Evidence...)
		}
	}
	if p.Dropped == "" {
		if why, refused := c.refuseEffect(&p, changed); refused {
			p.Dropped = why
		}
	}
	if p.Dropped == "" {
		p.Dropped = c.sharedEdit(&p)
	}
	if p.Dropped == "" && p.Verification == "" {
		c.verify(&p, changed)
	}
	if p.Dropped != "" {
		p.Edits, p.Instructions = nil, ""
	}
	if len(p.Edits) == 0 {
		p.Verification = "" // nothing was written, so nothing was verified
	}
	return p
}

func appendNew(as []Attempt, more ...Attempt) []Attempt {
next:
	for _, m := range more {
		for _, a := range as {
			if a == m {
				continue next
			}
		}
		as = append(as, m)
	}
	return as
}

// verify re-diagnoses the changed snapshot: every finding the plan fixes must be
// gone and no new finding may appear, except those a narrow-ignore surfaces on purpose.
func (c *Context) verify(p *Plan, changed *drift.Snapshot) {
	if len(p.Edits) == 0 && p.Instructions == "" {
		p.Dropped = "no file needs to change: the repository already has this fix"
		return
	}
	if changed == nil || c.Rediagnose == nil {
		p.Dropped = "the plan cannot be verified offline"
		return
	}
	after, err := c.Rediagnose(changed.WithoutArgoVerdict())
	if err != nil {
		p.Dropped = "verification failed: " + err.Error()
		return
	}
	// A rule of the Application is known by what it says, not by its index:
	// narrowing or removing one rule moves the rules after it.
	before := map[string]bool{}
	for _, f := range c.Report.Findings {
		before[drift.FindingKey(f)] = true
	}
	fixed := map[string]bool{}
	for _, f := range p.Findings {
		fixed[drift.FindingKey(f)] = true
	}
	surfaced := map[string]bool{}
	if p.Kind == drift.FixNarrowIgnore {
		for _, f := range p.Findings {
			for _, h := range f.Hides {
				surfaced[h.Resource.String()+"\x00"+h.Path.String()] = true
			}
		}
	}
	var still, added []string
	for _, f := range after.Findings {
		k := drift.FindingKey(f)
		switch {
		case fixed[k]:
			still = append(still, f.Resource.String()+" "+f.Path.String())
		case !before[k] && !surfaced[findingKey(f)]:
			added = append(added, f.Resource.String()+" "+f.Path.String()+" ("+string(f.Cause)+")")
		}
	}
	switch {
	case len(still) > 0:
		p.Dropped = "verification failed: the drift remains at " + strings.Join(still, ", ")
	case len(added) > 0:
		p.Dropped = "verification failed: the change would make new drift at " + strings.Join(added, ", ")
	case len(p.Edits) == 0:
		// The instruction, applied to the Application as the snapshot holds
		// it, removes the drift; nothing was edited, so nothing is verified.
		p.Instructions = strings.TrimRight(p.Instructions, "\n") + "\n(driftfix edits no file for this: applied to the Application as the cluster holds it, the change above removes the drift, but the file that defines it was not changed or checked)\n"
		p.assumes = ""
	default:
		n := len(p.Findings)
		p.Verification = fmt.Sprintf("re-diagnosed the application with the change applied to its desired state: %d %s gone, no new difference", n, pluralize(n, "finding", "findings"))
		if p.checked != "" {
			p.Verification += "; " + p.checked
		}
		if p.assumes != "" {
			p.Verification += " (assuming " + p.assumes + ")"
			p.assumes = "" // said: a plan read back from the state store has no assumes
		}
	}
}

func findingKey(f drift.Finding) string { return f.Resource.String() + "\x00" + f.Path.String() }

func pluralize(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// combine applies the plans' edits one after another per file, so that
// plans touching one file stack; a plan whose edit no longer applies on top of
// an earlier plan's is dropped as a conflict.
func combine(plans []Plan, repo Repo) {
	current := map[string][]byte{}
	last := map[string]int{}
	for i := range plans {
		p := &plans[i]
		var edits []Edit
		for _, e := range p.Edits {
			cur, seen := current[e.File]
			if !seen {
				cur = repo[e.File]
			}
			after := cur
			var err error
			for _, st := range e.steps {
				if after, err = st(after); err != nil {
					break
				}
			}
			if err != nil {
				j := last[e.File]
				p.Dropped = fmt.Sprintf("conflicts with the %s plan for %s in %s: %v", plans[j].Kind, plans[j].Resource, e.File, err)
				edits = nil
				break
			}
			edits = append(edits, Edit{File: e.File, Before: cur, After: after, steps: e.steps})
		}
		if p.Dropped != "" {
			p.Edits, p.Verification = nil, ""
			continue
		}
		p.Edits = edits
		for _, e := range edits {
			current[e.File] = e.After
			last[e.File] = i
		}
	}
}

// Files returns the final content of every file the plans change, in the
// order plans were made, with its original content.
func Files(plans []Plan) []Edit {
	var order []string
	final := map[string]*Edit{}
	for _, p := range plans {
		for _, e := range p.Edits {
			if f, ok := final[e.File]; ok {
				f.After = e.After
				continue
			}
			order = append(order, e.File)
			final[e.File] = &Edit{File: e.File, Before: e.Before, After: e.After}
		}
	}
	out := make([]Edit, 0, len(order))
	for _, f := range order {
		out = append(out, *final[f])
	}
	return out
}

// sortDeepestFirst orders pointers so that edits of later list items come
// before earlier ones and do not shift each other.
func sortDeepestFirst(ps []drift.Pointer) {
	sort.SliceStable(ps, func(i, j int) bool { return comparePointers(ps[i], ps[j]) > 0 })
}

func comparePointers(a, b drift.Pointer) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		var ai, bi int
		if _, err := fmt.Sscan(a[i], &ai); err == nil {
			if _, err := fmt.Sscan(b[i], &bi); err == nil {
				return ai - bi
			}
		}
		return strings.Compare(a[i], b[i])
	}
	return len(a) - len(b)
}

// addEdit records the outcome of applyEdits on the plan: the edit, nothing
// when the repository already has it, or why it could not be made. It reports
// whether there is an edit to go on with.
func (p *Plan) addEdit(e Edit, err error) bool {
	switch {
	case errors.Is(err, errAlreadyApplied):
		return false
	case err != nil:
		p.Dropped = err.Error()
		return false
	}
	p.Edits = append(p.Edits, e)
	return true
}
