package drift

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file reads the object graph of the writer catalog (writers.yaml):
// which field of one kind names an object of another, which label makes an
// object a component's, which field of Git's own manifest asks for the
// object's deletion, which annotation in-process admission leaves, and which
// fields a feature gate that is off makes the API server drop. Each entry
// has its source; the classifiers read them from Graph.

// Graph is the built-in catalog's object graph, read once; a malformed entry
// stops the program at start with the entry it names.
var Graph = mustGraph(catalogYAML)

// ObjectGraph is the object graph of a writer catalog.
type ObjectGraph struct {
	References   []Reference
	Labelled     []LabelledManager
	Deletions    []Deletion
	Admission    []AdmissionAnnotation
	FeatureGates []FeatureGate
}

// A Reference is a field of one kind that names an object of another kind
// in the same namespace.
type Reference struct {
	From  string  // group/Kind of the referrer ("/Kind" for the core group)
	Field Pointer // the name, or a reference object with name, kind, apiVersion
	// Default is "name" when an absent field means the referrer's own name.
	Default string
	To      string // group/Kind named, unless a reference object says its kind
	Source  string
}

// LabelledManager is a component that manages the objects carrying a label
// (with one of Values), whatever field manager its writes carry.
type LabelledManager struct {
	Label     string
	Values    []string
	Component string
	Deletes   bool // it deletes objects so labelled that it does not hold
	Source    string
}

// Deletion is a field of Git's manifest that has a component delete the
// object: the field set (a TTL), or, with OwnerAbsent, owner references to an
// owner that does not exist.
type Deletion struct {
	Kind        string // group/Kind, "" for every kind
	Field       Pointer
	OwnerAbsent bool
	Component   string
	Source      string
}

// AdmissionAnnotation is admission with no webhook object to list, known by
// the annotation it leaves on the object or that asks for it: the paths it
// rewrites.
type AdmissionAnnotation struct {
	Annotation string
	Component  string
	Paths      []Pointer // "*" matches any one token; a path beneath one matches
	Source     string
}

// FeatureGate is a field the API server drops while its gate is off.
type FeatureGate struct {
	Gate    string
	Kinds   []string // group/Kind; empty with PodSpec: every kind with a pod spec
	Path    Pointer  // of the object, or, with PodSpec, inside a pod spec
	PodSpec bool
	Alpha   Version // the release that added the field behind the gate
	Default Version // the first release that turns the gate on by default
	Source  string
}

// Version is a Kubernetes minor release.
type Version struct{ Major, Minor int }

// ParseVersion reads "1.27", "v1.26.10-eks-e71965b" or "v1.21.7".
func ParseVersion(s string) (Version, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("version %q is not major.minor", s)
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i]
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return Version{}, fmt.Errorf("version %q is not major.minor", s)
	}
	return Version{ma, mi}, nil
}

// Less reports whether v is an earlier release than w.
func (v Version) Less(w Version) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// graphFile is the graph's shape in writers.yaml.
type graphFile struct {
	References []struct {
		From    string `yaml:"from"`
		Field   string `yaml:"field"`
		Default string `yaml:"default"`
		To      string `yaml:"to"`
		Source  string `yaml:"source"`
	} `yaml:"references"`
	Labelled []struct {
		Label     string   `yaml:"label"`
		Values    []string `yaml:"values"`
		Component string   `yaml:"component"`
		Deletes   bool     `yaml:"deletes"`
		Source    string   `yaml:"source"`
	} `yaml:"labelled"`
	Deletions []struct {
		Kind      string `yaml:"kind"`
		Field     string `yaml:"field"`
		Owner     string `yaml:"owner"`
		Component string `yaml:"component"`
		Source    string `yaml:"source"`
	} `yaml:"deletions"`
	Admission []struct {
		Annotation string   `yaml:"annotation"`
		Component  string   `yaml:"component"`
		Paths      []string `yaml:"paths"`
		Source     string   `yaml:"source"`
	} `yaml:"admission"`
	FeatureGates []struct {
		Gate    string   `yaml:"gate"`
		Kinds   []string `yaml:"kinds"`
		Path    string   `yaml:"path"`
		PodSpec string   `yaml:"podSpec"`
		Alpha   string   `yaml:"alpha"`
		Default string   `yaml:"default"`
		Source  string   `yaml:"source"`
	} `yaml:"featureGates"`
	Writers yaml.Node `yaml:"writers"` // read by ParseCatalog
}

// ParseGraph reads the object graph of a writer catalog; every entry needs
// its source and well-formed kinds and paths.
func ParseGraph(data []byte) (ObjectGraph, error) {
	var f graphFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return ObjectGraph{}, fmt.Errorf("read the writer catalog's object graph: %w", err)
	}
	var g ObjectGraph
	bad := func(section string, i int, format string, args ...any) error {
		return fmt.Errorf("writer catalog %s entry %d: %s", section, i+1, fmt.Sprintf(format, args...))
	}
	kind := func(k string) (string, error) {
		if !kindRe.MatchString(strings.TrimPrefix(k, "/")) {
			return "", fmt.Errorf("%q is not a kind (write group/Kind, or /Kind for the core group)", k)
		}
		if !strings.Contains(k, "/") {
			k = "/" + k
		}
		return k, nil
	}
	pointer := func(s string) (Pointer, error) {
		if !strings.HasPrefix(s, "/") {
			return nil, fmt.Errorf("%q is not a JSON pointer: write it as /spec/secretName", s)
		}
		return ParsePointer(s)
	}
	source := func(s string) error {
		if !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("needs a source (an https:// URL where the behaviour is documented)")
		}
		return nil
	}
	for i, e := range f.References {
		r := Reference{Default: e.Default, Source: e.Source}
		var err error
		if r.From, err = kind(e.From); err != nil {
			return g, bad("references", i, "from: %v", err)
		}
		if r.To, err = kind(e.To); err != nil {
			return g, bad("references", i, "to: %v", err)
		}
		if r.Field, err = pointer(e.Field); err != nil || len(r.Field) == 0 {
			return g, bad("references", i, "field: %v", err)
		}
		if e.Default != "" && e.Default != "name" {
			return g, bad("references", i, "default %q: write name (the referrer's own name) or leave it out", e.Default)
		}
		if err := source(e.Source); err != nil {
			return g, bad("references", i, "%v", err)
		}
		g.References = append(g.References, r)
	}
	for i, e := range f.Labelled {
		if e.Label == "" || len(e.Values) == 0 || e.Component == "" {
			return g, bad("labelled", i, "needs a label, its values and a component")
		}
		if err := source(e.Source); err != nil {
			return g, bad("labelled", i, "%v", err)
		}
		g.Labelled = append(g.Labelled, LabelledManager{Label: e.Label, Values: e.Values, Component: e.Component, Deletes: e.Deletes, Source: e.Source})
	}
	for i, e := range f.Deletions {
		d := Deletion{Component: e.Component, Source: e.Source}
		var err error
		if e.Kind != "" {
			if d.Kind, err = kind(e.Kind); err != nil {
				return g, bad("deletions", i, "kind: %v", err)
			}
		}
		if d.Field, err = pointer(e.Field); err != nil || len(d.Field) == 0 {
			return g, bad("deletions", i, "field: %v", err)
		}
		switch e.Owner {
		case "":
		case "absent":
			d.OwnerAbsent = true
		default:
			return g, bad("deletions", i, "owner %q: write absent or leave it out", e.Owner)
		}
		if e.Component == "" {
			return g, bad("deletions", i, "needs a component")
		}
		if err := source(e.Source); err != nil {
			return g, bad("deletions", i, "%v", err)
		}
		g.Deletions = append(g.Deletions, d)
	}
	for i, e := range f.Admission {
		a := AdmissionAnnotation{Annotation: e.Annotation, Component: e.Component, Source: e.Source}
		if e.Annotation == "" || e.Component == "" || len(e.Paths) == 0 {
			return g, bad("admission", i, "needs an annotation, a component and the paths it rewrites")
		}
		for _, p := range e.Paths {
			ptr, err := pointer(p)
			if err != nil || len(ptr) == 0 {
				return g, bad("admission", i, "paths: %v", err)
			}
			a.Paths = append(a.Paths, ptr)
		}
		if err := source(e.Source); err != nil {
			return g, bad("admission", i, "%v", err)
		}
		g.Admission = append(g.Admission, a)
	}
	for i, e := range f.FeatureGates {
		fg := FeatureGate{Gate: e.Gate, Source: e.Source}
		if e.Gate == "" {
			return g, bad("featureGates", i, "needs a gate")
		}
		p := e.Path
		if (e.Path == "") == (e.PodSpec == "") {
			return g, bad("featureGates", i, "write either path (of the object) or podSpec (inside a pod spec)")
		}
		if e.PodSpec != "" {
			p, fg.PodSpec = e.PodSpec, true
		}
		var err error
		if fg.Path, err = pointer(p); err != nil || len(fg.Path) == 0 {
			return g, bad("featureGates", i, "path: %v", err)
		}
		if !fg.PodSpec && len(e.Kinds) == 0 {
			return g, bad("featureGates", i, "a path of the object needs its kinds")
		}
		for _, k := range e.Kinds {
			kk, err := kind(k)
			if err != nil {
				return g, bad("featureGates", i, "kinds: %v", err)
			}
			fg.Kinds = append(fg.Kinds, kk)
		}
		if fg.Alpha, err = ParseVersion(e.Alpha); err != nil {
			return g, bad("featureGates", i, "alpha: %v", err)
		}
		if fg.Default, err = ParseVersion(e.Default); err != nil {
			return g, bad("featureGates", i, "default: %v", err)
		}
		if !fg.Alpha.Less(fg.Default) {
			return g, bad("featureGates", i, "default %s must come after alpha %s", fg.Default, fg.Alpha)
		}
		if err := source(e.Source); err != nil {
			return g, bad("featureGates", i, "%v", err)
		}
		g.FeatureGates = append(g.FeatureGates, fg)
	}
	return g, nil
}

func mustGraph(data []byte) ObjectGraph {
	g, err := ParseGraph(data)
	if err != nil {
		panic(err)
	}
	return g
}

// KindOf returns an object's group/Kind as the graph writes it.
func KindOf(o Object) string {
	group, _ := SplitAPIVersion(Str(o, "apiVersion"))
	return group + "/" + Str(o, "kind")
}

// PathMatches reports whether p is at or beneath pattern, whose "*" tokens
// match any one token.
func PathMatches(pattern, p Pointer) bool { return prefixMatches(pattern, p) }

// PodSpecPath returns where an object of kind (group/Kind) keeps its pod
// spec, and whether it has one.
func PodSpecPath(kind string) (Pointer, bool) {
	switch kind {
	case "/Pod":
		return Pointer{"spec"}, true
	case "apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "batch/Job", "/ReplicationController":
		return Pointer{"spec", "template", "spec"}, true
	case "batch/CronJob":
		return Pointer{"spec", "jobTemplate", "spec", "template", "spec"}, true
	}
	return nil, false
}
