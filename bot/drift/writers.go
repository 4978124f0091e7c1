package drift

import (
	"bytes"
	_ "embed"
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file is the one catalog of who writes fields (writers.yaml, data
// with a source per entry): the components whose field manager names driftfix
// knows, what each is, the fields it is documented to own, how a person's
// tool changed a field, and which managers are Argo CD's own sync or
// Kubernetes' own components. Every stage reads it from here: diff (what
// Kubernetes alone keeps), the classifiers (who wrote a field) and the
// safety model (who may keep one). A policy's writers come before it.

//go:embed writers.yaml
var catalogYAML []byte

// Catalog is the built-in writer catalog, read once; a malformed catalog
// stops the program at start with the entry it names.
var Catalog = mustCatalog(catalogYAML)

// ArgoCDManagers are the field managers Argo CD's sync writes as (the
// catalog's part: argocd). argocd-server is not one: it writes a resource
// only when a person edits, patches or deletes it through Argo CD's UI or API.
var ArgoCDManagers = catalogManagers(PartArgoCD)

// KubernetesManagers are the managers of Kubernetes' own components (the
// catalog's part: kubernetes): what they alone write beside Argo CD's
// request is the cluster's bookkeeping.
var KubernetesManagers = catalogManagers(PartKubernetes)

// The parts a catalog entry may play beside what it is.
const (
	PartArgoCD     = "argocd"
	PartKubernetes = "kubernetes"
)

// catalogFile is writers.yaml's shape.
type catalogFile struct {
	Writers []struct {
		Manager   string   `yaml:"manager"`
		Is        string   `yaml:"is"`
		Part      string   `yaml:"part"`
		Component string   `yaml:"component"`
		How       string   `yaml:"how"`
		Owns      []string `yaml:"owns"`
		Source    string   `yaml:"source"`
	} `yaml:"writers"`
	// The object graph's sections, read by ParseGraph (graph.go).
	References   yaml.Node `yaml:"references"`
	Labelled     yaml.Node `yaml:"labelled"`
	Deletions    yaml.Node `yaml:"deletions"`
	Admission    yaml.Node `yaml:"admission"`
	FeatureGates yaml.Node `yaml:"featureGates"`
}

// ParseCatalog reads a writer catalog; every entry needs a component and a
// source, and an entry a glob before it would shadow is refused.
func ParseCatalog(data []byte) ([]Writer, error) {
	var f catalogFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read the writer catalog: %w", err)
	}
	out := make([]Writer, 0, len(f.Writers))
	for i, e := range f.Writers {
		w := Writer{Manager: e.Manager, Is: WriterKind(e.Is), Part: e.Part, Component: e.Component, How: e.How, Source: e.Source}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("writer catalog entry %d (%s): %s", i+1, e.Manager, fmt.Sprintf(format, args...))
		}
		for _, o := range e.Owns {
			op, err := ParseOwnedPath(o)
			if err != nil {
				return nil, bad("owns: %v", err)
			}
			w.Owns = append(w.Owns, op)
		}
		if err := ValidateWriter(w); err != nil {
			return nil, bad("%v", err)
		}
		if w.Component == "" || !strings.HasPrefix(w.Source, "https://") {
			return nil, bad("needs a component and a source (an https:// URL where its writes are documented)")
		}
		if w.Part != "" && strings.ContainsAny(w.Manager, "*?[") {
			return nil, bad("part %s needs an exact manager name, not a glob", w.Part)
		}
		for _, prev := range out {
			if prev.Manager == w.Manager {
				return nil, bad("manager %s is listed twice", w.Manager)
			}
			if prev.MatchesManager(w.Manager) {
				return nil, bad("the glob %s before it matches %s, so this entry would never be read; put it first", prev.Manager, w.Manager)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

func mustCatalog(data []byte) []Writer {
	ws, err := ParseCatalog(data)
	if err != nil {
		panic(err)
	}
	return ws
}

// catalogManagers returns the managers of the catalog that play part.
func catalogManagers(part string) map[string]bool {
	out := map[string]bool{}
	for _, w := range Catalog {
		if w.Part == part {
			out[w.Manager] = true
		}
	}
	return out
}

// CatalogWriter returns the catalog's first entry for a field manager, nil
// when it has none.
func CatalogWriter(manager string) *Writer {
	for i := range Catalog {
		if Catalog[i].MatchesManager(manager) {
			return &Catalog[i]
		}
	}
	return nil
}

// WriterKind says what a field manager is: a controller that keeps a field,
// a person (or a person's or a pipeline's tool), or a generic client library
// whose name says nothing of the program that used it.
type WriterKind string

// The writer kinds.
const (
	WriterController WriterKind = "controller"
	WriterPerson     WriterKind = "person"
	WriterClient     WriterKind = "client"
)

// Writer is one entry of the writer catalog or of a policy's writers: a
// field manager (a name, or a glob with * and ?), what it is, and the paths it
// legitimately owns. Owning a path is what lets a fix hand that path to the
// writer (remove it from Git, or ignore it); a name alone never does.
type Writer struct {
	Manager   string
	Is        WriterKind
	Component string // what it is, in evidence ("cert-manager's cainjector")
	// Part is a role beside what it is: PartArgoCD (Argo CD's own sync) or
	// PartKubernetes (a component of Kubernetes itself); "" for none.
	Part string
	// How says, of a person's tool, how a change made with it was made
	// ("kubectl edit"); "" to show the manager's name.
	How  string
	Owns []OwnedPath
	// Source is where its ownership is documented, or where the policy says it.
	Source string
	// Policy says the entry comes from the policy: a platform lead's word,
	// not a claim the writer makes about itself.
	Policy bool
}

// OwnedPath is a path a writer owns, optionally only in some kinds.
type OwnedPath struct {
	Kinds []string // "group/Kind" ("/Kind" for the core group); empty: every kind
	Path  Pointer  // tokens match exactly, "*" matches any one token
	Text  string   // as written
}

// ValidateWriter checks one writer entry and returns what is wrong, in the
// words of the file it came from.
func ValidateWriter(w Writer) error {
	if strings.TrimSpace(w.Manager) == "" {
		return fmt.Errorf("manager is empty; name a field manager (as in metadata.managedFields[].manager) or a glob such as acme-*")
	}
	if _, err := path.Match(w.Manager, ""); err != nil {
		return fmt.Errorf("manager %q is not a valid glob: %w", w.Manager, err)
	}
	switch w.Is {
	case WriterController, WriterPerson:
	case WriterClient:
		if w.Policy {
			return fmt.Errorf("is %q: write controller or person", w.Is)
		}
	default:
		return fmt.Errorf("is %q: write controller or person", w.Is)
	}
	if w.Is == WriterPerson && len(w.Owns) > 0 {
		return fmt.Errorf("a person owns no field: owns is only for a controller")
	}
	switch w.Part {
	case "":
	case PartArgoCD, PartKubernetes:
		if w.Policy {
			return fmt.Errorf("part %q: only the built-in catalog names Argo CD's and Kubernetes' own managers", w.Part)
		}
		if w.Is != WriterController {
			return fmt.Errorf("part %q is a controller's: write is: controller", w.Part)
		}
	default:
		return fmt.Errorf("part %q: write %s or %s", w.Part, PartArgoCD, PartKubernetes)
	}
	if w.How != "" && w.Is != WriterPerson {
		return fmt.Errorf("how is for a person's tool (is: person)")
	}
	for _, o := range w.Owns {
		if len(o.Path) == 0 {
			return fmt.Errorf("owns %q names the whole object; name the paths the writer owns", o.Text)
		}
	}
	return nil
}

// ParseOwnedPath reads an owns entry: a JSON pointer ("/spec/replicas",
// "/webhooks/*/clientConfig/caBundle"), optionally after kinds
// ("apps/Deployment,apps/StatefulSet:/spec/replicas").
func ParseOwnedPath(s string) (OwnedPath, error) {
	o := OwnedPath{Text: s}
	rest := strings.TrimSpace(s)
	if i := strings.Index(rest, ":/"); i >= 0 {
		for _, k := range strings.Split(rest[:i], ",") {
			k = strings.TrimSpace(k)
			m := kindRe.FindStringSubmatch(k)
			if m == nil {
				return o, fmt.Errorf("%q is not a kind (write Kind or group/Kind, such as Deployment or apps/Deployment)", k)
			}
			if !strings.Contains(k, "/") {
				k = "/" + k
			}
			o.Kinds = append(o.Kinds, k)
		}
		rest = rest[i+1:]
	}
	if !strings.HasPrefix(rest, "/") {
		return o, fmt.Errorf("%q is not a JSON pointer: write it as /spec/replicas", rest)
	}
	p, err := ParsePointer(rest)
	if err != nil {
		return o, err
	}
	for _, t := range p {
		if t == "" {
			return o, fmt.Errorf("%q has an empty step; it must name a field", rest)
		}
	}
	o.Path = p
	return o, nil
}

// MatchesManager reports whether a field manager is this writer.
func (w *Writer) MatchesManager(m string) bool {
	if w.Manager == m {
		return true
	}
	ok, err := path.Match(w.Manager, m)
	return err == nil && ok
}

// OwnsPath returns the owned path that p of a resource of ref's kind is at or
// beneath.
func (w *Writer) OwnsPath(ref Ref, p Pointer) (OwnedPath, bool) {
	for _, o := range w.Owns {
		if len(o.Kinds) > 0 && !kindListed(o.Kinds, ref) {
			continue
		}
		if prefixMatches(o.Path, p) {
			return o, true
		}
	}
	return OwnedPath{}, false
}

func kindListed(kinds []string, ref Ref) bool {
	for _, k := range kinds {
		if k == ref.Group+"/"+ref.Kind {
			return true
		}
	}
	return false
}
