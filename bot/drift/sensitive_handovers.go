package drift

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file reads the allow-list of hand-overs (sensitive_handovers.yaml):
// the (grant, path) pairs at which a fix may let another writer keep a
// field. Refuse asks it for every remove-field and ignore-difference whose
// cause rests on a grant of a kind the table covers.

//go:embed sensitive_handovers.yaml
var handOversYAML []byte

// handOvers is the built-in allow-list and platformNever the kinds no
// platform rule may cover, read once; a malformed table stops the program at
// start with the entry it names.
var handOvers, platformNever = mustHandOvers(handOversYAML)

// GrantKind is the kind of proof a hand-over rests on.
type GrantKind string

// The grant kinds the allow-list names.
const (
	// GrantWebhook: a server-side dry run of Git's manifest stores the
	// live value, so an admitting webhook writes it on every apply.
	GrantWebhook GrantKind = "webhook"
	// GrantHPA: an autoscaler of the application's desired state scales
	// the workload and the live count lies in its range.
	GrantHPA GrantKind = "hpa"
	// GrantAllocation: the API server allocates the value where Git
	// declares none.
	GrantAllocation GrantKind = "allocation"
)

var grantKinds = []GrantKind{GrantWebhook, GrantHPA, GrantAllocation}

// GrantKindOf returns the kind of grant a cause's hand-over rests on, for
// the causes whose grants the allow-list covers. A controller's grant is
// bounded by its writers catalog or policy entry, which names its paths.
func GrantKindOf(c Cause) (GrantKind, bool) {
	switch c {
	case CauseWebhookMutation:
		return GrantWebhook, true
	case CauseHPAReplicas:
		return GrantHPA, true
	case CauseNormalized:
		return GrantAllocation, true
	}
	return "", false
}

// HandOver is one entry of the allow-list of hand-overs.
type HandOver struct {
	Grant  GrantKind
	Writer string // who writes the path, as people read it
	Why    string // why that writer legitimately keeps it
	Source string // where that is documented
	at     SensitivePath
}

// Pattern is the entry's path as written (relative to the pod spec for a
// pod scope).
func (h HandOver) Pattern() Pointer { return h.at.Pattern }

// handOverSpec is one entry as written.
type handOverSpec struct {
	Grant   string    `yaml:"grant"`
	Scope   ScopeList `yaml:"scope"`
	Pattern string    `yaml:"pattern"`
	Mode    string    `yaml:"mode"`
	Writer  string    `yaml:"writer"`
	Why     string    `yaml:"why"`
	Source  string    `yaml:"source"`
}

// platformKind is a platformNever entry: kinds no platform rule may cover.
type platformKind struct {
	scopes      []Scope
	why, source string
}

// platformKindSpec is a platformNever entry as written.
type platformKindSpec struct {
	Scope  ScopeList `yaml:"scope"`
	Why    string    `yaml:"why"`
	Source string    `yaml:"source"`
}

// parseHandOvers reads the allow-list strictly: an unknown key, an unknown
// grant kind, a scope or pattern that does not parse, a missing writer,
// reason or https source is an error naming the entry. The kinds no
// platform rule may cover come with it.
func parseHandOvers(data []byte) ([]HandOver, []platformKind, error) {
	var f struct {
		HandOvers     []handOverSpec     `yaml:"handOvers"`
		PlatformNever []platformKindSpec `yaml:"platformNever"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("read the allow-list of hand-overs: %w", err)
	}
	if len(f.HandOvers) == 0 {
		return nil, nil, errors.New("read the allow-list of hand-overs: it has no handOvers")
	}
	out := make([]HandOver, 0, len(f.HandOvers))
	for i, s := range f.HandOvers {
		h, err := s.compile()
		if err != nil {
			return nil, nil, fmt.Errorf("hand-over entry %d (%s %s %s): %w", i+1, s.Grant, strings.Join(s.Scope, ","), s.Pattern, err)
		}
		out = append(out, h)
	}
	var never []platformKind
	for i, s := range f.PlatformNever {
		pk := platformKind{why: s.Why, source: s.Source}
		err := error(nil)
		if len(s.Scope) == 0 {
			err = errors.New("scope is empty: name the kinds")
		}
		for _, raw := range s.Scope {
			sc, ok, perr := parseScope(strings.TrimSpace(raw))
			switch {
			case perr != nil:
				err = perr
			case !ok || sc.Pod || sc.Custom:
				err = fmt.Errorf("scope %q: name kinds (group/Kind, core/Kind, group/*)", raw)
			}
			pk.scopes = append(pk.scopes, sc)
		}
		switch {
		case err != nil:
		case strings.TrimSpace(s.Why) == "":
			err = errors.New("why is empty: say what the kinds carry")
		case !strings.HasPrefix(s.Source, "https://"):
			err = errors.New("source must be an https:// URL")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("platformNever entry %d (%s): %w", i+1, strings.Join(s.Scope, ","), err)
		}
		never = append(never, pk)
	}
	return out, never, nil
}

func (s handOverSpec) compile() (HandOver, error) {
	h := HandOver{Grant: GrantKind(s.Grant), Writer: s.Writer, Why: s.Why, Source: s.Source}
	known := false
	for _, k := range grantKinds {
		known = known || k == h.Grant
	}
	if !known {
		names := make([]string, len(grantKinds))
		for i, k := range grantKinds {
			names[i] = string(k)
		}
		return h, fmt.Errorf("grant %q: write one of %s", s.Grant, strings.Join(names, ", "))
	}
	if len(s.Scope) == 0 {
		return h, errors.New("scope is empty: name the kinds (group/Kind, core/Kind, pod, custom) the entry applies to")
	}
	for _, raw := range s.Scope {
		sc, ok, err := parseScope(strings.TrimSpace(raw))
		if err != nil {
			return h, err
		}
		if !ok {
			return h, errors.New("scope all: a hand-over names the kinds it applies to")
		}
		h.at.Scopes = append(h.at.Scopes, sc)
	}
	p := strings.TrimSpace(s.Pattern)
	if !strings.HasPrefix(p, "/") {
		return h, fmt.Errorf("pattern %q: write a JSON pointer (/spec/replicas)", s.Pattern)
	}
	ptr, err := ParsePointer(p)
	if err != nil {
		return h, err
	}
	for _, tok := range ptr {
		if tok == "" || tok == "*" && len(ptr) == 1 {
			return h, fmt.Errorf("pattern %q: every step must name a field, and the first not every field", s.Pattern)
		}
	}
	h.at.Pattern = ptr
	switch s.Mode {
	case "", "subtree":
	case "whole":
		h.at.Whole = true
	default:
		return h, fmt.Errorf("mode %q: write subtree or whole", s.Mode)
	}
	switch {
	case strings.TrimSpace(h.Writer) == "":
		return h, errors.New("writer is empty: say who writes the path")
	case strings.TrimSpace(h.Why) == "":
		return h, errors.New("why is empty: say why the writer legitimately keeps the path")
	case !strings.HasPrefix(h.Source, "https://"):
		return h, errors.New("source must be an https:// URL where the writer's ownership is documented")
	}
	return h, nil
}

func mustHandOvers(data []byte) ([]HandOver, []platformKind) {
	h, n, err := parseHandOvers(data)
	if err != nil {
		panic(err)
	}
	return h, n
}

// PlatformRuleRefused says why no platform rule may cover a kind: it
// carries identity, routing or access (platformNever in
// sensitive_handovers.yaml), so a rule hiding a path on every object of the
// kind, in every application and later ones, is left to each application's
// own rule or a person.
func PlatformRuleRefused(ref Ref) (string, bool) {
	for _, pk := range platformNever {
		for _, sc := range pk.scopes {
			if sc.appliesTo(Ref{Group: ref.Group, Kind: ref.Kind}) {
				return fmt.Sprintf("a platform rule would hide its paths on every %s of every application: %s is a kind of %s (%s), so each application's own rule or a person decides", ref.Kind, ref.Kind, pk.why, pk.source), true
			}
		}
	}
	return "", false
}

// HandOverAt returns the entry of the allow-list that lets a writer of
// grant kind k keep path p of a resource, and whether there is one.
func HandOverAt(k GrantKind, ref Ref, p Pointer) (HandOver, bool) {
	return handOverIn(handOvers, k, ref, p)
}

func handOverIn(list []HandOver, k GrantKind, ref Ref, p Pointer) (HandOver, bool) {
	for _, h := range list {
		if h.Grant != k {
			continue
		}
		pat, ok := builtin.place(&h.at, ref)
		if !ok || !prefixMatches(pat, p) || (h.at.Whole && len(p) != len(pat)) {
			continue
		}
		return h, true
	}
	return HandOver{}, false
}

// HandOvers returns the allow-list's entries of grant kind k, in order.
func HandOvers(k GrantKind) []HandOver {
	var out []HandOver
	for _, h := range handOvers {
		if h.Grant == k {
			out = append(out, h)
		}
	}
	return out
}
