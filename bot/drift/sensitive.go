package drift

import (
	"fmt"
	"strings"
)

// This file is driftfix's model of security-relevant paths: what no fix may
// change, delete or hide without a person. The paths are data, the table in
// sensitive.yaml (read by sensitive_table.go); every stage asks Sensitivity,
// and Refuse is the one decision whether a fix may go ahead on a finding.

// Sensitivity is the safety model: the built-in table plus a policy's extra
// sensitivePaths, and the writers the policy names (who may keep which
// field). The zero value holds the built-in table and no writers.
type Sensitivity struct {
	Extra []SensitivePath
	// Writers are the policy's writers: its own controllers and people, and
	// the paths each controller legitimately owns. They come before the
	// built-in catalog.
	Writers []Writer
}

// Match is one security-relevant path and why it matters.
type Match struct {
	Path   Pointer // the sensitive path, as it appears in the object
	Reason string  // the category: privilege, image, RBAC, …
	What   string  // what the path controls
	entry  *SensitivePath
}

// String renders "/spec/…/image (image: the image a container runs)".
func (m Match) String() string {
	return fmt.Sprintf("%s (%s: %s)", m.Path, m.Reason, m.What)
}

// entriesFor returns the built-in entries that apply to a kind; ref.Group
// "*" matches an entry of any group with that kind (for callers that only
// know the kind).
func (t *sensitiveTable) entriesFor(ref Ref) []resolved {
	gk := [2]string{ref.Group, ref.Kind}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.cache[gk]; ok {
		return r
	}
	var out []resolved
	for i := range t.paths {
		e := &t.paths[i]
		if e.Field != "" {
			continue
		}
		if pat, ok := t.place(e, ref); ok {
			out = append(out, resolved{pattern: pat, e: e})
		}
	}
	if len(t.cache) < 4096 {
		t.cache[gk] = out
	}
	return out
}

// place returns the absolute pattern of entry e in a resource of ref's
// kind, by its first scope that applies there.
func (t *sensitiveTable) place(e *SensitivePath, ref Ref) (Pointer, bool) {
	if len(e.Scopes) == 0 {
		return e.Pattern, true
	}
	for _, sc := range e.Scopes {
		switch {
		case sc.Pod:
			if base, ok := t.podSpecOf(ref); ok {
				pat := e.Pattern
				if len(pat) > 0 && pat[0] == "metadata" {
					base = append(append(Pointer{}, base[:len(base)-1]...), "metadata")
					pat = pat[1:]
				}
				return append(append(Pointer{}, base...), pat...), true
			}
		case sc.Custom:
			if isCustom(ref) {
				return e.Pattern, true
			}
		case sc.appliesTo(ref):
			return e.Pattern, true
		}
	}
	return nil, false
}

// appliesTo reports whether a kind scope names ref's kind: the same kind in
// the same group, or in any group when either says "*"; or any kind of the
// scope's group.
func (sc Scope) appliesTo(ref Ref) bool {
	if sc.Kind == "*" {
		return ref.Group == sc.Group
	}
	return sc.Kind == ref.Kind && (sc.Group == "*" || ref.Group == "*" || sc.Group == ref.Group)
}

// podSpecOf returns where a resource of ref's kind keeps its pod spec.
func (t *sensitiveTable) podSpecOf(ref Ref) (Pointer, bool) {
	custom := !builtinGroups[ref.Group]
	anyGroup := ref.Group == "*"
	known := t.knownKinds[ref.Kind]
	for _, ps := range t.podSpecs {
		// A custom resource named like a built-in kind (Kruise's
		// StatefulSet, Knative's Service) is judged as a custom
		// resource, never by the built-in kind's name.
		if ps.scope.Custom {
			if custom && (!anyGroup || !known) {
				return ps.at, true
			}
			continue
		}
		if ps.scope.Kind == ref.Kind && (ps.scope.Group == ref.Group || anyGroup) {
			return ps.at, true
		}
	}
	return nil, false
}

// isCustom reports whether ref is a custom resource, judged by field names.
func isCustom(ref Ref) bool {
	if builtinGroups[ref.Group] {
		return false
	}
	if ref.Group != "*" {
		return true
	}
	return !builtin.knownKinds[ref.Kind] && !builtinKinds[ref.Kind]
}

// builtinGroups are the API groups of Kubernetes itself; any other group is a
// custom resource, judged by field names (the table's custom scope).
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "networking.k8s.io": true,
	"rbac.authorization.k8s.io": true, "admissionregistration.k8s.io": true, "apiextensions.k8s.io": true,
	"apiregistration.k8s.io": true, "storage.k8s.io": true, "scheduling.k8s.io": true, "coordination.k8s.io": true,
	"discovery.k8s.io": true, "node.k8s.io": true, "certificates.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
	"resource.k8s.io": true, "events.k8s.io": true,
}

// builtinKinds are common built-in kinds the table has no entry for, so that
// a check by kind alone does not judge them as custom resources.
var builtinKinds = map[string]bool{
	"ConfigMap": true, "Endpoints": true, "EndpointSlice": true, "PersistentVolumeClaim": true, "PersistentVolume": true,
	"Ingress": true, "IngressClass": true, "HorizontalPodAutoscaler": true, "PodDisruptionBudget": true, "LimitRange": true,
	"ResourceQuota": true, "StorageClass": true, "Lease": true, "PriorityClass": true, "Event": true,
}

// tokenMatches matches one pointer token against a pattern token: "*" (any),
// "prefix*", or alternatives separated by "|".
func tokenMatches(pat, tok string) bool {
	for more := true; more; {
		var alt string
		alt, pat, more = strings.Cut(pat, "|")
		if strings.HasSuffix(alt, "*") && strings.HasPrefix(tok, alt[:len(alt)-1]) || alt == tok {
			return true
		}
	}
	return false
}

// prefixMatches reports whether pattern matches the first len(pattern) tokens of path.
func prefixMatches(pattern, path Pointer) bool {
	if len(path) < len(pattern) {
		return false
	}
	for i, t := range pattern {
		if !tokenMatches(t, path[i]) {
			return false
		}
	}
	return true
}

// Within returns the entry that path p is: equal to a whole-item entry, or
// at or beneath a subtree entry.
func (s Sensitivity) Within(ref Ref, p Pointer) (Match, bool) {
	for _, r := range builtin.entriesFor(ref) {
		if m, ok := r.match(ref, p); ok {
			return m, true
		}
	}
	// Field names: the first step of the path that one names decides.
	for i, tok := range p {
		for _, e := range builtin.fields[tok] {
			if e.fieldIn(ref, p) {
				return Match{Path: p[:i+1], Reason: e.Reason, What: e.What, entry: e}, true
			}
		}
	}
	for i := range s.Extra {
		if m, ok := s.Extra[i].match(ref, p); ok {
			return m, true
		}
	}
	return Match{}, false
}

// match judges p against an entry placed at an absolute pattern.
func (r resolved) match(ref Ref, p Pointer) (Match, bool) {
	if r.e.Name != "" && r.e.Name != ref.Name {
		return Match{}, false
	}
	if !prefixMatches(r.pattern, p) || (r.e.Whole && len(p) != len(r.pattern)) {
		return Match{}, false
	}
	return Match{Path: p[:len(r.pattern)], Reason: r.e.Reason, What: r.e.What, entry: r.e}, true
}

// fieldIn reports whether a field-name entry applies to path p of ref: a
// custom-resource entry only outside metadata and status.
func (e *SensitivePath) fieldIn(ref Ref, p Pointer) bool {
	if e.Name != "" && e.Name != ref.Name {
		return false
	}
	if len(e.Scopes) == 0 {
		return true
	}
	for _, sc := range e.Scopes {
		switch {
		case sc.Custom:
			if isCustom(ref) && len(p) > 0 && p[0] != "metadata" && p[0] != "status" {
				return true
			}
		case !sc.Pod && sc.appliesTo(ref):
			return true
		}
	}
	return false
}

// match judges p against one entry, placed for ref's kind: a policy's
// entries, which are few and not cached.
func (e *SensitivePath) match(ref Ref, p Pointer) (Match, bool) {
	if e.Field != "" {
		if !e.fieldIn(ref, p) {
			return Match{}, false
		}
		for j, tok := range p {
			if tok == e.Field {
				return Match{Path: p[:j+1], Reason: e.Reason, What: e.What, entry: e}, true
			}
		}
		return Match{}, false
	}
	pat, ok := builtin.place(e, ref)
	if !ok {
		return Match{}, false
	}
	return resolved{pattern: pat, e: e}.match(ref, p)
}

// Beneath walks the value v found at p and calls visit for every sensitive path
// at p or beneath it that v holds, with its value, until visit returns false.
func (s Sensitivity) Beneath(ref Ref, p Pointer, v any, visit func(Match, any) bool) {
	s.beneath(ref, append(Pointer{}, p...), v, visit, 0)
}

func (s Sensitivity) beneath(ref Ref, at Pointer, v any, visit func(Match, any) bool, depth int) bool {
	if depth > 64 {
		return true
	}
	if m, ok := s.Within(ref, at); ok && len(m.Path) == len(at) {
		if !visit(m, v) {
			return false
		}
		if m.entry == nil || (!m.entry.Whole && m.entry.builtin) {
			return true // a built-in subtree judged as one; a policy's entry only adds
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range SortedKeys(x) {
			if !s.beneath(ref, at.Child(k), x[k], visit, depth+1) {
				return false
			}
		}
	case []any:
		for i, e := range x {
			if !s.beneath(ref, at.Index(i), e, visit, depth+1) {
				return false
			}
		}
	}
	return true
}

// above returns an entry that lies beneath p, for a path with no content to judge.
func (s Sensitivity) above(ref Ref, p Pointer) (Match, bool) {
	for _, r := range builtin.entriesFor(ref) {
		if r.e.Name != "" && r.e.Name != ref.Name {
			continue
		}
		if len(r.pattern) > len(p) && prefixMatches(r.pattern[:len(p)], p) {
			return Match{Path: r.pattern, Reason: r.e.Reason, What: r.e.What, entry: r.e}, true
		}
	}
	return Match{}, false
}

// first returns the first sensitive path at or beneath p in v.
func (s Sensitivity) first(ref Ref, p Pointer, v any) (Match, bool) {
	var out Match
	found := false
	s.Beneath(ref, p, v, func(m Match, _ any) bool { out, found = m, true; return false })
	return out, found
}

// Check reports whether p is a sensitive path, or covers one that git (the
// desired object) declares at or beneath p, judging by kind alone. It returns
// the field and why it matters.
func (s Sensitivity) Check(kind string, p Pointer, git Object) (field Pointer, why string, ok bool) {
	return s.CheckRef(Ref{Group: "*", Kind: kind}, p, git)
}

// CheckRef is Check for a resource whose group is known: a custom resource
// named like a built-in kind (Knative's Service, Kruise's StatefulSet) is
// judged as a custom resource, by its field names, not by the built-in
// kind's entries; an object sensitive by its name (Argo CD's own settings)
// is judged by it.
func (s Sensitivity) CheckRef(ref Ref, p Pointer, git Object) (field Pointer, why string, ok bool) {
	if m, ok := s.Within(ref, p); ok && (m.entry == nil || !m.entry.Whole) {
		return m.Path, m.Reason, true
	}
	if git == nil {
		return nil, "", false
	}
	sub, found := p.Get(git)
	if !found {
		return nil, "", false
	}
	if m, ok := s.first(ref, p, sub); ok {
		return m.Path, m.Reason, true
	}
	return nil, "", false
}

// Hides judges what hiding p of a resource would hide: a sensitive path p is
// or lies in; content Git declares there that holds a sensitive path (a
// container Git declares carries its image); or live content there that
// grants a privilege (privileged: true, a hostPath, added capabilities, …).
// Content only in live that grants nothing, such as an injected sidecar's
// image, may be hidden: the webhook that injects it decides it.
func (s Sensitivity) Hides(ref Ref, p, gp Pointer, target, live Object) (string, bool) {
	if len(p) == 0 {
		return "the whole resource", true
	}
	if m, ok := s.Within(ref, p); ok && (m.entry == nil || !m.entry.Whole) {
		return m.String(), true
	}
	if len(gp) == 0 {
		gp = p
	}
	gitVal, inGit, named := sameNamedItem(target, p, live)
	if !named {
		gitVal, inGit = gp.Get(target)
	}
	if inGit {
		if m, ok := s.first(ref, gp, gitVal); ok {
			return fmt.Sprintf("%s, which Git declares", m), true
		}
	}
	liveVal, inLive := p.Get(live)
	if !inLive {
		if !inGit {
			// Nothing there to judge: a rule on p would hide whatever comes later.
			if m, ok := s.above(ref, p); ok {
				return fmt.Sprintf("%s beneath it, whatever it holds later", m), true
			}
		}
		return "", false
	}
	var pod map[string]any // the live pod spec, which an injected mount's volume is read from
	if at, ok := builtin.podSpecOf(ref); ok {
		if v, ok := at.Get(live); ok {
			pod = Map(v)
		}
	}
	var why string
	s.Beneath(ref, p, liveVal, func(m Match, v any) bool {
		judge := alone(present)
		if m.entry != nil && m.entry.hidden != nil {
			judge = m.entry.hidden
		}
		if what, bad := judge(v, pod); bad {
			why = fmt.Sprintf("%s: %s in live", m, what)
			return false
		}
		return true
	})
	return why, why != ""
}

// sameNamedItem finds, for a list item p of live with a name, the item of the
// same name in target: an ignore rule that selects by name hides both. named
// says whether p is such an item.
func sameNamedItem(target Object, p Pointer, live Object) (v any, inGit, named bool) {
	if len(p) < 2 {
		return nil, false, false
	}
	item, ok := p.Get(live)
	if !ok {
		return nil, false, false
	}
	name, _ := Map(item)["name"].(string)
	if name == "" {
		return nil, false, false
	}
	list, _ := p[:len(p)-1].Get(target)
	l, _ := list.([]any)
	for _, e := range l {
		if n, _ := Map(e)["name"].(string); n == name {
			return e, true, true
		}
	}
	return nil, false, true
}

// Refuse is the one decision whether a fix of kind k may go ahead on finding
// f of a resource with the given desired (target) and live objects. It refuses
// when the fix would change or delete a security-relevant path in Git
// (remove-field, set-value, pin-helm-value) or hide one (ignore-difference),
// and returns the reason to show: what and why. A fix that hands a field to
// another writer also needs a rule that says the writer owns it
// (handOverRefused).
func (s Sensitivity) Refuse(k FixKind, f *Finding, target, live Object) (string, bool) {
	if why, bad := s.refuseSensitive(k, f, target, live); bad {
		return why, true
	}
	return handOverRefused(k, f)
}

// refuseSensitive refuses a fix that changes, deletes or hides a
// security-relevant path.
func (s Sensitivity) refuseSensitive(k FixKind, f *Finding, target, live Object) (string, bool) {
	gp := f.GitPath
	if len(gp) == 0 {
		gp = f.Path
	}
	switch k {
	case FixIgnoreDifference:
		what, bad := s.Hides(f.Resource, f.Path, f.GitPath, target, live)
		if !bad {
			return "", false
		}
		return fmt.Sprintf("ignoring %s would hide %s: driftfix never ignores a security-relevant path; a person must review this change", f.Path, what), true
	case FixRemoveField, FixSetValue, FixPinHelmValue, FixAdoptLive:
	default:
		return "", false
	}
	verb := map[FixKind]string{FixRemoveField: "removes it from Git", FixSetValue: "rewrites it in Git", FixPinHelmValue: "changes where the chart takes it from",
		FixAdoptLive: "writes a change made by hand into Git"}[k]
	if dropsEmpty(k, f) {
		return "", false
	}
	if m, ok := s.Within(f.Resource, gp); ok {
		if a := allowanceOf(m); a != nil && a.kind == k && a.when(f, target) {
			return "", false
		}
		return fmt.Sprintf("%s is security-relevant (%s: %s): driftfix never %s by itself; a person must review this change", f.Path, m.Reason, m.What, verb), true
	}
	gitVal, inGit := f.Git, f.InGit
	if !inGit {
		gitVal, inGit = gp.Get(target)
	}
	if inGit {
		if m, ok := s.first(f.Resource, gp, gitVal); ok {
			return fmt.Sprintf("%s holds %s, which Git declares: driftfix never %s by itself; a person must review this change", f.Path, m, verb), true
		}
	}
	if (k == FixSetValue || k == FixAdoptLive) && f.InLive {
		if m, ok := s.first(f.Resource, f.Path, f.Live); ok {
			return fmt.Sprintf("writing the live value of %s into Git would write %s: driftfix never does that by itself; a person must review this change", f.Path, m), true
		}
	}
	return "", false
}

func allowanceOf(m Match) *allowance {
	if m.entry == nil {
		return nil
	}
	return m.entry.allow
}

// Guard applies Refuse to a finding's suggested fix: a refused fix becomes
// none with the reason, keeping the cause and the evidence.
func (s Sensitivity) Guard(f *Finding, target, live Object) {
	if why, refused := s.Refuse(f.Remediation.Kind, f, target, live); refused {
		f.Remediation = Remediation{Kind: FixNone, Reason: why}
	}
}

// handOverRefused is the allow-list of hand-overs: a fix that lets another
// writer keep a field (remove-field takes it out of Git, ignore-difference
// stops Argo CD comparing it) goes ahead on a finding only where the
// classifier that named the cause recorded a grant with its proof (the
// remediation's Grant: an autoscaler of the application's desired state, a
// server-side dry run reproducing a webhook's write, a catalog or policy
// writer that owns the path, an allocation where Git is empty), and, for
// the kinds of grant sensitive_handovers.yaml covers, an entry there allows
// that kind of writer the path. A finding about the stored form of Git's
// own value (normalized, without a grant) hands nothing over, and a path
// judged for a plan's side effects (no cause) is judged by the sensitive
// paths alone.
func handOverRefused(k FixKind, f *Finding) (string, bool) {
	if k != FixRemoveField && k != FixIgnoreDifference {
		return "", false
	}
	switch {
	case f.Cause == "", f.Cause == CauseNormalized && f.Remediation.Grant == "":
		return "", false // no cause, or the stored form of Git's own value: nothing handed over
	}
	if dropsEmpty(k, f) {
		return "", false
	}
	verb := map[FixKind]string{FixRemoveField: "removing it from Git", FixIgnoreDifference: "ignoring it"}[k]
	if f.Remediation.Grant != "" {
		gk, listed := GrantKindOf(f.Cause)
		if !listed {
			return "", false // a controller's grant: its catalog or policy entry names the paths it owns
		}
		if _, ok := HandOverAt(gk, f.Resource, f.Path); ok {
			return "", false
		}
		return fmt.Sprintf("%s would hand %s to another writer (%s grant), and no entry of the allow-list of hand-overs lets a %s grant keep that path: a person must decide", verb, f.Path, gk, gk), true
	}
	return fmt.Sprintf("%s would hand %s to another writer, and no rule says a writer legitimately owns it (the evidence names a writer, but only a documented owner, an autoscaler, an admitting webhook or the policy's writers may keep a field): a person must decide", verb, f.Path), true
}

// dropsEmpty reports a remove-field of an empty value the API server drops
// (live has nothing there): it asserts nothing, so removing it changes
// nothing in the cluster and hands nothing over.
func dropsEmpty(k FixKind, f *Finding) bool {
	return k == FixRemoveField && f.InGit && !f.InLive && IsEmpty(f.Git)
}
