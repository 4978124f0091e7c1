package remediations

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// A Helm template is not YAML until it is rendered, but a template that
// holds one Application whose structure is plain YAML (its actions are
// values, as in `server: {{ .Values.server }}`, or lines of their own) can be
// edited as YAML: each action is masked (an inline action by a plain scalar,
// a line that is only an action by a comment), the YAML editor edits the
// masked text, and the lines it inserts are inserted at the same place in
// the template. Nothing else of the template changes; the parent chart is
// then rendered again to verify the edit (parent.go).

// inlineAction is one template action on a line.
var inlineAction = regexp.MustCompile(`\{\{.*?\}\}`)

// maskTemplate masks a template's actions line by line, keeping every
// line where it is. It reports false when the template has control flow
// (range, if, with, define, template, block) that shapes its YAML, or an
// action that spans lines.
func maskTemplate(src []byte) ([]byte, bool) {
	lines := strings.SplitAfter(string(src), "\n")
	var b strings.Builder
	for _, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		end := l[len(body):]
		trim := strings.TrimSpace(body)
		if strings.Count(body, "{{") != strings.Count(body, "}}") {
			return nil, false
		}
		for _, m := range inlineAction.FindAllString(body, -1) {
			inner := strings.TrimSpace(strings.Trim(m, "{}-"))
			for _, kw := range []string{"range", "if", "else", "with", "define", "template", "block", "end", "include"} {
				if inner == kw || strings.HasPrefix(inner, kw+" ") {
					if kw == "include" && trim != m {
						continue // an include as a value is a value
					}
					return nil, false
				}
			}
		}
		if trim != "" && inlineAction.ReplaceAllString(trim, "") == "" {
			// a line of actions only (a comment, a variable): a YAML comment
			b.WriteString(strings.Repeat(" ", len(body)-len(strings.TrimLeft(body, " "))) + "# template action" + end)
			continue
		}
		b.WriteString(inlineAction.ReplaceAllString(body, "x") + end)
	}
	return []byte(b.String()), true
}

// templateAppend appends item to the list at p of the one Application a
// template holds, through its masked text. It fails when the template cannot
// be masked, holds other than one Application, or the editor would change a
// line rather than insert.
func templateAppend(src []byte, p drift.Pointer, item any, comment string) ([]byte, error) {
	masked, ok := maskTemplate(src)
	if !ok {
		return nil, fmt.Errorf("the template's YAML is shaped by its control flow: %w", yamledit.ErrUnsupported)
	}
	docs, err := yamledit.Documents(masked)
	if err != nil {
		return nil, fmt.Errorf("the template is not YAML once its actions are masked: %w", err)
	}
	doc := -1
	for i, d := range docs {
		if m, _ := d.(map[string]any); drift.Str(m, "kind") == "Application" {
			if doc >= 0 {
				return nil, fmt.Errorf("the template holds more than one Application: %w", yamledit.ErrUnsupported)
			}
			doc = i
		}
	}
	if doc < 0 {
		return nil, fmt.Errorf("the template holds no Application")
	}
	out, err := yamledit.AppendItem(masked, doc, p, item, comment)
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(out), "{{") {
		return nil, fmt.Errorf("the item holds {{, which the template would read as an action: %w", yamledit.ErrUnsupported)
	}
	before := strings.SplitAfter(string(masked), "\n")
	after := strings.SplitAfter(string(out), "\n")
	pre := 0
	for pre < len(before) && pre < len(after) && before[pre] == after[pre] {
		pre++
	}
	post := 0
	for post < len(before)-pre && post < len(after)-pre && before[len(before)-1-post] == after[len(after)-1-post] {
		post++
	}
	if len(before)-pre-post != 0 {
		return nil, fmt.Errorf("the edit changes a line of the template rather than add lines: %w", yamledit.ErrUnsupported)
	}
	orig := strings.SplitAfter(string(src), "\n")
	if pre > 0 && !strings.HasSuffix(orig[pre-1], "\n") {
		return nil, fmt.Errorf("the template's last line has no line end: %w", yamledit.ErrUnsupported)
	}
	res := append(append(append([]string{}, orig[:pre]...), after[pre:len(after)-post]...), orig[pre:]...)
	return []byte(strings.Join(res, "")), nil
}
