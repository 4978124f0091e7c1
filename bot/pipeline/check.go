package pipeline

import (
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
)

// Check is what a pull request's files do to its application: each path the
// pull request targets, fixed or not, and every difference it would add.
type Check struct {
	// Success: every targeted path is gone and no new difference appeared.
	Success bool
	Rows    []CheckRow
	// Files are the files the head changes against the synced revision.
	Files []string
	// Error says why the head could not be checked (it does not render, it
	// adds a resource); the check then fails with it.
	Error string
}

// CheckRow is one resource and path of a Check.
type CheckRow struct {
	Resource drift.Ref
	Path     drift.Pointer
	Cause    drift.Cause
	// Status is CheckFixed, CheckRemains or CheckNew.
	Status string
	// Git and Live are the values before the change (for a new difference:
	// after it), with whether each side has the path; Live is as outputs
	// may show it (drift.Finding.ShownLive).
	Git, Live     any
	InGit, InLive bool
	Evidence      []drift.Evidence
}

// Check row statuses.
const (
	CheckFixed   = "fixed"
	CheckRemains = "still differs"
	CheckNew     = "new difference"
)

// CheckHead renders the application from head (the pull request's files),
// diagnoses it against the live state the snapshot holds, and judges it
// against the plan the pull request carries: every finding the plan fixes
// must be gone, and no new difference may appear but those a narrow-ignore
// shows on purpose. base is the repository at the synced revision, which
// rep was diagnosed from. It does no I/O.
func CheckHead(s *drift.Snapshot, rep *drift.Report, base, head remediations.Repo, plan remediations.Plan, opt FixOptions) Check {
	if isPlan(base, head, plan) {
		// exactly the files the plan was verified with, on the same revision
		return CheckPlanned(plan)
	}
	return checkRebuilt(s, rep, base, head, plan, opt)
}

// isPlan says whether head is base with the plan's files written, and nothing else.
func isPlan(base, head remediations.Repo, plan remediations.Plan) bool {
	want := remediations.Repo{}
	for k, v := range base {
		want[k] = v
	}
	for _, e := range plan.Edits {
		want[e.File] = e.After
	}
	if len(want) != len(head) || !plan.Verified() {
		return false
	}
	for k, v := range want {
		if h, ok := head[k]; !ok || string(h) != string(v) {
			return false
		}
	}
	return true
}

// checkRebuilt renders the application from head and judges the diagnosis.
func checkRebuilt(s *drift.Snapshot, rep *drift.Report, base, head remediations.Repo, plan remediations.Plan, opt FixOptions) Check {
	changed, files, err := remediations.Rebuild(s, base, head, opt.Render)
	c := Check{Files: files}
	if err == nil && len(files) == 0 {
		err = errNoChange
	}
	var after *drift.Report
	if err == nil {
		after, err = Diagnose(changed.WithoutArgoVerdict(), opt.Sensitivity)
	}
	if err != nil {
		c.Error = err.Error()
		for _, f := range typedAs(rep, plan.Findings) {
			c.Rows = append(c.Rows, row(f, CheckRemains))
		}
		return c
	}
	return judge(c, rep, after, plan)
}

// typedAs returns the plan's findings with SchemaScalar as the current
// diagnosis rep types each path: a plan the memo kept does not carry it, and
// without it a row masks even a number the schema types (drift.LiveShown).
// A finding rep does not have keeps its own.
func typedAs(rep *drift.Report, fs []drift.Finding) []drift.Finding {
	if rep == nil {
		return fs
	}
	scalar := map[string]bool{}
	for _, f := range rep.Findings {
		if f.SchemaScalar {
			scalar[drift.FindingKey(f)] = true
		}
	}
	out := make([]drift.Finding, len(fs))
	for i, f := range fs {
		f.SchemaScalar = f.SchemaScalar || scalar[drift.FindingKey(f)]
		out[i] = f
	}
	return out
}

type checkError string

func (e checkError) Error() string { return string(e) }

const errNoChange = checkError("the head changes no file of the synced revision")

// judge compares the diagnoses before and after the change.
// A rule of the Application is matched by what it says in each (drift.FindingKey).
func judge(c Check, before, after *drift.Report, plan remediations.Plan) Check {
	key := func(r drift.Ref, p drift.Pointer) string { return r.String() + "\x00" + p.String() }
	was := map[string]bool{}
	for _, f := range before.Findings {
		was[drift.FindingKey(f)] = true
	}
	now := map[string]drift.Finding{}
	for _, f := range after.Findings {
		now[drift.FindingKey(f)] = f
	}
	targeted, shown := map[string]bool{}, map[string]bool{}
	for _, f := range typedAs(before, plan.Findings) {
		k := drift.FindingKey(f)
		targeted[k] = true
		status := CheckFixed
		if _, ok := now[k]; ok {
			status = CheckRemains
		}
		c.Rows = append(c.Rows, row(f, status))
		if plan.Kind == drift.FixNarrowIgnore {
			for _, h := range f.Hides {
				shown[key(h.Resource, h.Path)] = true
			}
		}
	}
	for _, f := range after.Findings {
		k := drift.FindingKey(f)
		if !targeted[k] && !was[k] && !shown[key(f.Resource, f.Path)] {
			c.Rows = append(c.Rows, row(f, CheckNew))
		}
	}
	c.Success = true
	for _, r := range c.Rows {
		c.Success = c.Success && r.Status == CheckFixed
	}
	return c
}

func row(f drift.Finding, status string) CheckRow {
	return CheckRow{Resource: f.Resource, Path: f.Path, Cause: f.Cause, Status: status,
		Git: f.Git, Live: f.ShownLive(), InGit: f.InGit, InLive: f.InLive, Evidence: f.Evidence}
}

// CheckPlanned is the check of a plan as it was verified while planning:
// its files on top of the synced revision, every finding gone. A plan that
// edits no file (instructions only) never passes (remediations.Plan.Verified). A pull
// request's head commit is that until the base branch moved or a person
// pushed; CheckHead judges the head itself.
func CheckPlanned(plan remediations.Plan) Check {
	c := Check{Success: plan.Verified()}
	for _, e := range plan.Edits {
		c.Files = append(c.Files, e.File)
	}
	status := CheckFixed
	switch {
	case c.Success:
	case plan.Dropped != "":
		status, c.Error = CheckRemains, "the plan was not verified: "+plan.Dropped
	case len(plan.Edits) == 0:
		status, c.Error = CheckRemains, "the plan edits no file, so nothing was verified: it is a change to make by hand"
	default:
		status, c.Error = CheckRemains, "the plan was not verified"
	}
	for _, f := range plan.Findings {
		c.Rows = append(c.Rows, row(f, status))
	}
	return c
}
