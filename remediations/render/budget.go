package render

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
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
//
// The values a template serializes (toYaml, toJson, tpl) are charged their
// own size where the estimate sees which values they are: a .Values path,
// or the dot (and $) that a with, a range or an include sets to one; only
// a value it cannot see is charged the whole values file. A chart calls
// toYaml once per block it copies from its values (resources, affinity,
// volumes, ...), so charging each call the whole file made charts of large
// values, as the official argo-cd chart, estimated at a hundred times
// their render.

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
	// dot and dollar are what . and $ are where the estimate walks; vars
	// the variables declared so far (the last declaration of a name wins).
	dot, dollar scope
	vars        map[string]scope
	// sizes memoizes serialized sizes by scope key.
	sizes map[string]serialized
	// mutable is set when a template changes the values in place.
	mutable bool
}

// scope is what the dot (or $) is, as far as the estimate sees: the
// template's root (whose Values are the chart's values), a value found by a
// path from the root, or unknown.
type scope struct {
	root  bool
	known bool
	v     any
	key   string // the path it was found by, for memoizing
	// fields are a dict's keys, each a scope (include "x" (dict "context"
	// . "name" .Values.a), as charts pass several values to a helper).
	fields map[string]scope
	// bound, for a value not known, is the most bytes it prints as (an
	// include's output read back with fromYaml, a merge with one).
	bound float64
}

var rootScope = scope{root: true, known: true, key: "$"}

// serialized is the size of a value as toYaml prints it, in bytes and lines.
type serialized struct{ bytes, lines float64 }

// estimate returns the upper estimate of a chart's rendered bytes and the
// largest single template's share, by template file name.
func estimate(c *chart.Chart, values map[string]any, valuesBytes int64) (float64, string, error) {
	e := &estimator{defs: map[string]*parse.Tree{}, memo: map[string]float64{}, active: map[string]bool{}, values: values, valSize: float64(valuesBytes),
		dot: rootScope, dollar: rootScope, sizes: map[string]serialized{}, vars: map[string]scope{}}
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
	// A template that changes the values in place (set, unset, merge into
	// a map of them) makes what the values file says no measure of what
	// is printed: every value is then charged as unseen.
	for _, t := range append(slices.Collect(maps.Values(mains)), slices.Collect(maps.Values(e.defs))...) {
		if mutatesValues(t.Root) {
			e.mutable = true
		}
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

// define is the cost of a named template called with arg as its dot (and
// $), memoized by name and the argument's path.
func (e *estimator) define(name string, arg scope) float64 {
	key := name + "\x00" + arg.key
	if v, ok := e.memo[key]; ok {
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
	dot, dollar := e.dot, e.dollar
	e.dot, e.dollar = arg, arg
	v := e.node(def.Root)
	e.dot, e.dollar = dot, dollar
	delete(e.active, name)
	e.memo[key] = v
	return v
}

// argScope is the scope a node gives as an argument or a pipeline's
// value: the dot, $, a variable, a field path from one of them, a literal,
// or a pipeline of functions the estimate follows (dict, default,
// coalesce, deepCopy, merge, mergeOverwrite, concat); else unknown.
func (e *estimator) argScope(n parse.Node) scope {
	unknown := scope{key: "?"}
	switch n := n.(type) {
	case *parse.DotNode:
		return e.dot
	case *parse.FieldNode:
		return e.walk(e.dot, n.Ident)
	case *parse.VariableNode:
		if len(n.Ident) == 0 {
			return unknown
		}
		from, ok := e.vars[n.Ident[0]]
		if n.Ident[0] == "$" {
			from, ok = e.dollar, true
		}
		if !ok {
			return unknown
		}
		return e.walk(from, n.Ident[1:])
	case *parse.StringNode:
		return scope{known: true, v: n.Text, key: strconv.Quote(n.Text)}
	case *parse.IdentifierNode:
		// a function called without arguments: dict and list make empty values
		switch n.Ident {
		case "dict":
			return scope{known: true, v: map[string]any{}, key: "dict()"}
		case "list":
			return scope{known: true, v: []any{}, key: "list()"}
		}
	case *parse.BoolNode, *parse.NumberNode, *parse.NilNode:
		return scope{known: true, v: nil, key: n.String()}
	case *parse.PipeNode:
		if n == nil {
			return unknown
		}
		var cur *scope
		for _, c := range n.Cmds {
			v := e.commandScope(c, cur)
			cur = &v
		}
		if cur == nil {
			return unknown
		}
		return *cur
	}
	return unknown
}

// commandScope is the value of one command of a pipeline, piped the
// previous command's value when there is one.
func (e *estimator) commandScope(c *parse.CommandNode, piped *scope) scope {
	unknown := scope{key: "?"}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		if len(c.Args) == 1 && piped == nil {
			return e.argScope(c.Args[0])
		}
		return unknown
	}
	var args []scope
	for _, a := range c.Args[1:] {
		args = append(args, e.argScope(a))
	}
	if piped != nil {
		args = append(args, *piped)
	}
	// the value a function passes on: the piped one, else its first argument
	through := unknown
	if piped != nil {
		through = *piped
	} else if len(args) > 0 {
		through = args[0]
	}
	switch id.Ident {
	case "dict":
		if piped != nil || len(c.Args)%2 == 0 {
			return unknown
		}
		if len(c.Args) == 1 {
			return scope{known: true, v: map[string]any{}, key: "dict()"}
		}
		d := scope{known: true, key: "dict(", fields: map[string]scope{}}
		for i := 1; i+1 < len(c.Args); i += 2 {
			k, ok := c.Args[i].(*parse.StringNode)
			if !ok {
				return unknown
			}
			f := args[i]
			d.fields[k.Text] = f
			d.key += k.Text + "=" + f.key + ","
		}
		d.key += ")"
		return d
	case "default", "coalesce":
		// either argument may be the value: the larger bounds it
		return e.largest(args)
	case "deepCopy", "toYaml", "toJson", "toRawJson", "toPrettyJson", "fromYaml", "fromJson", "toString",
		"trim", "quote", "squote", "lower", "upper", "omit", "pick", "nindent", "indent":
		// a copy, a part, or the same value printed or read back: no larger
		// as printed (an indent's lines aside, charged where it prints)
		return through
	case "merge", "mergeOverwrite", "concat":
		return e.combine(id.Ident, args)
	case "include":
		if len(c.Args) != 3 {
			return unknown
		}
		if name, ok := c.Args[1].(*parse.StringNode); ok {
			return scope{key: "?", bound: math.Max(e.define(name.Text, args[1]), 1)}
		}
	}
	return unknown
}

// largest is the one of known plain values whose printed form is largest.
func (e *estimator) largest(args []scope) scope {
	best, bestSize := scope{key: "?"}, -1.0
	for _, a := range args {
		sz, ok := e.serializedSize(a)
		if !ok {
			return scope{key: "?"}
		}
		if sz.bytes > bestSize {
			best, bestSize = a, sz.bytes
		}
	}
	return best
}

// boundOf is a scope's printed size as a bound, or false when not known.
func (e *estimator) boundOf(a scope) (float64, bool) {
	sz, ok := e.serializedSize(a)
	return sz.bytes, ok
}

// combine is what merge and mergeOverwrite (maps, merged deeply) or concat
// (lists, appended) make of known plain values.
func (e *estimator) combine(fn string, args []scope) scope {
	if len(args) == 0 {
		return scope{key: "?"}
	}
	key := fn + "("
	var sum float64
	bounded := false
	for _, a := range args {
		b, ok := e.boundOf(a)
		if !ok {
			return scope{key: "?"}
		}
		sum += b
		bounded = bounded || !a.known
		key += a.key + ","
	}
	if bounded {
		// one side is known only by its size: the result is no larger than both
		return scope{key: "?", bound: sum}
	}
	key += ")"
	if fn == "concat" {
		var out []any
		for _, a := range args {
			l, ok := a.v.([]any)
			if !ok && a.v != nil {
				return scope{key: "?"}
			}
			out = append(out, l...)
		}
		return scope{known: true, v: out, key: key}
	}
	var out any = map[string]any{}
	for _, a := range args {
		out = mergeForSize(out, a.v)
	}
	return scope{known: true, v: out, key: key}
}

// mergeForSize merges b into a deeply, b's scalars winning (the size of
// either Sprig merge, whichever side wins).
func mergeForSize(a, b any) any {
	am, aok := asMap(a)
	bm, bok := asMap(b)
	if !aok || !bok {
		if b == nil {
			return a
		}
		return b
	}
	out := make(map[string]any, len(am)+len(bm))
	for k, v := range am {
		out[k] = v
	}
	for k, v := range bm {
		out[k] = mergeForSize(out[k], v)
	}
	return out
}

// walk follows field names from a scope: a dict's keys, the root's Values,
// a map's keys (a key the values do not have is nil, as Helm reads it).
func (e *estimator) walk(from scope, ident []string) scope {
	cur := from
	for _, k := range ident {
		switch {
		case !cur.known:
			return scope{key: "?"}
		case cur.fields != nil:
			next, ok := cur.fields[k]
			if !ok {
				return scope{key: "?"}
			}
			cur = next
		case cur.root:
			if k != "Values" || e.mutable {
				return scope{key: "?"}
			}
			cur = scope{known: true, v: e.values, key: "$.Values"}
		default:
			m, _ := asMap(cur.v)
			cur = scope{known: true, v: m[k], key: cur.key + "." + k}
		}
	}
	return cur
}

// pipeScope is the scope a with or range pipeline's value gives.
func (e *estimator) pipeScope(p *parse.PipeNode) scope {
	if p == nil {
		return scope{key: "?"}
	}
	return e.argScope(p)
}

// within evaluates f with the dot set to s.
func (e *estimator) within(s scope, f func() float64) float64 {
	dot := e.dot
	e.dot = s
	v := f()
	e.dot = dot
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
		if n.Pipe != nil && len(n.Pipe.Decl) == 1 {
			e.vars[n.Pipe.Decl[0].Ident[0]] = e.argScope(n.Pipe)
		}
		return e.pipe(n.Pipe)
	case *parse.IfNode:
		return e.pipe(n.Pipe) + math.Max(e.node(n.List), e.node(n.ElseList))
	case *parse.WithNode:
		body := e.within(e.pipeScope(n.Pipe), func() float64 { return e.node(n.List) })
		return e.pipe(n.Pipe) + math.Max(body, e.node(n.ElseList))
	case *parse.RangeNode:
		// Each item's body is charged as the largest item's.
		item := e.largestItem(e.pipeScope(n.Pipe))
		if d := n.Pipe.Decl; len(d) > 0 {
			e.vars[d[len(d)-1].Ident[0]] = item
			if len(d) == 2 {
				e.vars[d[0].Ident[0]] = scope{key: "?"}
			}
		}
		body := e.within(item, func() float64 { return e.node(n.List) })
		return e.pipe(n.Pipe) + mul(e.items(n.Pipe), body) + e.node(n.ElseList)
	case *parse.TemplateNode:
		arg := scope{key: "?"}
		if n.Pipe != nil {
			arg = e.argScope(n.Pipe)
		}
		return e.pipe(n.Pipe) + e.define(n.Name, arg)
	}
	return 0
}

// mutatesValues says whether a template calls a function that changes a
// map in place (set, unset, merge, mergeOverwrite) on something other than
// a map it made (dict, deepCopy): the chart's values, as far as it can tell.
func mutatesValues(n parse.Node) bool {
	found := false
	var visit func(n parse.Node)
	visit = func(n parse.Node) {
		if found || n == nil {
			return
		}
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				visit(c)
			}
		case *parse.ActionNode:
			visit(n.Pipe)
		case *parse.IfNode:
			visit(n.Pipe)
			visit(n.List)
			visit(n.ElseList)
		case *parse.WithNode:
			visit(n.Pipe)
			visit(n.List)
			visit(n.ElseList)
		case *parse.RangeNode:
			visit(n.Pipe)
			visit(n.List)
			visit(n.ElseList)
		case *parse.TemplateNode:
			visit(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				if id, ok := c.Args[0].(*parse.IdentifierNode); ok && len(c.Args) > 1 {
					switch id.Ident {
					case "set", "unset", "merge", "mergeOverwrite":
						switch a := c.Args[1].(type) {
						case *parse.FieldNode, *parse.DotNode, *parse.ChainNode:
							found = true
						case *parse.VariableNode:
							found = found || a.Ident[0] == "$" // a declared variable is most often a dict
						}
					}
				}
				for _, a := range c.Args {
					visit(a)
				}
			}
		}
	}
	visit(n)
	return found
}

// mul multiplies two costs, a zero count winning over an unbounded cost (a
// range over an empty list of a template that includes itself runs
// nothing): 0 × Inf would be NaN, which no limit compares over.
func mul(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a * b
}

// pipe is the cost of a pipeline: each command's output, and the lines an
// indent or nindent adds to what is piped into it.
func (e *estimator) pipe(p *parse.PipeNode) float64 {
	if p == nil {
		return 0
	}
	var s, lines float64
	var piped *scope
	for i, c := range p.Cmds {
		cost, out := e.command(c, piped)
		if id, ok := c.Args[0].(*parse.IdentifierNode); ok && i > 0 && (id.Ident == "indent" || id.Ident == "nindent") {
			// the piped text's lines, each indented
			cost = mul(e.sizedArg(c), lines+1)
		}
		s += cost
		lines = out
		v := e.commandScope(c, piped)
		piped = &v
	}
	return s
}

// serializers print a value.
var serializers = map[string]bool{"toYaml": true, "toJson": true, "toPrettyJson": true, "toRawJson": true, "toToml": true, "toYamlPretty": true, "tpl": true}

// command is the cost of one command, and the lines of its output as far
// as known (for an indent piped after it).
func (e *estimator) command(c *parse.CommandNode, piped *scope) (float64, float64) {
	var s float64
	for _, a := range c.Args {
		if p, ok := a.(*parse.PipeNode); ok {
			s += e.pipe(p)
		}
	}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		return s + actionBytes, 1
	}
	switch fn := id.Ident; {
	case fn == "include" && len(c.Args) > 1:
		if name, ok := c.Args[1].(*parse.StringNode); ok {
			arg := scope{key: "?"}
			if len(c.Args) > 2 {
				arg = e.argScope(c.Args[2])
			}
			v := e.define(name.Text, arg)
			return s + v, v / 2
		}
		return s + actionBytes*unknownRange, unknownRange
	case serializers[fn]:
		val := scope{key: "?"}
		switch {
		case len(c.Args) == 2 && piped == nil:
			val = e.argScope(c.Args[1])
		case len(c.Args) == 1 && piped != nil:
			val = *piped
		case fn == "tpl" && len(c.Args) == 3 && piped == nil:
			// tpl TEXT CONTEXT prints its text with actions run
			val = e.argScope(c.Args[1])
		}
		if sz, ok := e.serializedSize(val); ok {
			return s + sz.bytes, sz.lines
		}
		// the whole values file, for a value the estimate does not see
		return s + e.valSize, e.valLines()
	case heavy[fn] > 0:
		return s + heavy[fn], 1
	case sized[fn]:
		return s + e.sizedArg(c), 1
	}
	return s + actionBytes, 1
}

// serializedSize is the size of the value a scope holds as toYaml prints
// it (JSON prints no more), memoized by the scope's path.
func (e *estimator) serializedSize(sc scope) (serialized, bool) {
	if !sc.known && sc.bound > 0 {
		return serialized{bytes: sc.bound, lines: sc.bound / 2}, true
	}
	if !sc.known || sc.root || sc.fields != nil {
		return serialized{}, false
	}
	if sz, ok := e.sizes[sc.key]; ok {
		return sz, true
	}
	b, err := yaml.Marshal(sc.v)
	if err != nil {
		return serialized{}, false
	}
	sz := serialized{bytes: float64(len(b)), lines: float64(bytes.Count(b, []byte("\n")) + 1)}
	e.sizes[sc.key] = sz
	return sz, true
}

// valLines is the lines of the whole values as toYaml prints them.
func (e *estimator) valLines() float64 {
	sz, ok := e.serializedSize(scope{known: true, v: e.values, key: "$.Values"})
	if !ok {
		return e.valSize / 2
	}
	return sz.lines
}

// largestItem is the item of a known list or map whose serialized form is
// largest (the one that costs the most in a range's body), else unknown.
func (e *estimator) largestItem(sc scope) scope {
	if !sc.known && sc.bound > 0 {
		return scope{key: "?", bound: sc.bound}
	}
	if !sc.known || sc.root || sc.fields != nil {
		return scope{key: "?"}
	}
	best, bestSize := scope{key: "?"}, -1.0
	consider := func(k string, v any) {
		item := scope{known: true, v: v, key: sc.key + "[" + k + "]"}
		if sz, ok := e.serializedSize(item); ok && sz.bytes > bestSize {
			best, bestSize = item, sz.bytes
		}
	}
	switch v := sc.v.(type) {
	case []any:
		for i, x := range v {
			consider(strconv.Itoa(i), x)
		}
	default:
		if m, ok := asMap(v); ok {
			for k, x := range m {
				consider(k, x)
			}
		}
	}
	return best
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

// lookup resolves a node to a plain value of the chart's values (a path
// from the dot, $ or a variable), as far as the estimate sees.
func (e *estimator) lookup(n parse.Node) (any, bool) {
	sc := e.argScope(n)
	if !sc.known || sc.root || sc.fields != nil {
		return nil, false
	}
	return sc.v, true
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
