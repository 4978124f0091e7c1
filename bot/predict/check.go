package predict

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/templates"
)

// CheckName is the name of the check predict publishes on a pull request's
// head commit.
const CheckName = "driftfix/predict"

// Check is the check of a pull request's head: neutral when the change
// introduces nothing, else failed with one annotation per prediction at the
// file and line that declare it (predictions without a line are in the
// text only) and a table of every prediction.
func Check(res *Result) githost.Check {
	ck := githost.Check{Name: CheckName}
	if len(res.Predictions) == 0 {
		ck.Neutral = true
		ck.Title = "No field will stay OutOfSync after sync"
		if n := len(res.NotPredicted); n > 0 {
			// never "clean" for applications it did not predict
			ck.Title = fmt.Sprintf("%d %s not predicted", n, plural(n, "application", "applications"))
		}
		if len(res.Applications) == 0 {
			ck.Summary = "The change touches no Argo CD application's sources."
		} else {
			ck.Summary = fmt.Sprintf("driftfix predicted the %s this change touches (%s): nothing the change introduces will differ after sync.",
				plural(len(res.Applications), "application", "applications"), templates.Text(strings.Join(res.Applications, ", ")))
		}
		ck.Text = notes(res)
		return ck
	}
	n := len(res.Predictions)
	ck.Title = fmt.Sprintf("%d %s will stay OutOfSync after sync", n, plural(n, "field", "fields"))
	ck.Summary = fmt.Sprintf("Merged as it is, this change leaves %d %s of %s OutOfSync right after a successful sync. Each is annotated where the repository declares it, with its cause and fix.",
		n, plural(n, "field", "fields"), templates.Text(strings.Join(res.Applications, ", ")))
	var b strings.Builder
	b.WriteString("| Application | Resource | Path | Cause | Where | Fix |\n|---|---|---|---|---|---|\n")
	for _, p := range res.Predictions {
		where := "-"
		if p.File != "" {
			where = p.File
			if p.Line > 0 {
				where = fmt.Sprintf("%s:%d", p.File, p.Line)
			}
		}
		path := p.Path.String()
		if path == "" {
			path = "(fields a webhook writes)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", templates.Text(p.Application), templates.Text(p.Resource.String()), templates.Code(path),
			templates.Code(string(p.Cause)), templates.Code(where), templates.Text(fix(p)))
		if p.File != "" && p.Line > 0 {
			ck.Annotations = append(ck.Annotations, githost.Annotation{Path: p.File, Line: p.Line, Level: "warning",
				Title: fmt.Sprintf("%s: %s %s", p.Cause, p.Resource, path), Message: message(p)})
		}
	}
	b.WriteString(notes(res))
	ck.Text = b.String()
	return ck
}

func fix(p Prediction) string {
	s := string(p.Fix)
	if p.FixFile != "" {
		s += " in " + p.FixFile
	}
	if p.Fix == drift.FixNone && p.Reason != "" {
		s += ": " + p.Reason
	}
	return s
}

// notes lists the applications not predicted, each with why and what would
// let it be, then the run's notes.
func notes(res *Result) string {
	if len(res.Notes) == 0 && len(res.NotPredicted) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nNot predicted:\n")
	for _, n := range res.NotPredicted {
		line := fmt.Sprintf("%s %s", n.Kind, n.Application)
		if n.File != "" {
			line += " (" + n.File + ")"
		}
		line += ": " + n.Reason
		if n.Needs != "" {
			line += "; needs " + n.Needs
		}
		b.WriteString("- " + templates.Text(line) + "\n")
	}
	for _, n := range res.Notes {
		b.WriteString("- " + templates.Text(n) + "\n")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
