package remediations

import (
	"fmt"
	"regexp"
	"strconv"
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
func maskTemplate(src []byte) ([]byte, bool) { return mask(src, false) }

// mask masks a template's actions; with controlLines, a control action
// alone on its line (a range, with, if or end) is masked as a comment too,
// so that the body of a range reads as the YAML of one iteration.
func mask(src []byte, controlLines bool) ([]byte, bool) {
	lines := strings.SplitAfter(string(src), "\n")
	var b strings.Builder
	for _, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		end := l[len(body):]
		trim := strings.TrimSpace(body)
		if strings.Count(body, "{{") != strings.Count(body, "}}") {
			return nil, false
		}
		alone := trim != "" && inlineAction.ReplaceAllString(trim, "") == ""
		for _, m := range inlineAction.FindAllString(body, -1) {
			if controlLines && alone {
				break
			}
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

// rangeLine is a template line that ranges over a values collection:
// {{- range .Values.apps }}, {{ range $app := .Values.apps }} or
// {{ range $name, $app := .Values.apps }}.
var rangeLine = regexp.MustCompile(`^\s*\{\{-?\s*range\s+(?:(\$\w+)\s*(?:,\s*(\$\w+))?\s*:=\s*)?\.Values\.([A-Za-z0-9_.]+)\s*-?\}\}\s*$`)

// rangeHook is how a template that makes its Applications in a range over a
// values collection comes to read each element's ignore rules: a block
// under the Application's spec that writes the element's ignoreDifferences
// when it has one. It returns the values path of the collection and the
// step that inserts the block, or false when the template is not of that
// form.
func rangeHook(src []byte, respect bool) (drift.Pointer, func([]byte) ([]byte, error), bool) {
	var ranges [][]string
	for _, l := range strings.Split(string(src), "\n") {
		if m := rangeLine.FindStringSubmatch(l); m != nil {
			ranges = append(ranges, m)
		}
	}
	if len(ranges) != 1 || strings.Count(string(src), "range ") != 1 {
		return nil, nil, false
	}
	m := ranges[0]
	ref := "."
	switch {
	case m[2] != "":
		ref = m[2] + "."
	case m[1] != "":
		ref = m[1] + "."
	}
	hookLine := "{{- with " + ref + "ignoreDifferences }}"
	step := func(b []byte) ([]byte, error) {
		if strings.Contains(string(b), hookLine) {
			return b, nil
		}
		masked, ok := mask(b, true)
		if !ok {
			return nil, fmt.Errorf("the template's YAML is shaped by actions inside its lines: %w", yamledit.ErrUnsupported)
		}
		docs, err := yamledit.Documents(masked)
		if err != nil {
			return nil, fmt.Errorf("the body of the template's range is not YAML once its actions are masked: %w", err)
		}
		doc := -1
		for i, d := range docs {
			if dm, _ := d.(map[string]any); drift.Str(dm, "kind") == "Application" {
				if doc >= 0 {
					return nil, fmt.Errorf("the range makes more than one Application: %w", yamledit.ErrUnsupported)
				}
				doc = i
				if _, has := dm["spec"].(map[string]any)["ignoreDifferences"]; has {
					return nil, fmt.Errorf("the template writes ignoreDifferences already: %w", yamledit.ErrUnsupported)
				}
			}
		}
		if doc < 0 {
			return nil, fmt.Errorf("the range makes no Application")
		}
		out, err := yamledit.AppendItem(masked, doc, drift.MustPointer("/spec/ignoreDifferences"), "x", "")
		if err != nil {
			return nil, err
		}
		before := strings.SplitAfter(string(masked), "\n")
		after := strings.SplitAfter(string(out), "\n")
		pre := 0
		for pre < len(before) && pre < len(after) && before[pre] == after[pre] {
			pre++
		}
		if pre >= len(after) || strings.TrimSpace(after[pre]) != "ignoreDifferences:" || len(after) != len(before)+2 {
			return nil, fmt.Errorf("cannot tell where the Application's spec ends in the template: %w", yamledit.ErrUnsupported)
		}
		ind := after[pre][:len(after[pre])-len(strings.TrimLeft(after[pre], " "))]
		hook := ind + hookLine + "\n" +
			ind + "ignoreDifferences:\n" +
			ind + "  {{- toYaml . | nindent " + strconv.Itoa(len(ind)+2) + " }}\n" +
			ind + "{{- end }}\n"
		orig := strings.SplitAfter(string(b), "\n")
		if pre > len(orig) || pre > 0 && !strings.HasSuffix(orig[pre-1], "\n") {
			return nil, fmt.Errorf("the template's last line has no line end: %w", yamledit.ErrUnsupported)
		}
		inserts := map[int]string{pre: hook}
		if respect {
			// the elements with rules also keep them at sync: an item of
			// the template's sync options, written for them only
			opts, err := yamledit.AppendItem(masked, doc, drift.MustPointer("/spec/syncPolicy/syncOptions"), "x", "")
			if err != nil {
				return nil, err
			}
			oa := strings.SplitAfter(string(opts), "\n")
			at := 0
			for at < len(before) && at < len(oa) && before[at] == oa[at] {
				at++
			}
			if len(oa) != len(before)+1 || strings.TrimSpace(oa[at]) != "- x" {
				return nil, fmt.Errorf("the template has no list of sync options to add %s to: %w", respectIgnore, yamledit.ErrUnsupported)
			}
			oind := oa[at][:len(oa[at])-len(strings.TrimLeft(oa[at], " "))]
			// at the same line the list's item comes first: the list ends there
			inserts[at] = oind + "{{- if " + ref + "ignoreDifferences }}\n" + oind + "- " + respectIgnore + "\n" + oind + "{{- end }}\n" + inserts[at]
		}
		var res strings.Builder
		for i := 0; i <= len(orig); i++ {
			res.WriteString(inserts[i])
			if i < len(orig) {
				res.WriteString(orig[i])
			}
		}
		return []byte(res.String()), nil
	}
	return drift.Pointer(strings.Split(m[3], ".")), step, true
}

// elementFor finds the element of a values collection (a list or a map)
// that renders Application app: a list item with a string field equal to
// app's name, or a map key equal to it; else the one item whose name (or
// the one key) the Application's name contains.
func elementFor(coll any, app string) (drift.Pointer, bool) {
	var exact, contained []drift.Pointer
	var containedNames []string
	switch x := coll.(type) {
	case []any:
		for i, e := range x {
			m, _ := e.(map[string]any)
			p := drift.Pointer{strconv.Itoa(i)}
			for _, v := range m {
				if v == app {
					exact = append(exact, p)
					break
				}
			}
			if n, _ := m["name"].(string); n != "" && n != app && strings.Contains(app, n) {
				contained = append(contained, p)
				containedNames = append(containedNames, n)
			}
		}
	case map[string]any:
		for k, v := range x {
			if _, isMap := v.(map[string]any); !isMap {
				continue
			}
			if k == app {
				exact = append(exact, drift.Pointer{k})
			} else if strings.Contains(app, k) {
				contained = append(contained, drift.Pointer{k})
				containedNames = append(containedNames, k)
			}
		}
	}
	if len(exact) == 1 {
		return exact[0], true
	}
	if len(exact) > 0 {
		return nil, false
	}
	// the longest name the Application's name contains, when only one is
	// that long (guestbook-ui, not guestbook, for example.guestbook-ui)
	best := -1
	for i, n := range containedNames {
		switch {
		case best < 0 || len(n) > len(containedNames[best]):
			best = i
		case len(n) == len(containedNames[best]):
			return nil, false
		}
	}
	if best < 0 {
		return nil, false
	}
	for i, n := range containedNames {
		if i != best && len(n) == len(containedNames[best]) {
			return nil, false
		}
	}
	return contained[best], true
}
