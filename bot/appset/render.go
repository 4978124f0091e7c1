package appset

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"text/template"
	tparse "text/template/parse"

	"github.com/Masterminds/sprig/v3"
	"github.com/gosimple/slug"
	"sigs.k8s.io/yaml"
)

// maxRenderedString bounds one rendered string, so a template cannot grow
// memory without end ({{ repeat 1000000000 "x" }} or a long range).
const maxRenderedString = 1 << 20

// maxRange bounds the lists sprig's until, untilStep and seq build and the
// count repeat is given: Argo CD takes any, and a count of a billion stops
// a controller as it would stop the CLI.
const maxRange = 100000

var funcs = func() template.FuncMap {
	m := sprig.GenericFuncMap()
	// Argo CD removes the functions that read the controller's environment or the network.
	delete(m, "env")
	delete(m, "expandenv")
	delete(m, "getHostByName")
	m["normalize"] = sanitizeName
	m["slugify"] = slugifyName
	m["toYaml"] = toYAML
	m["fromYaml"] = fromYAML
	m["fromYamlArray"] = fromYAMLArray
	until, untilStep, repeat := m["until"].(func(int) []int), m["untilStep"].(func(int, int, int) []int), m["repeat"].(func(int, string) string)
	m["until"] = func(n int) ([]int, error) {
		if n > maxRange || n < -maxRange {
			return nil, fmt.Errorf("until %d: more than %d items", n, maxRange)
		}
		return until(n), nil
	}
	m["untilStep"] = func(start, stop, step int) ([]int, error) {
		if step != 0 && (stop-start)/step > maxRange {
			return nil, fmt.Errorf("untilStep %d %d %d: more than %d items", start, stop, step, maxRange)
		}
		return untilStep(start, stop, step), nil
	}
	m["repeat"] = func(n int, s string) (string, error) {
		if n > 0 && len(s)*n > maxRenderedString {
			return "", fmt.Errorf("repeat %d: more than %d bytes", n, maxRenderedString)
		}
		return repeat(n, s), nil
	}
	seq := m["seq"].(func(...int) string)
	m["seq"] = func(p ...int) (string, error) {
		if len(p) > 0 && (p[len(p)-1] > maxRange || p[len(p)-1] < -maxRange || (len(p) > 1 && p[0] < -maxRange)) {
			return "", fmt.Errorf("seq: more than %d items", maxRange)
		}
		return seq(p...), nil
	}
	return m
}()

var baseTemplate = template.New("base").Funcs(funcs)

// tplMaxDepth is how deep Argo CD lets tpl call itself.
const tplMaxDepth = 3

var invalidDNSChars = regexp.MustCompile("[^-a-z0-9.]")

// sanitizeName is Argo CD's normalize: lower case, every character outside
// [-a-z0-9.] a dash, at most 253 characters, dashes and dots trimmed.
func sanitizeName(name string) string {
	name = invalidDNSChars.ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// slugifyName is Argo CD's slugify: [maxSize [smartTruncate]] name.
func slugifyName(args ...any) (string, error) {
	maxSize, smart, name := 50, true, ""
	for i, a := range args {
		var ok bool
		switch i {
		case len(args) - 1:
			name, ok = a.(string)
		case 0:
			maxSize, ok = a.(int)
		case 1:
			smart, ok = a.(bool)
		default:
			ok = true
		}
		if !ok {
			return "", fmt.Errorf("slugify: argument %d is a %T", i+1, a)
		}
	}
	sl := slugMaker{maxLength: maxSize, smartTruncate: smart}
	return sl.make(sanitizeName(name)), nil
}

// slugMu guards the slug package's settings, which are package variables.
var slugMu sync.Mutex

type slugMaker struct {
	maxLength     int
	smartTruncate bool
}

func (s slugMaker) make(name string) string {
	slugMu.Lock()
	defer slugMu.Unlock()
	slug.EnableSmartTruncate, slug.MaxLength = s.smartTruncate, s.maxLength
	return slug.Make(name)
}

func toYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

func fromYAML(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func fromYAMLArray(s string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, err
	}
	return a, nil
}

// limitWriter fails a template's execution once its output passes the bound.
type limitWriter struct {
	b strings.Builder
}

var errTooLong = fmt.Errorf("rendered text longer than %d bytes", maxRenderedString)

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > maxRenderedString {
		return 0, errTooLong
	}
	return w.b.Write(p)
}

var templated = regexp.MustCompile(".*{{.*}}.*")

// replace renders one string as Argo CD's Render.Replace does: a Go template
// with sprig when goTemplate is set, else fasttemplate's {{key}} replaced by
// string parameters only, unknown keys left as written.
func (r *resolver) replace(tmpl string, params map[string]any, options []string) (string, error) {
	if r.goTemplate {
		if !strings.Contains(tmpl, "{{") {
			// a template without an action executes to its own text
			return tmpl, nil
		}
		t, err := baseTemplate.Clone()
		if err != nil {
			return "", err
		}
		for _, o := range options {
			t = t.Option(o) // options are checked in Resolve
		}
		t = withTpl(t.Funcs(template.FuncMap{tickName: r.tick}))
		parsed, err := t.Parse(tmpl)
		if err != nil {
			return "", fmt.Errorf("parse template %q: %w", tmpl, err)
		}
		instrument(parsed)
		var w limitWriter
		if err := parsed.Execute(&w, params); err != nil {
			return "", fmt.Errorf("execute template %q: %w", tmpl, err)
		}
		return w.b.String(), nil
	}
	if !templated.MatchString(tmpl) {
		return tmpl, nil
	}
	var b strings.Builder
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return "", fmt.Errorf("template %q: a {{ without its }}", tmpl)
		}
		tag := rest[:j]
		rest = rest[j+2:]
		key := strings.TrimSpace(tag)
		if v, ok := params[key].(string); ok && key != "" {
			b.WriteString(v)
		} else {
			b.WriteString("{{" + tag + "}}")
		}
		if b.Len() > maxRenderedString {
			return "", errTooLong
		}
	}
	return b.String(), nil
}

// withTpl adds Argo CD's tpl function, which renders a string as a template
// with the same functions and options, at most tplMaxDepth deep.
func withTpl(parent *template.Template) *template.Template {
	depth := 0
	return parent.Funcs(template.FuncMap{"tpl": func(tpl string, vals any) (string, error) {
		depth++
		defer func() { depth-- }()
		if depth > tplMaxDepth {
			return "", fmt.Errorf("tpl: deeper than %d", tplMaxDepth)
		}
		t, err := parent.Clone()
		if err != nil {
			return "", err
		}
		if t, err = t.New(parent.Name()).Parse(tpl); err != nil {
			return "", fmt.Errorf("tpl: parse %q: %w", tpl, err)
		}
		instrument(t)
		var w limitWriter
		if err := t.Execute(&w, vals); err != nil {
			return "", fmt.Errorf("tpl: execute %q: %w", tpl, err)
		}
		return strings.ReplaceAll(w.b.String(), "<no value>", ""), nil
	}})
}

// checkOptions refuses goTemplateOptions text/template does not know, which
// would stop Argo CD's controller.
func checkOptions(options []string) error {
	for _, o := range options {
		switch o {
		case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
		default:
			return fmt.Errorf("goTemplateOptions: %q is not an option Go templates know (missingkey=default, invalid, zero or error)", o)
		}
	}
	return nil
}

// renderValue renders every string and map key of a decoded value, as Argo
// CD's deeplyReplace does over an Application: null map values are dropped,
// other scalars kept.
func (r *resolver) renderValue(v any, params map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		return r.replace(x, params, r.options)
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			e := x[k]
			if e == nil {
				continue
			}
			v, err := r.renderValue(e, params)
			if err != nil {
				return nil, err
			}
			rk, err := r.replace(k, params, r.options)
			if err != nil {
				return nil, err
			}
			out[rk] = v
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, err := r.renderValue(e, params)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return v, nil
}

// maxTicks bounds the loop iterations and template calls all of one set's
// templates may run, so {{ range until 100000 }}{{ range until 100000 }}
// stops with an error instead of running for hours.
const maxTicks = 1_000_000

// tickName is the function instrument calls at the start of every template
// and every range iteration.
const tickName = "driftfixTick"

func (r *resolver) tick() (string, error) {
	r.ticks++
	if r.ticks > maxTicks {
		return "", fmt.Errorf("templates run more than %d loop iterations and template calls in one ApplicationSet", maxTicks)
	}
	return "", nil
}

// instrument makes every template of t, and every range body in it, call
// the tick function first; the call prints nothing.
func instrument(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Tree.Root == nil {
			continue
		}
		addTicks(tt.Tree.Root)
		tt.Tree.Root.Nodes = append([]tparse.Node{tickNode()}, tt.Tree.Root.Nodes...)
	}
}

func addTicks(n tparse.Node) {
	switch x := n.(type) {
	case *tparse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			addTicks(c)
		}
	case *tparse.RangeNode:
		addTicks(x.List)
		addTicks(x.ElseList)
		if x.List != nil {
			x.List.Nodes = append([]tparse.Node{tickNode()}, x.List.Nodes...)
		}
	case *tparse.IfNode:
		addTicks(x.List)
		addTicks(x.ElseList)
	case *tparse.WithNode:
		addTicks(x.List)
		addTicks(x.ElseList)
	}
}

func tickNode() tparse.Node {
	cmd := &tparse.CommandNode{NodeType: tparse.NodeCommand, Args: []tparse.Node{tparse.NewIdentifier(tickName)}}
	return &tparse.ActionNode{NodeType: tparse.NodeAction, Pipe: &tparse.PipeNode{NodeType: tparse.NodePipe, Cmds: []*tparse.CommandNode{cmd}}}
}
