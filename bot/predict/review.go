package predict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/templates"
)

// diffContext is the lines of context around each change in a pull
// request's diff (git's and GitHub's default): a review comment may sit on
// a changed line or on one of them.
const diffContext = 3

// DiffLines are the lines of head (1-based) a review comment may be placed
// on: those of the unified diff from base to head, changed lines and the
// context around each change. A new file's lines are all in it.
func DiffLines(base, head string) map[int]bool {
	out := map[int]bool{}
	if base == head {
		return out
	}
	// Each change is a span of head's lines [from, to): the lines it adds,
	// or none (from == to) where lines were only removed before line from.
	// Its hunk holds diffContext lines on either side.
	type span struct{ from, to int }
	var changes []span
	line := 1
	for _, d := range diff.Do(base, head) {
		n := lines(d.Text)
		switch d.Type { // diffmatchpatch's operations: -1 delete, 0 equal, 1 insert
		case 0:
			line += n
		case 1:
			changes = append(changes, span{line, line + n})
			line += n
		case -1:
			changes = append(changes, span{line, line})
		}
	}
	last := lines(head)
	for _, c := range changes {
		for i := c.from - diffContext; i < c.to+diffContext; i++ {
			if i >= 1 && i <= last {
				out[i] = true
			}
		}
	}
	return out
}

// lines counts the lines of a text (a last line without a newline counts).
func lines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// Review is the review of a pull request's head: one comment with a
// suggestion block for each prediction whose fix is one line's edit on a
// line of the change's diff from base to head (GitHub takes comments only
// there); nil when there is none. Each suggestion holds Git's own line
// changed or removed, nothing else.
func Review(res *Result, base, head Revision, commit string) *githost.Review {
	type at struct {
		file string
		line int
	}
	seen := map[at]bool{}
	rv := &githost.Review{CommitID: commit}
	for _, p := range res.Predictions {
		sg := p.Suggestion
		if sg == nil || seen[at{sg.File, sg.Line}] {
			continue
		}
		text, ok := head.Files[sg.File]
		if !ok || sg.Line < 1 || sg.Line > lines(text) || strings.Split(text, "\n")[sg.Line-1] != sg.Old {
			continue // not the head's line: no suggestion can be made of it
		}
		if !DiffLines(base.Files[sg.File], text)[sg.Line] {
			continue
		}
		seen[at{sg.File, sg.Line}] = true
		rv.Comments = append(rv.Comments, githost.ReviewComment{Path: sg.File, Line: sg.Line, Body: suggestionBody(p, sg)})
	}
	if len(rv.Comments) == 0 {
		return nil
	}
	sort.SliceStable(rv.Comments, func(i, j int) bool {
		if rv.Comments[i].Path != rv.Comments[j].Path {
			return rv.Comments[i].Path < rv.Comments[j].Path
		}
		return rv.Comments[i].Line < rv.Comments[j].Line
	})
	rv.Body = fmt.Sprintf("driftfix predicts that this change leaves %s OutOfSync after a successful sync; %s a one-line fix below (the %s check lists every prediction).",
		plural(len(res.Predictions), "a field", fmt.Sprintf("%d fields", len(res.Predictions))),
		plural(len(rv.Comments), "here is", "here are"), CheckName)
	return rv
}

// suggestionBody says what will differ and why, then the edit as a
// suggestion block: the line replaced, or removed (an empty block).
func suggestionBody(p Prediction, sg *Suggestion) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**: %s %s will stay OutOfSync after sync.", p.Cause, templates.Text(p.Resource.String()), templates.Code(p.Path.String()))
	if len(p.Evidence) > 0 {
		b.WriteString(" " + templates.Text(strings.TrimSuffix(p.Evidence[0].Text, ".")) + ".")
	}
	if sg.Remove {
		fmt.Fprintf(&b, " Fix: %s (remove this line).", p.Fix)
	} else {
		fmt.Fprintf(&b, " Fix: %s (the value as Kubernetes stores it).", p.Fix)
	}
	fence := strings.Repeat("`", max(3, longestRun(sg.New, '`')+1))
	b.WriteString("\n\n" + fence + "suggestion\n")
	if !sg.Remove {
		b.WriteString(sg.New + "\n")
	}
	b.WriteString(fence + "\n")
	return b.String()
}

func longestRun(s string, c rune) int {
	run, longest := 0, 0
	for _, r := range s {
		if r == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
