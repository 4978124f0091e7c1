package drift

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// This file reads the security-relevant paths: the built-in table
// (sensitive.yaml, reviewed data with a source per entry) and a policy's
// sensitivePaths, which share one entry format, SensitiveSpec, and one
// reader, SensitiveSpec.Compile. What cannot be data (how to judge content
// found only in live, which fix may still touch a path) is Go, named from
// the data.

//go:embed sensitive.yaml
var sensitiveYAML []byte

// builtin is the built-in table, read once; a malformed table stops the
// program at start with the entry it names.
var builtin = mustTable(sensitiveYAML)

// The reasons shown to users.
const (
	ReasonPrivilege   = "privilege"
	ReasonImage       = "image"
	ReasonWhatRuns    = "what runs"
	ReasonHostAccess  = "host access"
	ReasonIdentity    = "identity"
	ReasonSecret      = "secret"
	ReasonRBAC        = "RBAC"
	ReasonAdmission   = "admission"
	ReasonAPI         = "API registration"
	ReasonNetwork     = "network exposure"
	ReasonPodSecurity = "pod security"
	ReasonPolicy      = "policy"
	ReasonPlacement   = "node placement"
)

var reasons = []string{ReasonPrivilege, ReasonImage, ReasonWhatRuns, ReasonHostAccess, ReasonIdentity, ReasonSecret,
	ReasonRBAC, ReasonAdmission, ReasonAPI, ReasonNetwork, ReasonPodSecurity, ReasonPolicy, ReasonPlacement}

// SensitiveSpec is one security-relevant path as written, in the built-in
// table (bot/drift/sensitive.yaml) or in a policy's sensitivePaths; the
// comment at the top of sensitive.yaml says what each field means.
type SensitiveSpec struct {
	Scope   ScopeList `yaml:"scope"`
	Name    string    `yaml:"name"`
	Pattern string    `yaml:"pattern"`
	Mode    string    `yaml:"mode"`
	Reason  string    `yaml:"reason"`
	What    string    `yaml:"what"`
	Hidden  string    `yaml:"hidden"`
	Allow   string    `yaml:"allow"`
	Source  string    `yaml:"source"`
}

// ScopeList is an entry's scope: one scope or a list of them.
type ScopeList []string

// UnmarshalYAML reads a scope written as one string or as a list.
func (s *ScopeList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = ScopeList{n.Value}
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return fmt.Errorf("scope must be a string or a list of strings: %w", err)
	}
	*s = l
	return nil
}

// Scope is where an entry applies: one kind (Group "*": of any group; Kind
// "*": every kind of Group), or every pod spec, or every custom resource.
type Scope struct {
	Group, Kind string
	Pod         bool // relative to every pod spec; /metadata is the pod's metadata
	Custom      bool // every kind outside Kubernetes' own API groups
}

// String writes the scope as in the file.
func (s Scope) String() string {
	switch {
	case s.Pod:
		return "pod"
	case s.Custom:
		return "custom"
	case s.Group == "*":
		return s.Kind
	case s.Group == "":
		return "core/" + s.Kind
	}
	return s.Group + "/" + s.Kind
}

// SensitivePath is one compiled entry: of the built-in table, or of a
// policy's sensitivePaths.
type SensitivePath struct {
	Scopes  []Scope // none: every kind
	Name    string  // only the object of this name; "" for any
	Pattern Pointer // nil when Field is set
	Field   string  // a field name, sensitive wherever it appears in the scope
	Whole   bool    // the path as one item, not what lies beneath
	Reason  string  // the category users see
	What    string  // what the path controls
	Source  string  // where it is documented, or the policy entry
	Text    string  // as written in a policy's short form
	// hidden judges content at this entry when it exists only in live and a
	// rule would hide it as part of a larger item Git does not declare (an
	// injected sidecar): it returns what makes the content dangerous. Nil
	// means any content is dangerous.
	hidden liveJudge
	// allow names the one fix that may still touch the path, and when.
	allow *allowance
	// builtin says the entry is the built-in table's. A policy's entry only
	// adds protection: its hidden check never stops the judgement of what
	// lies beneath it.
	builtin bool
}

// allowance is a fix that cannot weaken what the entry protects.
type allowance struct {
	kind FixKind
	when func(f *Finding, target Object) bool
}

var (
	kindRe  = regexp.MustCompile(`^(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?)/)?([A-Z][A-Za-z0-9]*)$`)
	groupRe = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)/\*$`)
	fieldRe = regexp.MustCompile(`^[A-Za-z0-9_$@-]+$`)
)

// parseScope reads one scope: pod, custom, all, Kind, group/Kind,
// core/Kind or group/*.
func parseScope(s string) (Scope, bool, error) {
	switch s {
	case "pod":
		return Scope{Pod: true}, true, nil
	case "custom":
		return Scope{Custom: true}, true, nil
	case "all", "":
		return Scope{}, false, nil
	}
	if m := groupRe.FindStringSubmatch(s); m != nil {
		return Scope{Group: m[1], Kind: "*"}, true, nil
	}
	m := kindRe.FindStringSubmatch(s)
	if m == nil {
		return Scope{}, false, fmt.Errorf("%q is not a scope (write Kind, group/Kind, core/Kind, group/*, pod, custom or all)", s)
	}
	sc := Scope{Group: "*", Kind: m[3]}
	if strings.Contains(s, "/") {
		sc.Group = m[1]
		if sc.Group == "core" {
			sc.Group = ""
		}
	}
	return sc, true, nil
}

// Compile checks an entry and reads it. A built-in entry needs a reason,
// what it controls and a source (an https:// URL); a policy's may leave
// them out (the reason is then policy) and may not name an allowance, which
// only the built-in table grants.
func (s SensitiveSpec) Compile(isBuiltin bool) (SensitivePath, error) {
	sp := SensitivePath{Name: s.Name, Reason: s.Reason, What: s.What, Source: s.Source}
	for _, sc := range s.Scope {
		c, ok, err := parseScope(strings.TrimSpace(sc))
		if err != nil {
			return sp, err
		}
		if !ok {
			sp.Scopes = nil // all: every kind
			break
		}
		sp.Scopes = append(sp.Scopes, c)
	}
	if err := sp.readPattern(s.Pattern); err != nil {
		return sp, err
	}
	if sp.Field != "" && sp.inScope(func(c Scope) bool { return c.Pod }) {
		return sp, fmt.Errorf("pattern %q is a field name; an entry for every pod spec needs a path (/containers/*/image)", s.Pattern)
	}
	if sp.Name != "" && (len(sp.Scopes) == 0 || sp.inScope(func(c Scope) bool { return c.Pod || c.Custom || c.Kind == "*" })) {
		return sp, fmt.Errorf("name %q needs a scope of one kind (core/ConfigMap)", sp.Name)
	}
	switch s.Mode {
	case "", "subtree":
	case "whole":
		if sp.Field != "" {
			return sp, fmt.Errorf("mode whole needs a path, not the field name %q", sp.Field)
		}
		sp.Whole = true
	default:
		return sp, fmt.Errorf("mode %q: write subtree or whole", s.Mode)
	}
	switch {
	case sp.Reason == "" && !isBuiltin:
		sp.Reason = ReasonPolicy
	case !knownReason(sp.Reason):
		return sp, fmt.Errorf("reason %q: write one of %s", sp.Reason, strings.Join(reasons, ", "))
	}
	if s.Hidden != "" {
		h, err := hiddenCheck(s.Hidden)
		if err != nil {
			return sp, err
		}
		sp.hidden = h
	}
	if s.Allow != "" {
		if !isBuiltin {
			return sp, fmt.Errorf("allow %q: only the built-in table names a fix a sensitive path allows; a policy entry only adds protection", s.Allow)
		}
		a, ok := allowances[s.Allow]
		if !ok {
			return sp, fmt.Errorf("allow %q: write one of %s", s.Allow, strings.Join(sortedNames(allowances), ", "))
		}
		sp.allow = a
	}
	if isBuiltin {
		if sp.What == "" {
			return sp, errors.New("what is empty: say what the path controls")
		}
		if !strings.HasPrefix(sp.Source, "https://") {
			return sp, errors.New("source must be an https:// URL where the path is documented as security-relevant")
		}
	}
	return sp, nil
}

func (sp *SensitivePath) inScope(f func(Scope) bool) bool {
	for _, c := range sp.Scopes {
		if f(c) {
			return true
		}
	}
	return false
}

func knownReason(r string) bool {
	for _, k := range reasons {
		if k == r {
			return true
		}
	}
	return false
}

// readPattern reads a JSON pointer, a dotted path or a field name.
func (sp *SensitivePath) readPattern(rest string) error {
	rest = strings.TrimSpace(rest)
	switch {
	case rest == "":
		return errors.New("pattern is empty; write a JSON pointer (/spec/template/spec/dnsConfig), a dotted path or a field name")
	case strings.HasPrefix(rest, "/"):
		ptr, err := ParsePointer(rest)
		if err != nil {
			return err
		}
		sp.Pattern = ptr
	case strings.ContainsAny(rest, ".[]\\"):
		ptr, err := parseDotted(rest)
		if err != nil {
			return err
		}
		sp.Pattern = ptr
	default:
		if !fieldRe.MatchString(rest) {
			return fmt.Errorf("%q is neither a JSON pointer (starting with /), a dotted path nor a field name", rest)
		}
		sp.Field = rest
		return nil
	}
	for _, tok := range sp.Pattern {
		if tok == "" {
			return fmt.Errorf("%q has an empty step; it must name a field", rest)
		}
	}
	return nil
}

// ParseSensitivePath reads a policy sensitivePaths entry in its short form: a
// JSON pointer ("/spec/template/spec/dnsConfig"), a dotted path
// ("spec.template.spec.containers[].env", "data.policy\.json"), a field name
// ("dnsConfig"), each optionally scoped to a kind ("Deployment:/spec/paused",
// "apps/Deployment:spec.paused"). "*" (or "[]" in a dotted path) matches any
// list item or key. It is the entry {scope: Kind, pattern: path}.
func ParseSensitivePath(s string) (SensitivePath, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return SensitivePath{Text: s}, fmt.Errorf("is empty; write a JSON pointer (/spec/template/spec/dnsConfig), a dotted path or a field name")
	}
	var spec SensitiveSpec
	if i := strings.Index(rest, ":"); i >= 0 && !strings.HasPrefix(rest, "/") {
		kind := rest[:i]
		if kindRe.FindStringSubmatch(kind) == nil {
			return SensitivePath{Text: s}, fmt.Errorf("%q is not a kind (write Kind or group/Kind, such as Deployment or apps/Deployment, before the colon)", kind)
		}
		rest = rest[i+1:]
		if rest == "" {
			return SensitivePath{Text: s}, fmt.Errorf("names kind %s but no path after the colon", kind)
		}
		spec.Scope = ScopeList{kind}
	}
	spec.Pattern = rest
	sp, err := spec.Compile(false)
	sp.Text = s
	sp.What = "listed in the policy's sensitivePaths as " + s
	return sp, err
}

// PolicyText names a policy entry in the words the policy wrote it in.
func (sp SensitivePath) PolicyText() string {
	if sp.Text != "" {
		return sp.Text
	}
	var sc []string
	for _, c := range sp.Scopes {
		sc = append(sc, c.String())
	}
	p := sp.Field
	if p == "" {
		p = sp.Pattern.String()
	}
	if len(sc) == 0 {
		return p
	}
	return strings.Join(sc, ",") + ":" + p
}

// parseDotted reads "spec.template.spec.containers[].env": dots separate
// fields, "\." is a dot inside a key, "[]", "[*]" or "[N]" step into a list.
func parseDotted(s string) (Pointer, error) {
	var out Pointer
	var cur strings.Builder
	flush := func(pos int) error {
		if cur.Len() == 0 {
			return fmt.Errorf("%q has an empty step at character %d", s, pos+1)
		}
		out = append(out, cur.String())
		cur.Reset()
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
		case c == '.':
			if i > 0 && s[i-1] == ']' {
				continue
			}
			if err := flush(i); err != nil {
				return nil, err
			}
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("%q has an unclosed [", s)
			}
			if cur.Len() > 0 {
				if err := flush(i); err != nil {
					return nil, err
				}
			}
			idx := s[i+1 : i+j]
			if idx == "" {
				idx = "*"
			}
			out = append(out, idx)
			i += j
		default:
			cur.WriteByte(c)
		}
	}
	if s[len(s)-1] != ']' {
		if err := flush(len(s) - 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sensitiveTable is a compiled table: its entries in order, the field-name
// entries by field, and where each kind keeps its pod spec.
type sensitiveTable struct {
	paths      []SensitivePath
	fields     map[string][]*SensitivePath
	podSpecs   []podSpec
	knownKinds map[string]bool // kinds the table names, besides custom resources'

	mu    sync.Mutex
	cache map[[2]string][]resolved
}

// podSpec is where one kind keeps its pod spec.
type podSpec struct {
	scope Scope
	at    Pointer
}

// resolved is a table entry placed at an absolute pattern.
type resolved struct {
	pattern Pointer
	e       *SensitivePath
}

// tableFile is sensitive.yaml's shape.
type tableFile struct {
	PodSpecs []struct {
		Kind string `yaml:"kind"`
		At   string `yaml:"at"`
	} `yaml:"podSpecs"`
	Paths []SensitiveSpec `yaml:"paths"`
}

// parseTable reads a table of security-relevant paths; a malformed entry is
// an error naming it by its place and its pattern.
func parseTable(data []byte) (*sensitiveTable, error) {
	var f tableFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read the table of security-relevant paths: %w", err)
	}
	t := &sensitiveTable{fields: map[string][]*SensitivePath{}, knownKinds: map[string]bool{}, cache: map[[2]string][]resolved{}}
	for i, ps := range f.PodSpecs {
		sc, ok, err := parseScope(ps.Kind)
		if err == nil && (!ok || sc.Pod || sc.Kind == "*" || sc.Group == "*") {
			err = errors.New("kind must be group/Kind, core/Kind or custom")
		}
		if err != nil {
			return nil, fmt.Errorf("podSpecs entry %d (%s): %w", i+1, ps.Kind, err)
		}
		at, err := ParsePointer(ps.At)
		if err != nil || len(at) == 0 {
			return nil, fmt.Errorf("podSpecs entry %d (%s): at %q must be a JSON pointer to the pod spec", i+1, ps.Kind, ps.At)
		}
		t.podSpecs = append(t.podSpecs, podSpec{scope: sc, at: at})
		if !sc.Custom {
			t.knownKinds[sc.Kind] = true
		}
	}
	if len(f.Paths) == 0 {
		return nil, errors.New("read the table of security-relevant paths: it has no paths")
	}
	t.paths = make([]SensitivePath, 0, len(f.Paths))
	for i, s := range f.Paths {
		sp, err := s.Compile(true)
		if err != nil {
			return nil, fmt.Errorf("security-relevant path entry %d (%s %s): %w", i+1, strings.Join(s.Scope, ","), s.Pattern, err)
		}
		sp.builtin = true
		t.paths = append(t.paths, sp)
	}
	for i := range t.paths {
		e := &t.paths[i]
		if e.Field != "" {
			t.fields[e.Field] = append(t.fields[e.Field], e)
			continue
		}
		if e.Name != "" {
			continue
		}
		for _, c := range e.Scopes {
			if !c.Pod && !c.Custom && c.Kind != "*" {
				t.knownKinds[c.Kind] = true
			}
		}
	}
	return t, nil
}

func mustTable(data []byte) *sensitiveTable {
	t, err := parseTable(data)
	if err != nil {
		panic(err)
	}
	return t
}

// liveJudge decides whether content found only in live is dangerous to hide,
// and says what makes it so. pod is the live pod spec the content lies in
// (nil outside one): a mount is judged by the volume it mounts.
type liveJudge func(v any, pod map[string]any) (string, bool)

// alone is a judge that needs nothing but the content.
func alone(f func(any) (string, bool)) liveJudge {
	return func(v any, _ map[string]any) (string, bool) { return f(v) }
}

// hiddenCheck returns the judge an entry's hidden names.
func hiddenCheck(name string) (liveJudge, error) {
	if v, ok := strings.CutPrefix(name, "equals:"); ok && v != "" {
		return alone(equals(v)), nil
	}
	if v, ok := strings.CutPrefix(name, "names:"); ok && fieldRe.MatchString(v) {
		return alone(field(v)), nil
	}
	if h, ok := hiddenChecks[name]; ok {
		return h, nil
	}
	return nil, fmt.Errorf("hidden %q: write present, never, true, false, equals:VALUE, names:FIELD or one of %s", name, strings.Join(sortedNames(hiddenChecks), ", "))
}

func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// hiddenChecks are the judges of content found only in live that cannot be
// data.
var hiddenChecks = map[string]liveJudge{
	"never": alone(func(any) (string, bool) { return "", false }),
	// a boolean switched on, or off
	"true":  alone(func(v any) (string, bool) { return fmt.Sprint(v), v == true }),
	"false": alone(func(v any) (string, bool) { return fmt.Sprint(v), v == false }),
	// any value at all
	"present":              alone(present),
	"reads-secret-env":     alone(readsSecretEnv),
	"reads-secret-envfrom": alone(readsSecretEnvFrom),
	"risky-mounts":         riskyMounts,
	"risky-volume":         alone(riskyVolume),
	"escalates-container":  alone(escalatesContainer),
	"escalates-pod":        alone(escalatesPod),
}

// present: any value at all.
func present(v any) (string, bool) { return Brief(v, 60), !IsEmpty(v) }

// allowances are the fixes a sensitive path may still take.
var allowances = map[string]*allowance{
	// Secret data a chart generates may be pinned to an existing Secret.
	"pin-helm-value": {kind: FixPinHelmValue, when: func(*Finding, Object) bool { return true }},
	// Git declaring caBundle "" asserts no CA of its own (an injector such
	// as cert-manager's cainjector fills it); removing the empty value stops
	// every sync from blanking the bundle and changes nothing Git asserts. A
	// caBundle Git declares with a value is the trust anchor and is never
	// removed.
	"remove-empty-ca-bundle": {kind: FixRemoveField, when: func(f *Finding, _ Object) bool {
		return f.InGit && IsEmpty(f.Git)
	}},
	// The rules of a ClusterRole with an aggregationRule are computed by the
	// aggregation controller from the roles it selects; Git's own rules are
	// overwritten anyway, so removing them (the aggregationRule stays in
	// Git) changes no permission.
	"remove-aggregated-rules": {kind: FixRemoveField, when: func(_ *Finding, target Object) bool {
		return !IsEmpty(Lookup(target, "aggregationRule"))
	}},
}

// field judges a mount as dangerous whenever it is there, naming what it mounts.
func field(name string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		if s := Str(v, name); s != "" {
			return name + " " + s, true
		}
		return Brief(v, 60), v != nil
	}
}

func equals(want string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		s, _ := v.(string)
		return s, strings.EqualFold(s, want)
	}
}

// readsSecretEnv returns the Secret an injected container's environment
// reads (valueFrom.secretKeyRef): a sidecar that reads a Secret is never
// hidden.
func readsSecretEnv(v any) (string, bool) {
	for _, e := range List(v) {
		if ref := Map(e, "valueFrom", "secretKeyRef"); ref != nil {
			return fmt.Sprintf("env %s reads Secret %s key %s", Str(e, "name"), Str(ref, "name"), Str(ref, "key")), true
		}
	}
	return "", false
}

// readsSecretEnvFrom returns the Secret an injected container's environment
// is filled from.
func readsSecretEnvFrom(v any) (string, bool) {
	for _, e := range List(v) {
		if ref := Map(e, "secretRef"); ref != nil {
			return "envFrom reads Secret " + Str(ref, "name"), true
		}
	}
	return "", false
}

// riskyMounts returns a mount of an injected container that reaches what
// the pod must keep to itself, judged by what the mounted volume is, not by
// where it is mounted: a volume riskyVolume refuses (a Secret, a projected
// service-account token, a host path, a network or claimed volume), a
// volume the pod spec does not declare (nothing says what it is), or a
// mount whose propagation is Bidirectional (mounts it makes reach the
// node). The mountPropagation entry beneath cannot judge that itself: the
// volumeMounts subtree is judged as one.
func riskyMounts(v any, pod map[string]any) (string, bool) {
	for _, m := range List(v) {
		name, at := Str(m, "name"), Str(m, "mountPath")
		if strings.EqualFold(Str(m, "mountPropagation"), "Bidirectional") {
			return fmt.Sprintf("it mounts %s at %s with Bidirectional propagation", name, at), true
		}
		var vol any
		for _, cand := range List(pod, "volumes") {
			if Str(cand, "name") == name {
				vol = cand
				break
			}
		}
		if vol == nil {
			return fmt.Sprintf("it mounts %s at %s, a volume the pod spec does not declare, so what it is cannot be judged", name, at), true
		}
		if what, bad := riskyVolume(vol); bad {
			return fmt.Sprintf("it mounts %s at %s, %s", name, at, what), true
		}
	}
	return "", false
}

// riskyVolume says what a volume is when it is more than scratch space or
// the pod's own description: only an emptyDir, a ConfigMap, the downward
// API, and a projected volume of those (and cluster trust bundles, which
// hold public certificates) are harmless to hide. A Secret, a projected
// service-account token, a host path, a network volume (NFS, iSCSI, Ceph,
// …), a claim, a CSI or an image volume, and any kind not named here reach
// data or credentials the pod must keep to itself.
func riskyVolume(v any) (string, bool) {
	m := Map(v)
	if m == nil {
		return "", false
	}
	for _, k := range SortedKeys(m) {
		switch k {
		case "name", "emptyDir", "configMap", "downwardAPI":
			continue
		case "projected":
			for _, src := range List(m, "projected", "sources") {
				for _, sk := range SortedKeys(Map(src)) {
					switch sk {
					case "configMap", "downwardAPI", "clusterTrustBundle":
					case "serviceAccountToken":
						return "a projected service-account token (audience " + orUnset(Str(src, "serviceAccountToken", "audience")) + ")", true
					case "secret":
						return "a projected Secret " + Str(src, "secret", "name"), true
					default:
						return "a projected " + sk + " source", true
					}
				}
			}
			continue
		case "secret":
			return "a Secret volume of " + Str(m, "secret", "secretName"), true
		case "hostPath":
			return "a hostPath volume of " + Str(m, "hostPath", "path"), true
		case "nfs":
			return "an NFS volume " + Str(m, "nfs", "server") + ":" + Str(m, "nfs", "path"), true
		case "persistentVolumeClaim":
			return "the volume claim " + Str(m, "persistentVolumeClaim", "claimName"), true
		}
		return "a " + k + " volume", true
	}
	return "", false
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

// escalatesContainer returns what in a container securityContext grants more
// than a default container has.
func escalatesContainer(v any) (string, bool) {
	m, _ := v.(map[string]any)
	switch {
	case m["privileged"] == true:
		return "privileged: true", true
	case m["allowPrivilegeEscalation"] == true:
		return "allowPrivilegeEscalation: true", true
	case len(List(m, "capabilities", "add")) > 0:
		return "capabilities.add: " + joinList(List(m, "capabilities", "add")), true
	case Str(m, "procMount") == "Unmasked":
		return "procMount: Unmasked", true
	case Lookup(m, "windowsOptions", "hostProcess") == true:
		return "windowsOptions.hostProcess: true", true
	}
	return escalatesPod(v)
}

// escalatesPod returns what in a pod-level securityContext (the fields a
// container shares with it) weakens the pod's isolation.
func escalatesPod(v any) (string, bool) {
	m, _ := v.(map[string]any)
	if n, ok := Number(m["runAsUser"]); ok && n == 0 {
		return "runAsUser: 0 (root)", true
	}
	if n, ok := Number(m["runAsGroup"]); ok && n == 0 {
		return "runAsGroup: 0 (root)", true
	}
	switch {
	case m["runAsNonRoot"] == false:
		return "runAsNonRoot: false", true
	case strings.EqualFold(Str(m, "seccompProfile", "type"), "Unconfined"):
		return "seccompProfile: Unconfined", true
	case strings.EqualFold(Str(m, "appArmorProfile", "type"), "Unconfined"):
		return "appArmorProfile: Unconfined", true
	case Str(m, "seLinuxOptions", "type") == "spc_t":
		return "seLinuxOptions.type: spc_t", true
	case len(List(m, "sysctls")) > 0:
		return "sysctls: " + Brief(List(m, "sysctls")[0], 60), true
	}
	return "", false
}

func joinList(l []any) string {
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}
