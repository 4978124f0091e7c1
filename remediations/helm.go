package remediations

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

var (
	ifNotValue  = regexp.MustCompile(`^\s*\{\{-?\s*if\s+not\s+\.Values\.([A-Za-z0-9_.]+)\s*-?\}\}\s*$`)
	ifValue     = regexp.MustCompile(`^\s*\{\{-?\s*if\s+\.Values\.([A-Za-z0-9_.]+)\s*-?\}\}\s*$`)
	endLine     = regexp.MustCompile(`^\s*\{\{-?\s*end\s*-?\}\}\s*$`)
	valueOnly   = regexp.MustCompile(`^\{\{-?\s*\.Values\.([A-Za-z0-9_.]+)\s*(\|\s*quote\s*)?-?\}\}$`)
	helmComment = regexp.MustCompile(`\s+#.*$`)
)

// helmFieldEdit finds where a chart writes a field and returns the edit that
// removes it or sets it to value: the chart value that controls or feeds the
// template line when there is one (the values file), else the template line.
func (c *Context) helmFieldEdit(ref drift.Ref, gp drift.Pointer, remove bool, value any) (string, func([]byte) ([]byte, error), string) {
	src, _ := helmSource(c.Snapshot, c.Repo)
	kindLine := regexp.MustCompile(`(?m)^kind:\s*` + regexp.QuoteMeta(ref.Kind) + `\s*$`)
	var tpl []string
	for _, f := range templateFiles(c.Snapshot, c.Repo) {
		if kindLine.Match(c.Repo[f]) {
			tpl = append(tpl, f)
		}
	}
	if len(tpl) != 1 {
		return "", nil, fmt.Sprintf("%d chart templates render a %s; cannot tell which one writes %s", len(tpl), ref.Kind, gp)
	}
	file := tpl[0]
	lines := strings.SplitAfter(string(c.Repo[file]), "\n")
	key := gp.Last()
	idx := -1
	for i, kp := range templateKeyPaths(lines) {
		if kp == nil || kp.Last() != key || (onlyMaps(gp) && kp.String() != gp.String()) {
			continue
		}
		if idx >= 0 {
			return "", nil, fmt.Sprintf("%s writes %s more than once; cannot tell which line", file, key)
		}
		idx = i
	}
	if idx < 0 {
		return "", nil, fmt.Sprintf("%s has no line that writes %s", file, gp)
	}
	line := lines[idx]
	val := strings.TrimSpace(helmComment.ReplaceAllString(strings.TrimSpace(line[strings.Index(line, key+":")+len(key)+1:]), ""))
	values := c.valuesFile(src)
	if where := c.setInApplication(src, val, lines, idx); where != "" {
		return "", nil, where
	}
	if remove {
		prev, next := neighbour(lines, idx, -1), neighbour(lines, idx, +1)
		if prev >= 0 && next >= 0 && endLine.MatchString(lines[next]) && values != "" {
			if m := ifNotValue.FindStringSubmatch(lines[prev]); m != nil {
				return c.valuesFileFor(src, m[1]), setValuesStep(m[1], true), ""
			}
			if m := ifValue.FindStringSubmatch(lines[prev]); m != nil {
				return c.valuesFileFor(src, m[1]), setValuesStep(m[1], false), ""
			}
		}
		if i := idx + 1; i < len(lines) && indentLen(lines[i]) > indentLen(line) && strings.TrimSpace(lines[i]) != "" {
			return "", nil, fmt.Sprintf("%s:%d starts a block; removing it from a template is not supported", file, idx+1)
		}
		return file, removeLineStep(idx, line), ""
	}
	if m := valueOnly.FindStringSubmatch(val); m != nil && values != "" {
		return c.valuesFileFor(src, m[1]), setValuesStep(m[1], value), ""
	}
	if strings.Contains(val, "{{") {
		return "", nil, fmt.Sprintf("%s:%d computes %s in the template; change it there", file, idx+1, key)
	}
	return file, setLineStep(idx, line, val, value), ""
}

var templateKey = regexp.MustCompile(`^(\s*)(- )?([A-Za-z0-9_.\-/"']+):(\s|$)`)

// templateKeyPaths gives, per template line, the mapping keys that lead to the
// key the line writes (nil for lines that write none), from indentation alone;
// template directives are skipped.
func templateKeyPaths(lines []string) []drift.Pointer {
	type frame struct {
		indent int
		key    string
	}
	var stack []frame
	out := make([]drift.Pointer, len(lines))
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "{{") || t == "---" {
			continue
		}
		m := templateKey.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		indent := len(m[1])
		if m[2] != "" {
			indent += 2
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, frame{indent, strings.Trim(m[3], `"'`)})
		p := make(drift.Pointer, len(stack))
		for j, f := range stack {
			p[j] = f.key
		}
		out[i] = p
	}
	return out
}

func onlyMaps(p drift.Pointer) bool {
	for _, t := range p {
		if t != "" && t[0] >= '0' && t[0] <= '9' {
			return false
		}
	}
	return true
}

func indentLen(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// neighbour returns the index of the closest non-blank line in direction dir.
func neighbour(lines []string, i, dir int) int {
	for j := i + dir; j >= 0 && j < len(lines); j += dir {
		if strings.TrimSpace(lines[j]) != "" {
			return j
		}
	}
	return -1
}

// valuesFile is a values file of the source in the repository, "" when
// there is none (valuesFileFor says which one a value is written in).
func (c *Context) valuesFile(src drift.Source) string {
	if files := c.valueFiles(src); len(files) > 0 {
		return files[0]
	}
	return ""
}

func setValuesStep(key string, v any) func([]byte) ([]byte, error) {
	p := drift.Pointer(strings.Split(key, "."))
	return func(b []byte) ([]byte, error) { return yamledit.SetValue(b, 0, p, v) }
}

// removeLineStep deletes one template line (checked to be unchanged).
func removeLineStep(i int, want string) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) {
		lines := strings.SplitAfter(string(b), "\n")
		if i >= len(lines) || lines[i] != want {
			return b, nil // already removed
		}
		return []byte(strings.Join(append(lines[:i:i], lines[i+1:]...), "")), nil
	}
}

// setLineStep replaces a literal value on one template line, keeping the rest.
func setLineStep(i int, want, old string, v any) func([]byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) {
		lines := strings.SplitAfter(string(b), "\n")
		if i >= len(lines) || lines[i] != want {
			return b, nil
		}
		text, err := yamledit.Scalar(v)
		if err != nil {
			return nil, err
		}
		at := strings.LastIndex(want, old)
		lines[i] = want[:at] + text + want[at+len(old):]
		return []byte(strings.Join(lines, "")), nil
	}
}

// setInApplication says where the Application itself sets a chart value the
// line uses (helm.valuesObject, helm.values or helm.parameters), which would
// override an edit of the values file.
func (c *Context) setInApplication(src drift.Source, val string, lines []string, idx int) string {
	var keys []string
	for _, l := range []string{val, lines[max(0, idx-1)]} {
		for _, m := range valuesRef.FindAllStringSubmatch(l, -1) {
			keys = append(keys, m[1])
		}
	}
	for _, s := range append([]any{drift.Map(c.Snapshot.Application, "spec", "source")}, drift.List(c.Snapshot.Application, "spec", "sources")...) {
		h := drift.Map(s, "helm")
		if h == nil || strings.Trim(drift.Str(s, "path"), "/") != src.Path {
			continue
		}
		for _, k := range keys {
			if _, ok := drift.Pointer(strings.Split(k, ".")).Get(drift.Map(h, "valuesObject")); ok {
				return fmt.Sprintf("the Application sets %s in spec.source.helm.valuesObject; change it there", k)
			}
			if strings.Contains(drift.Str(h, "values"), strings.Split(k, ".")[0]+":") {
				return fmt.Sprintf("the Application's spec.source.helm.values may set %s; change it there", k)
			}
			for _, prm := range drift.List(h, "parameters") {
				if drift.Str(prm, "name") == k {
					return fmt.Sprintf("the Application sets %s in spec.source.helm.parameters; change it there", k)
				}
			}
		}
	}
	return ""
}
