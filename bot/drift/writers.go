package drift

import (
	"fmt"
	"path"
	"strings"
)

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
	Owns      []OwnedPath
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
