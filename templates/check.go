package templates

import (
	"bytes"
	"fmt"

	"github.com/driftfix/driftfix/bot/drift"
)

// CheckName is the name of driftfix's check on a fix pull request's head.
const CheckName = "driftfix/verify"

// maxCheckText is GitHub's limit on a check run's summary and text.
const maxCheckText = 65535

// CheckView is what the check of a fix pull request's head commit says.
type CheckView struct {
	App, AppNamespace, ArgoCDURL string
	// Head is the commit checked.
	Head string
	// Planned says the result is the fix's verification while it was planned
	// (the head is the fix's own commit); the head's files are checked again
	// on the next cycle.
	Planned bool
	Success bool
	// Error says why the head could not be checked.
	Error string
	Files []string
	Rows  []CheckRow
}

// CheckRow is one resource and path of the check, ready to show (Secret
// values never are).
type CheckRow struct {
	Resource  drift.Ref
	Path      string
	Cause     drift.Cause
	Status    string // fixed, still differs, new difference
	Git, Live string
	Evidence  []string
}

// AppURL links to the application in Argo CD's UI.
func (v CheckView) AppURL() string { return AppURL(v.ArgoCDURL, v.AppNamespace, v.App) }

// Count is how many rows have a status.
func (v CheckView) Count(status string) int {
	n := 0
	for _, r := range v.Rows {
		if r.Status == status {
			n++
		}
	}
	return n
}

// Targeted is how many rows are paths the pull request fixes.
func (v CheckView) Targeted() int { return len(v.Rows) - v.Count("new difference") }

// CheckTitle is the check's one line.
func CheckTitle(v CheckView) string {
	t, remain, added := v.Targeted(), v.Count("still differs"), v.Count("new difference")
	switch {
	case v.Error != "":
		return "Cannot be checked: " + unlinked(v.Error)
	case v.Success:
		return fmt.Sprintf("Fixes %d of %d %s, no new difference", t, t, plural(t, "differing path", "differing paths"))
	case remain > 0 && added > 0:
		return fmt.Sprintf("%d of %d %s still differ, and %d new %s", remain, t, plural(t, "path", "paths"), added, plural(added, "difference", "differences"))
	case remain > 0:
		return fmt.Sprintf("%d of %d %s still %s", remain, t, plural(t, "path", "paths"), plural(remain, "differs", "differ"))
	}
	return fmt.Sprintf("Makes %d new %s", added, plural(added, "difference", "differences"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CheckOutput renders the check's summary and its table, each within
// GitHub's size limit: rows that do not fit are counted, never cut.
func CheckOutput(v CheckView) (summary, text string, err error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "check_summary.md.tmpl", v); err != nil {
		return "", "", fmt.Errorf("render check summary: %w", err)
	}
	summary = b.String()
	for n := len(v.Rows); n >= 0; n-- {
		b.Reset()
		shown := v
		shown.Rows = v.Rows[:n]
		if err := tmpl.ExecuteTemplate(&b, "check_text.md.tmpl", struct {
			CheckView
			Left int
		}{shown, len(v.Rows) - n}); err != nil {
			return "", "", fmt.Errorf("render check table: %w", err)
		}
		if b.Len() <= maxCheckText {
			return summary, b.String(), nil
		}
	}
	return summary, "", fmt.Errorf("render check table: even without rows it is over %d bytes", maxCheckText)
}
