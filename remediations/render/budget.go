package render

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Helm's template engine cannot be stopped or metered while it runs, so the
// templates are measured before they run: estimate gives an upper estimate of
// the bytes a chart can render, with every range multiplied by the length of
// what it ranges over (a literal `until N`, or the list at a .Values path),
// every include and template call expanded, and functions that allocate or
// burn CPU (repeat, randAlphaNum, genCA, bcrypt, …) charged what they cost.
// A range over something the estimate cannot see (a variable, a function's
// list) counts as unknownRange items, so loops nested in loops are charged
// even when their lengths are hidden.

const (
	unknownRange = 100     // items assumed for a range whose length is not known
	actionBytes  = 32      // bytes assumed for the output of one action
	keyCost      = 4 << 20 // charged per key or certificate generated (0.1–1 s of CPU; genPrivateKey "rsa" is 4096 bits): a default budget admits 8
	hashCost     = 1 << 20 // charged per bcrypt/htpasswd (≈ 50 ms of CPU)
)

// heavy are the functions charged keyCost or hashCost per call.
var heavy = map[string]float64{
	"genCA": keyCost, "genCAWithKey": keyCost, "genSelfSignedCert": keyCost, "genSelfSignedCertWithKey": keyCost,
	"genSignedCert": keyCost, "genSignedCertWithKey": keyCost, "genPrivateKey": keyCost, "derivePassword": hashCost,
	"bcrypt": hashCost, "htpasswd": hashCost,
}

// sized are functions whose output size is their first (or only numeric)
// argument: lists and strings of N items.
var sized = map[string]bool{
	"until": true, "repeat": true, "randAlphaNum": true, "randAlpha": true, "randAscii": true, "randNumeric": true,
	"randBytes": true, "seq": true, "untilStep": true, "indent": true, "nindent": true,
}

type estimator struct {
	defs    map[string]*parse.Tree
	memo    map[string]float64
	active  map[string]bool
	values  map[string]any
	valSize float64
	err     error
}

// estimate returns the upper estimate of a chart's rendered bytes and the
// largest single template's share, by template file name.
func estimate(c *chart.Chart, values map[string]any, valuesBytes int64) (float64, string, error) {
	e := &estimator{defs: map[string]*parse.Tree{}, memo: map[string]float64{}, active: map[string]bool{}, values: values, valSize: float64(valuesBytes)}
	mains := map[string]*parse.Tree{}
	var walk func(c *chart.Chart, prefix string) error
	walk = func(c *chart.Chart, prefix string) error {
		for _, t := range c.Templates {
			name := prefix + t.Name
			tree := parse.New(name)
			tree.Mode = parse.SkipFuncCheck
			set := map[string]*parse.Tree{}
			if _, err := tree.Parse(string(t.Data), "", "", set); err != nil {
				return fmt.Errorf("parse template %s: %w", name, err)
			}
			for n, def := range set {
				if n == name {
					mains[name] = def
				} else {
					e.defs[n] = def
				}
			}
		}
		for _, d := range c.Dependencies() {
			if err := walk(d, prefix+"charts/"+d.Name()+"/"); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(c, c.Name()+"/"); err != nil {
		return 0, "", err
	}
	names := make([]string, 0, len(mains))
	for n := range mains {
		names = append(names, n)
	}
	sort.Strings(names)
	var total, biggest float64
	var big string
	for _, n := range names {
		base := n[strings.LastIndex(n, "/")+1:]
		if strings.HasPrefix(base, "_") {
			continue // partials only run when included
		}
		cost := e.node(mains[n].Root)
		if e.err != nil {
			return 0, "", e.err
		}
		total += cost
		if cost > biggest {
			biggest, big = cost, n
		}
	}
	return total, big, nil
}

func (e *estimator) define(name string) float64 {
	if v, ok := e.memo[name]; ok {
		return v
	}
	def, ok := e.defs[name]
	if !ok {
		return 0 // Helm reports the missing template when it runs
	}
	if e.active[name] {
		// A template that includes itself: Helm allows 1000 levels.
		return math.Inf(1)
	}
	e.active[name] = true
	v := e.node(def.Root)
	delete(e.active, name)
	e.memo[name] = v
	return v
}

func (e *estimator) node(n parse.Node) float64 {
	switch n := n.(type) {
	case nil:
		return 0
	case *parse.ListNode:
		if n == nil {
			return 0
		}
		var s float64
		for _, c := range n.Nodes {
			s += e.node(c)
		}
		return s
	case *parse.TextNode:
		return float64(len(n.Text))
	case *parse.ActionNode:
		return e.pipe(n.Pipe)
	case *parse.IfNode:
		return e.pipe(n.Pipe) + math.Max(e.node(n.List), e.node(n.ElseList))
	case *parse.WithNode:
		return e.pipe(n.Pipe) + math.Max(e.node(n.List), e.node(n.ElseList))
	case *parse.RangeNode:
		return e.pipe(n.Pipe) + e.items(n.Pipe)*e.node(n.List) + e.node(n.ElseList)
	case *parse.TemplateNode:
		return e.pipe(n.Pipe) + e.define(n.Name)
	}
	return 0
}

func (e *estimator) pipe(p *parse.PipeNode) float64 {
	if p == nil {
		return 0
	}
	var s float64
	for _, c := range p.Cmds {
		s += e.command(c)
	}
	return s
}

func (e *estimator) command(c *parse.CommandNode) float64 {
	var s float64
	for _, a := range c.Args {
		if p, ok := a.(*parse.PipeNode); ok {
			s += e.pipe(p)
		}
	}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		return s + actionBytes
	}
	switch fn := id.Ident; {
	case fn == "include" && len(c.Args) > 1:
		if name, ok := c.Args[1].(*parse.StringNode); ok {
			return s + e.define(name.Text)
		}
		return s + actionBytes*unknownRange
	case fn == "tpl":
		return s + e.valSize
	case fn == "toYaml" || fn == "toJson" || fn == "toPrettyJson" || fn == "toRawJson" || fn == "toToml" || fn == "toYamlPretty":
		return s + e.valSize
	case heavy[fn] > 0:
		return s + heavy[fn]
	case sized[fn]:
		return s + e.sizedArg(c)
	}
	return s + actionBytes
}

// sizedArg is the size a sized function produces: the product of its
// literal numeric arguments (until 10 → 10, repeat 5 "ab" → 10), or the
// largest values path it names; unknown sizes count as unknownRange.
func (e *estimator) sizedArg(c *parse.CommandNode) float64 {
	n, known := 1.0, false
	for _, a := range c.Args[1:] {
		switch a := a.(type) {
		case *parse.NumberNode:
			if a.IsInt || a.IsFloat {
				n *= math.Max(math.Abs(a.Float64), 1)
				known = true
			}
		case *parse.StringNode:
			n *= math.Max(float64(len(a.Text)), 1)
		case *parse.FieldNode, *parse.VariableNode, *parse.ChainNode:
			if v, ok := e.lookup(a); ok {
				if f, err := strconv.ParseFloat(fmt.Sprint(v), 64); err == nil {
					n *= math.Max(math.Abs(f), 1)
					known = true
				}
			}
		}
	}
	if !known {
		return n * unknownRange
	}
	return n
}

// items is how many times a range runs: the length of the list or map at a
// .Values path, a literal until/untilStep/seq, or unknownRange.
func (e *estimator) items(p *parse.PipeNode) float64 {
	if p == nil || len(p.Cmds) == 0 {
		return 0
	}
	last := p.Cmds[len(p.Cmds)-1]
	if id, ok := last.Args[0].(*parse.IdentifierNode); ok {
		switch id.Ident {
		case "until", "untilStep", "seq":
			var nums []float64
			for _, a := range last.Args[1:] {
				if num, ok := a.(*parse.NumberNode); ok && (num.IsInt || num.IsFloat) {
					nums = append(nums, num.Float64)
				}
			}
			switch {
			case id.Ident == "until" && len(nums) == 1:
				return math.Max(nums[0], 0)
			case id.Ident == "untilStep" && len(nums) == 3 && nums[2] != 0:
				return math.Max((nums[1]-nums[0])/nums[2], 0)
			case id.Ident == "seq" && len(nums) > 0:
				return math.Abs(nums[len(nums)-1]-nums[0]) + 1
			}
		case "list", "tuple":
			return float64(len(last.Args) - 1)
		}
		return unknownRange
	}
	if len(last.Args) == 1 {
		if v, ok := e.lookup(last.Args[0]); ok {
			switch v := v.(type) {
			case []any:
				return float64(len(v))
			case map[string]any:
				return float64(len(v))
			case chartutil.Values:
				return float64(len(v))
			case nil:
				return 0
			}
			return 1
		}
	}
	return unknownRange
}

// lookup resolves .Values.a.b (or $.Values.a.b) against the chart's values.
func (e *estimator) lookup(n parse.Node) (any, bool) {
	var ident []string
	switch n := n.(type) {
	case *parse.FieldNode:
		ident = n.Ident
	case *parse.VariableNode:
		if len(n.Ident) == 0 || n.Ident[0] != "$" {
			return nil, false
		}
		ident = n.Ident[1:]
	default:
		return nil, false
	}
	if len(ident) < 2 || ident[0] != "Values" {
		return nil, false
	}
	var v any = e.values
	for _, k := range ident[1:] {
		m, ok := asMap(v)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func asMap(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case map[string]any:
		return v, true
	case chartutil.Values:
		return v, true
	}
	return nil, false
}
