package drift

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SnapshotAPIVersion is the only snapshot format version this build reads.
const SnapshotAPIVersion = "driftfix/v1"

// Snapshot is everything needed to diagnose one Argo CD application offline.
type Snapshot struct {
	Application Object
	Resources   []Resource
	Renders     [][]Object
	Cluster     []Object
	Repo        Repo
	// Part is set when Resources are only some of the application's (a
	// large snapshot file diagnosed part by part): what the diagnosis
	// reads of all of them.
	Part *Part
}

// Part is what a diagnosis of some of an application's resources reads of
// all of them, gathered in one pass over the snapshot (the classifiers'
// share, classifiers.Shared, is handed to them apart).
type Part struct {
	// Annotated and Labelled say whether any target carries Argo CD's
	// tracking-id annotation, or the instance label with the application's
	// name (the tracking method diff infers when argocd-cm names none).
	Annotated, Labelled bool
}

// Resource is the desired and live state of one resource Argo CD compares.
type Resource struct {
	Target         Object
	Live           Object
	NormalizedLive Object
	PredictedLive  Object
	// DryRun is what the API server answered to a server-side dry-run apply
	// of Target (dryRun=All, field manager argocd-controller, force): the
	// object it and its admission webhooks would store. Optional.
	DryRun Object
}

// Ref identifies the resource from its target, or from live when it is not in Git.
func (r *Resource) Ref() Ref {
	if r.Target != nil {
		ref := RefOf(r.Target)
		if ref.Namespace == "" && r.Live != nil {
			ref.Namespace = Str(r.Live, "metadata", "namespace")
		}
		return ref
	}
	return RefOf(r.Live)
}

// Repo is the application's Git source at the compared revision.
type Repo struct {
	Files map[string]string
}

// AppName returns the Application's name.
func (s *Snapshot) AppName() string { return Str(s.Application, "metadata", "name") }

// ClusterObjects returns the objects in Cluster of the given kind.
func (s *Snapshot) ClusterObjects(kind string) []Object {
	var out []Object
	for _, o := range s.Cluster {
		if Str(o, "kind") == kind {
			out = append(out, o)
		}
	}
	return out
}

// ParseError is a problem in a snapshot file, with the line it was found on.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	loc := e.File
	if loc == "" {
		loc = "snapshot"
	}
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return loc + ": " + e.Msg
}

// LoadSnapshot reads and strictly parses a snapshot file (YAML or JSON)
// under DefaultLimits.
func LoadSnapshot(path string) (*Snapshot, error) {
	return LoadSnapshotWithLimits(path, Limits{})
}

// LoadSnapshotWithLimits reads and strictly parses a snapshot file under lim;
// a file over MaxBytes is not read.
func LoadSnapshotWithLimits(path string, lim Limits) (*Snapshot, error) {
	lim = lim.withDefaults()
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && overLimit(fi.Size(), lim.MaxBytes) {
		return nil, &ParseError{File: path, Msg: limitMsg("the file's size", fi.Size(), "MaxBytes", lim.MaxBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	s, err := ParseSnapshotWithLimits(data, lim)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return s, nil
}

// ParseSnapshot strictly parses a snapshot under DefaultLimits. An unknown or
// missing field is an error that names it and its line; no partial snapshot
// is ever returned.
func ParseSnapshot(data []byte) (*Snapshot, error) {
	return ParseSnapshotWithLimits(data, Limits{})
}

// ParseSnapshotWithLimits strictly parses a snapshot under lim. A snapshot
// over a limit is an error naming the limit (and the line, where one string
// or list is too long). JSON, which `driftfix snapshot` writes, is read
// without building a YAML tree; anything else, and any JSON the quick reader
// does not accept, goes through the YAML reader, which gives the same values
// and the detailed errors.
func ParseSnapshotWithLimits(data []byte, lim Limits) (*Snapshot, error) {
	lim = lim.withDefaults()
	if overLimit(int64(len(data)), lim.MaxBytes) {
		return nil, &ParseError{Msg: limitMsg("the snapshot's size", len(data), "MaxBytes", lim.MaxBytes)}
	}
	if s, ok, err := parseJSONSnapshot(data, lim); ok {
		return s, err
	}
	return parseYAMLSnapshot(data, lim)
}

// parseYAMLSnapshot reads any snapshot through a YAML node tree, which gives
// every error its line.
func parseYAMLSnapshot(data []byte, lim Limits) (*Snapshot, error) {
	s, _, err := parseYAMLCounted(data, lim)
	return s, err
}

// parseYAMLCounted is parseYAMLSnapshot, also returning the alias
// expansions and values it read (what maxAliasExpansions and maxNodes bound).
func parseYAMLCounted(data []byte, lim Limits) (*Snapshot, counts, error) {
	s, c, err := parseYAMLWith(data, lim)
	return s, counts{c.aliases, c.nodes}, err
}

func parseYAMLWith(data []byte, lim Limits) (*Snapshot, *converter, error) {
	c := &converter{lim: lim}
	s, err := c.snapshot(data)
	return s, c, err
}

func (c *converter) snapshot(data []byte) (*Snapshot, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, &ParseError{Line: yamlErrLine(err), Msg: "not valid YAML or JSON: " + trimYAMLErr(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ParseError{Line: extra.Line, Msg: "more than one document; a snapshot is one document"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &ParseError{Line: root.Line, Msg: "a snapshot must be a mapping with apiVersion, kind, application and resources"}
	}
	fields, err := c.fields(root, "snapshot", map[string]bool{
		"apiVersion": true, "kind": true, "application": true, "resources": true,
		"renders": true, "cluster": true, "repo": true,
	})
	if err != nil {
		return nil, err
	}
	for _, req := range []string{"apiVersion", "kind", "application", "resources"} {
		if fields[req] == nil {
			return nil, &ParseError{Line: root.Line, Msg: fmt.Sprintf("missing required field %q", req)}
		}
	}
	if v := fields["apiVersion"]; v.Kind != yaml.ScalarNode || v.Value != SnapshotAPIVersion {
		return nil, &ParseError{Line: v.Line, Msg: fmt.Sprintf("apiVersion must be %q, got %q", SnapshotAPIVersion, v.Value)}
	}
	if v := fields["kind"]; v.Kind != yaml.ScalarNode || v.Value != "Snapshot" {
		return nil, &ParseError{Line: v.Line, Msg: fmt.Sprintf("kind must be \"Snapshot\", got %q", v.Value)}
	}
	s := &Snapshot{}
	if s.Application, err = c.object(fields["application"], "application"); err != nil {
		return nil, err
	}
	if k := Str(s.Application, "kind"); k != "Application" {
		return nil, &ParseError{Line: fields["application"].Line, Msg: fmt.Sprintf("application: kind must be \"Application\", got %q", k)}
	}
	if err := c.resources(fields["resources"], s); err != nil {
		return nil, err
	}
	if n := fields["renders"]; n != nil && !isNull(n) {
		if n.Kind != yaml.SequenceNode {
			return nil, &ParseError{Line: n.Line, Msg: "renders: must be a list of renders, each a list of manifests"}
		}
		for i, r := range n.Content {
			r, err := c.deref(r)
			if err != nil {
				return nil, err
			}
			objs, err := c.objectList(r, fmt.Sprintf("renders[%d]", i))
			if err != nil {
				return nil, err
			}
			s.Renders = append(s.Renders, objs)
		}
	}
	if n := fields["cluster"]; n != nil && !isNull(n) {
		if s.Cluster, err = c.objectList(n, "cluster"); err != nil {
			return nil, err
		}
	}
	if n := fields["repo"]; n != nil && !isNull(n) {
		if err := c.repo(n, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (c *converter) resources(n *yaml.Node, s *Snapshot) error {
	if n.Kind != yaml.SequenceNode {
		return &ParseError{Line: n.Line, Msg: "resources: must be a list"}
	}
	if overLimit(len(n.Content), c.lim.MaxResources) {
		return &ParseError{Line: n.Line, Msg: limitMsg("resources: the number of entries", len(n.Content), "MaxResources", c.lim.MaxResources)}
	}
	for i, item := range n.Content {
		where := fmt.Sprintf("resources[%d]", i)
		item, err := c.deref(item)
		if err != nil {
			return err
		}
		if item.Kind != yaml.MappingNode {
			return &ParseError{Line: item.Line, Msg: where + ": must be a mapping with target and/or live"}
		}
		f, err := c.fields(item, where, map[string]bool{"target": true, "live": true, "normalizedLive": true, "predictedLive": true, "dryRun": true})
		if err != nil {
			return err
		}
		var r Resource
		for _, k := range []struct {
			name string
			dst  *Object
		}{{"target", &r.Target}, {"live", &r.Live}, {"normalizedLive", &r.NormalizedLive}, {"predictedLive", &r.PredictedLive}, {"dryRun", &r.DryRun}} {
			if f[k.name] == nil || isNull(f[k.name]) {
				continue
			}
			o, err := c.object(f[k.name], where+"."+k.name)
			if err != nil {
				return err
			}
			*k.dst = o
		}
		if r.Target == nil && r.Live == nil {
			return &ParseError{Line: item.Line, Msg: where + ": needs target or live (both are missing or null)"}
		}
		if r.Target != nil && r.Live != nil {
			t, l := RefOf(r.Target), RefOf(r.Live)
			if t.Kind != l.Kind || t.Name != l.Name || t.Group != l.Group {
				return &ParseError{Line: item.Line, Msg: fmt.Sprintf("%s: target is %s but live is %s", where, t, l)}
			}
		}
		s.Resources = append(s.Resources, r)
	}
	return nil
}

func (c *converter) repo(n *yaml.Node, s *Snapshot) error {
	if n.Kind != yaml.MappingNode {
		return &ParseError{Line: n.Line, Msg: "repo: must be a mapping with files"}
	}
	f, err := c.fields(n, "repo", map[string]bool{"files": true})
	if err != nil {
		return err
	}
	s.Repo.Files = map[string]string{}
	files := f["files"]
	if files == nil || isNull(files) {
		return nil
	}
	if files.Kind != yaml.MappingNode {
		return &ParseError{Line: files.Line, Msg: "repo.files: must map file paths to their content"}
	}
	for i := 0; i+1 < len(files.Content); i += 2 {
		k, v := files.Content[i], files.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return &ParseError{Line: v.Line, Msg: fmt.Sprintf("repo.files[%q]: content must be a string", k.Value)}
		}
		if _, dup := s.Repo.Files[k.Value]; dup {
			return &ParseError{Line: k.Line, Msg: fmt.Sprintf("repo.files: %q appears twice", k.Value)}
		}
		if overLimit(int64(len(v.Value)), c.lim.MaxStringBytes) {
			return &ParseError{Line: v.Line, Msg: limitMsg(fmt.Sprintf("repo.files[%q]: the file's size", k.Value), len(v.Value), "MaxStringBytes", c.lim.MaxStringBytes)}
		}
		s.Repo.Files[k.Value] = v.Value
	}
	return nil
}

func (c *converter) objectList(n *yaml.Node, where string) ([]Object, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, &ParseError{Line: n.Line, Msg: where + ": must be a list of Kubernetes objects"}
	}
	if overLimit(len(n.Content), c.lim.MaxResources) {
		return nil, &ParseError{Line: n.Line, Msg: limitMsg(where+": the number of entries", len(n.Content), "MaxResources", c.lim.MaxResources)}
	}
	out := make([]Object, 0, len(n.Content))
	for i, item := range n.Content {
		o, err := c.object(item, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// object converts a node to a Kubernetes object and checks apiVersion, kind and metadata.name.
func (c *converter) object(n *yaml.Node, where string) (Object, error) {
	n, err := c.deref(n)
	if err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, &ParseError{Line: n.Line, Msg: where + ": must be a Kubernetes object (a mapping)"}
	}
	v, err := c.value(n, 0)
	if err != nil {
		return nil, err
	}
	o := v.(map[string]any)
	for _, req := range []string{"apiVersion", "kind"} {
		if s, ok := o[req].(string); !ok || s == "" {
			return nil, &ParseError{Line: n.Line, Msg: fmt.Sprintf("%s: missing required field %q", where, req)}
		}
	}
	if Str(o, "metadata", "name") == "" {
		return nil, &ParseError{Line: n.Line, Msg: fmt.Sprintf("%s: missing required field \"metadata.name\"", where)}
	}
	return o, nil
}

// fields returns the values of a mapping by key, rejecting unknown and duplicate keys.
func (c *converter) fields(n *yaml.Node, where string, known map[string]bool) (map[string]*yaml.Node, error) {
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			names := make([]string, 0, len(known))
			for name := range known {
				names = append(names, name)
			}
			sort.Strings(names)
			return nil, &ParseError{Line: k.Line, Msg: fmt.Sprintf("%s: unknown field %q (known fields: %s)", where, k.Value, strings.Join(names, ", "))}
		}
		if _, dup := out[k.Value]; dup {
			return nil, &ParseError{Line: k.Line, Msg: fmt.Sprintf("%s: field %q appears twice", where, k.Value)}
		}
		v, err := c.deref(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		out[k.Value] = v
	}
	return out, nil
}

// deref follows an alias to the node its anchor names, so that an alias may
// stand wherever the node itself could; expansions count against the same
// bound as aliases inside values.
func (c *converter) deref(n *yaml.Node) (*yaml.Node, error) {
	for n.Kind == yaml.AliasNode {
		c.aliases++
		if c.aliases > maxAliasExpansions {
			return nil, &ParseError{Line: n.Line, Msg: "too many alias expansions"}
		}
		if n.Alias == nil {
			return nil, &ParseError{Line: n.Line, Msg: "unknown alias"}
		}
		n = n.Alias
	}
	return n, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 200

// maxAliasExpansions and maxNodes bound alias expansion ("billion laughs").
const (
	maxAliasExpansions = 10000
	maxNodes           = 2_000_000
)

type converter struct {
	lim     Limits
	aliases int
	nodes   int
}

// value converts a YAML node to plain Go values: map[string]any, []any, string,
// int64, float64, bool and nil. Keys must be unique.
func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &ParseError{Line: n.Line, Msg: "nested too deeply"}
	}
	c.nodes++
	if c.nodes > maxNodes {
		return nil, &ParseError{Line: n.Line, Msg: "too many values after expanding aliases"}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		target, err := c.deref(n)
		if err != nil {
			return nil, err
		}
		return c.value(target, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				if err := c.merge(out, vn, depth); err != nil {
					return nil, err
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, &ParseError{Line: k.Line, Msg: "mapping keys must be scalars"}
			}
			if overLimit(int64(len(k.Value)), c.lim.MaxStringBytes) {
				return nil, &ParseError{Line: k.Line, Msg: limitMsg("a key's length", len(k.Value), "MaxStringBytes", c.lim.MaxStringBytes)}
			}
			if _, dup := out[k.Value]; dup {
				return nil, &ParseError{Line: k.Line, Msg: fmt.Sprintf("key %q appears twice", k.Value)}
			}
			v, err := c.value(vn, depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		if overLimit(int64(len(n.Value)), c.lim.MaxStringBytes) {
			return nil, &ParseError{Line: n.Line, Msg: limitMsg("a string's length", len(n.Value), "MaxStringBytes", c.lim.MaxStringBytes)}
		}
		return scalar(n)
	}
	return nil, &ParseError{Line: n.Line, Msg: "unsupported YAML node"}
}

func (c *converter) merge(out map[string]any, n *yaml.Node, depth int) error {
	v, err := c.value(n, depth+1)
	if err != nil {
		return err
	}
	var srcs []any
	switch m := v.(type) {
	case map[string]any:
		srcs = []any{m}
	case []any:
		srcs = m
	default:
		return &ParseError{Line: n.Line, Msg: "merge key '<<' needs a mapping or a list of mappings"}
	}
	for _, s := range srcs {
		m, ok := s.(map[string]any)
		if !ok {
			return &ParseError{Line: n.Line, Msg: "merge key '<<' needs a mapping or a list of mappings"}
		}
		for k, mv := range m {
			if _, exists := out[k]; !exists {
				out[k] = mv
			}
		}
	}
	return nil
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &ParseError{Line: n.Line, Msg: fmt.Sprintf("bad boolean %q", n.Value)}
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, &ParseError{Line: n.Line, Msg: fmt.Sprintf("bad integer %q", n.Value)}
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, &ParseError{Line: n.Line, Msg: fmt.Sprintf("bad number %q", n.Value)}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &ParseError{Line: n.Line, Msg: fmt.Sprintf("number %q has no JSON form", n.Value)}
		}
		return f, nil
	default:
		// !!str, !!timestamp, !!binary and custom tags keep their text, as JSON would.
		return n.Value, nil
	}
}

func yamlErrLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}

func trimYAMLErr(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// MarshalJSON writes the snapshot in the driftfix/v1 format, which
// ParseSnapshot reads back (JSON is YAML).
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	type res struct {
		Target         Object `json:"target"`
		Live           Object `json:"live"`
		NormalizedLive Object `json:"normalizedLive,omitempty"`
		PredictedLive  Object `json:"predictedLive,omitempty"`
		DryRun         Object `json:"dryRun,omitempty"`
	}
	out := struct {
		APIVersion  string          `json:"apiVersion"`
		Kind        string          `json:"kind"`
		Application Object          `json:"application"`
		Resources   []res           `json:"resources"`
		Renders     [][]Object      `json:"renders,omitempty"`
		Cluster     []Object        `json:"cluster,omitempty"`
		Repo        *map[string]any `json:"repo,omitempty"`
	}{APIVersion: SnapshotAPIVersion, Kind: "Snapshot", Application: s.Application, Renders: s.Renders, Cluster: s.Cluster, Resources: []res{}}
	for _, r := range s.Resources {
		out.Resources = append(out.Resources, res{r.Target, r.Live, r.NormalizedLive, r.PredictedLive, r.DryRun})
	}
	if len(s.Repo.Files) > 0 {
		repo := map[string]any{"files": s.Repo.Files}
		out.Repo = &repo
	}
	return json.Marshal(out)
}
