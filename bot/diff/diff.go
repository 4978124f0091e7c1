// Package diff finds the paths where the desired and the live state of an
// application's resources really differ, with Argo CD's semantics, and says who
// owns each path in managedFields. It does no I/O.
package diff

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

const (
	maxWalkDepth      = 100
	annLastApplied    = "kubectl.kubernetes.io/last-applied-configuration"
	annTrackingID     = "argocd.argoproj.io/tracking-id"
	argoSSAManager    = "argocd-controller"
	syncOptServerSide = "ServerSideApply=true"
)

// Compare diffs every resource of the snapshot. The result holds every
// difference, including those an ignore rule hides (marked HiddenBy), and every
// ignore rule that applies to the application with what it covers.
func Compare(s *drift.Snapshot) (*drift.Comparison, drift.Settings, error) {
	settings, cmRules, err := ReadSettings(s.Cluster)
	if err != nil {
		return nil, settings, err
	}
	inferTracking(&settings, s)
	appRules, err := applicationRules(s.Application)
	if err != nil {
		return nil, settings, err
	}
	// Argo CD appends the rules resources carry in their own annotation to
	// the Application's and argocd-cm's.
	cmp := &drift.Comparison{Rules: append(append(appRules, cmRules...), annotationRules(s)...)}
	cmp.Failed = unparsedJQ(cmp.Rules)
	appSSA := serverSideDiff(s.Application)
	outOfSync := drift.ArgoOutOfSync(s.Application)
	for i := range s.Resources {
		if err := compareResource(cmp, s, i, appSSA, settings, outOfSync[s.Resources[i].Ref()]); err != nil {
			return nil, settings, err
		}
	}
	markSchemaScalars(cmp, s)
	for ri := range cmp.Rules {
		for di := range cmp.Diffs {
			for _, h := range cmp.Diffs[di].HiddenBy {
				if h == ri {
					cmp.Rules[ri].Hidden = append(cmp.Rules[ri].Hidden, di)
				}
			}
		}
	}
	return cmp, settings, nil
}

func hasSyncOption(opts []any, want string) bool {
	for _, o := range opts {
		if s, ok := o.(string); ok && strings.EqualFold(strings.TrimSpace(s), want) {
			return true
		}
	}
	return false
}

// compareResource diffs one resource. When Argo CD reports it OutOfSync and
// the emulated diff shows nothing Argo CD would see, it compares again without
// semantic equality; when that shows nothing either, it adds one Unexplained
// difference that says what was compared. Argo CD's verdict is the ground
// truth that something differs.
func compareResource(cmp *drift.Comparison, s *drift.Snapshot, idx int, appSSA bool, settings drift.Settings, argoOutOfSync bool) error {
	r := &s.Resources[idx]
	ref := r.Ref()
	if r.Target == nil || r.Live == nil {
		cmp.Diffs = append(cmp.Diffs, wholeObjectDiff(r, ref, idx, settings))
		return nil
	}
	b := builtins()
	w := &walker{
		ref:       ref,
		idx:       idx,
		b:         b,
		rootType:  b.typeOf(drift.Str(r.Target, "apiVersion"), drift.Str(r.Target, "kind")),
		ssa:       appSSA,
		rawTarget: r.Target,
		rawLive:   r.Live,
		dryRun:    r.DryRun,
	}
	desired, live, orig := w.states(cmp, s, r, settings)
	w.hideByRules(cmp, r)

	root := fieldInfo{typ: w.rootType, known: w.rootType != nil}
	// The walks below run one after another: they share the paths' room.
	pb, gpb := rootPath(), rootPath()
	w.walk(pb, gpb, desired, live, orig, orig != nil, root, 0)
	if w.rootType != nil && !w.symmetric && (w.encodingMatters() || hasEmptyContainer(orig)) && w.decodesStrictly() {
		// An empty map or list in last-applied matters too: the type's
		// encoding drops Git's (omitempty) while last-applied, read as
		// written, keeps it, so the three-way patch deletes the whole live
		// value and what other writers put there is drift (argo-cd#3150).
		// Argo CD compares a built-in object in its type's encoding when both
		// sides decode strictly: compare again the way it does.
		if d2, ok := w.b.remarshal(w.rootType, desired, true); ok {
			if l2, ok := w.b.remarshal(w.rootType, live, true); ok {
				w.diffs, w.remarshaled = nil, true
				desired, live = d2, l2
				w.walk(pb, gpb, desired, live, orig, orig != nil, root, 0)
			}
		}
	}
	if argoOutOfSync && !anyVisible(w.diffs) {
		w.explainOutOfSync(s, pb, gpb, desired, live, orig, root)
	}
	w.storedForm()
	w.addOwners(cmp, r)
	cmp.Diffs = append(cmp.Diffs, w.diffs...)
	return nil
}

// wholeObjectDiff is the one difference of a resource only one side has:
// live alone (with its owners and those of its tracking label or
// annotation), or Git alone.
func wholeObjectDiff(r *drift.Resource, ref drift.Ref, idx int, settings drift.Settings) drift.Difference {
	if r.Target != nil {
		return drift.Difference{Resource: ref, Index: idx, Path: drift.Pointer{}, Git: r.Target, InGit: true}
	}
	entries, _ := parseManagedFields(r.Live)
	var tracking []drift.Owner
	for _, p := range []drift.Pointer{{"metadata", "labels", settings.InstanceLabelKey}, {"metadata", "annotations", annTrackingID}} {
		if _, ok := p.Get(r.Live); ok {
			tracking = append(tracking, ownersOf(entries, r.Live, p)...)
		}
	}
	return drift.Difference{Resource: ref, Index: idx, Path: drift.Pointer{}, Live: r.Live, InLive: true,
		Owners: ownersOf(entries, r.Live, drift.Pointer{}), TrackingOwners: tracking}
}

// states gives the desired and live states the walk compares, and the
// last-applied state for a three-way diff (nil for two-way), as Argo CD
// builds them: its own predicted and normalized states or the dry run's
// answer where they apply, else Git's manifest and the live object,
// re-encoded and normalized.
func (w *walker) states(cmp *drift.Comparison, s *drift.Snapshot, r *drift.Resource, settings drift.Settings) (desired, live map[string]any, orig any) {
	ref := w.ref
	// Argo CD's own predicted and normalized states win, except where an
	// ignore rule applies: Argo CD has already removed what the rule hides
	// from them, and what a rule hides must still be computed.
	ruled := false
	for ri := range cmp.Rules {
		ruled = ruled || ruleMatches(&cmp.Rules[ri], ref)
	}
	desired, live = shallowCopy(r.Target), shallowCopy(r.Live)
	if r.PredictedLive != nil && r.NormalizedLive != nil && !ruled {
		desired, live = shallowCopy(r.PredictedLive), shallowCopy(r.NormalizedLive)
		w.symmetric = true
	}
	if w.ssa && r.DryRun != nil && !w.symmetric {
		// Server-Side Diff with the API server's dry-run answer: Argo CD
		// compares live with that answer (what argocd-controller owns in it,
		// unless mutation webhooks are included), not with Git's manifest.
		p, err := predictedFromDryRun(r.DryRun, r.Live, includeMutationWebhook(s.Application))
		switch {
		case err != nil && cmp.Failed == nil:
			cmp.Failed = err
		case err == nil:
			desired, w.symmetric = shallowCopy(p), true
		}
	}
	if !w.ssa && !w.symmetric {
		// Argo CD's client-side diff drops a null or empty
		// metadata.annotations from Git's manifest too, with or without
		// last-applied (a two-way diff is its three-way with Git's manifest
		// for last-applied).
		dropEmptyAnnotations(desired)
		if la, ok := drift.Map(r.Live, "metadata", "annotations")[annLastApplied].(string); ok && !rulesRemoveLastApplied(cmp.Rules, ref, r.Target, r.Live) {
			if o, err := unmarshalObject(la); err == nil && o != nil {
				dropEmptyAnnotations(o)
				normalize(o, w.rootType != nil, settings, false)
				orig = o
			}
		}
	}
	w.twoWay = orig == nil
	if w.rootType == nil {
		// A custom resource's knownTypeFields are compared in their type's
		// encoding, last-applied's too.
		g, _ := drift.SplitAPIVersion(drift.Str(r.Target, "apiVersion"))
		if kf := knownFields(settings, g, drift.Str(r.Target, "kind")); len(kf) > 0 {
			desired, live = applyKnownTypes(desired, kf), applyKnownTypes(live, kf)
			if o, ok := orig.(map[string]any); ok {
				orig = applyKnownTypes(o, kf)
			}
		}
	}
	if w.rootType != nil && !w.ssa {
		// Argo CD re-encodes Git's and the live object through the kind's
		// type before a client-side comparison; last-applied it reads as
		// written. (Server-side, the API server's dry run decides.)
		dropServerFields(desired, true, settings)
		dropServerFields(live, true, settings)
		// Both only change something where there is a null.
		if hasNull(desired) {
			if hasNullInMaps(desired) {
				desired = w.b.emptyNullStructs(w.rootType, desired)
			}
			dropNulls(desired, true)
		}
		if hasNull(live) {
			dropNulls(live, true)
		}
	}
	normalize(desired, w.rootType != nil, settings, true)
	normalize(live, w.rootType != nil, settings, false)
	trackingNormalize(desired, live, settings)
	return desired, live, orig
}

// hideByRules records, for each ignore rule that matches the resource, the
// paths it hides (on the rule too, as covered) and whether it hides by
// manager. A rule that removes a list's merge key fails the comparison, as
// Argo CD's three-way patch does.
func (w *walker) hideByRules(cmp *drift.Comparison, r *drift.Resource) {
	for ri := range cmp.Rules {
		rule := &cmp.Rules[ri]
		if !ruleMatches(rule, w.ref) {
			continue
		}
		paths := rulePointers(rule, r.Target, r.Live)
		rule.Covered = append(rule.Covered, drift.Covered{Index: w.idx, Paths: paths})
		for _, p := range paths {
			w.hiders = append(w.hiders, hider{rule: ri, path: p})
		}
		if len(rule.ManagedFieldsManagers) > 0 {
			w.managerRules = append(w.managerRules, ri)
		}
	}
	w.rules = cmp.Rules
	if w.rootType != nil && !w.ssa && cmp.Failed == nil {
		for _, h := range w.hiders {
			_, inGit := h.path.Get(r.Target)
			_, inLive := h.path.Get(r.Live)
			if key := w.b.removesMergeKey(w.rootType, h.path); key != "" && (inGit || inLive) {
				rule := &cmp.Rules[h.rule]
				cmp.Failed = fmt.Errorf("%s %s, ignore rule at %s removes %s of %s, the key that list's items are merged by: Argo CD's three-way patch then fails, and so does the comparison of the application (ComparisonError)",
					rule.Holder.Kind, rule.Holder.Name, rule.Path, h.path, w.ref)
				break
			}
		}
	}
}

// explainOutOfSync runs when Argo CD reports the resource OutOfSync but the
// walk found nothing it would show: it compares again without semantic
// equality, then two-way, and where that finds more than the API server
// fills (or Argo CD keeps syncing), adds one Unexplained difference saying
// what was compared. The walks reuse the paths' room pb and gpb.
func (w *walker) explainOutOfSync(s *drift.Snapshot, pb, gpb drift.Pointer, desired, live map[string]any, orig any, root fieldInfo) {
	raw := w.again(modeRaw)
	raw.walk(pb, gpb, desired, live, orig, orig != nil, root, 0)
	for i := range raw.diffs {
		raw.diffs[i].Raw = true
	}
	w.diffs = append(w.diffs, raw.diffs...)
	if anyVisible(raw.diffs) {
		return
	}
	two := w.again(modeTwoWay)
	two.walk(pb, gpb, desired, live, orig, orig != nil, root, 0)
	rev, n, loop := drift.SyncLoop(s.Application)
	if loop || !w.serverFilledOnly(two.diffs) {
		how := compared(w, two.diffs)
		if loop {
			how += fmt.Sprintf("; Argo CD synced revision %s %d times within an hour, so its verdict is current", short(rev), n)
		}
		w.diffs = append(w.diffs, drift.Difference{Resource: w.ref, Index: w.idx, Path: drift.Pointer{}, InGit: true, InLive: true,
			Builtin: w.rootType != nil, Unexplained: true, Compared: how})
	}
}

// addOwners names the field managers of each difference found, and the
// ignore rules by manager that hide it.
func (w *walker) addOwners(cmp *drift.Comparison, r *drift.Resource) {
	for i := range w.diffs {
		d := &w.diffs[i]
		if d.Unexplained {
			continue
		}
		d.Owners = ownersOf(w.managed(), r.Live, d.Path)
		for _, ri := range w.managerRules {
			for _, o := range d.Owners {
				if containsString(cmp.Rules[ri].ManagedFieldsManagers, o.Manager) {
					d.HiddenBy = appendUnique(d.HiddenBy, ri)
				}
			}
		}
	}
}

type hider struct {
	rule int
	path drift.Pointer
}

type walker struct {
	ref          drift.Ref
	idx          int
	b            *builtin
	rootType     reflect.Type
	ssa          bool
	symmetric    bool
	entries      []managed // parsed on first use
	parsed       bool
	rawTarget    drift.Object
	rawLive      drift.Object
	hiders       []hider
	managerRules []int
	rules        []drift.IgnoreRule
	diffs        []drift.Difference
	strict       int // 0 unknown, 1 both sides decode strictly, -1 not
	inAtomic     int // > 0 while inside the items of an atomic list of a built-in kind
	whole        int // > 0 while inside the items of a list a patch replaces whole
	mode         mode
	remarshaled  bool         // both sides are compared in their type's encoding
	twoWay       bool         // no usable last-applied: Argo CD takes Git's manifest for it
	dryRun       drift.Object // the API server's answer to a dry-run apply of Git's manifest
}

// mode says how strictly a walk compares.
type mode int

const (
	// modeArgo emulates Argo CD's diff.
	modeArgo mode = iota
	// modeRaw drops semantic equality: quantities compare as written and
	// fields only live has inside list items count, as when a patch replaces
	// the list whole.
	modeRaw
	// modeTwoWay also counts every field only live has (Git vs live, no
	// last-applied or field ownership).
	modeTwoWay
)

// again returns a fresh walker over the same resource in another mode.
func (w *walker) again(m mode) *walker {
	c := *w
	c.diffs, c.mode, c.inAtomic, c.whole = nil, m, 0, 0
	return &c
}

func short(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}

func anyVisible(ds []drift.Difference) bool {
	for i := range ds {
		if len(ds[i].HiddenBy) == 0 {
			return true
		}
	}
	return false
}

// serverFilledOnly reports whether every field a two-way comparison finds only
// in live is one the API server filled into Argo CD's own request (defaults
// are recorded under the requesting manager) or one Kubernetes' own
// components keep: nothing differs that a sync would change. Unless Argo CD's
// history shows it syncing the object again and again, its OutOfSync verdict
// is then taken as not current, and no finding is made.
func (w *walker) serverFilledOnly(twoWay []drift.Difference) bool {
	if w.rootType == nil {
		return false
	}
	for i := range twoWay {
		d := &twoWay[i]
		if d.InGit {
			return false
		}
		for _, o := range ownersOf(w.managed(), w.rawLive, d.Path) {
			if !drift.ArgoCDManagers[o.Manager] && !drift.KubernetesManagers[o.Manager] {
				return false
			}
		}
	}
	return true
}

// compared says, for an Unexplained difference, what driftfix compared.
func compared(w *walker, twoWay []drift.Difference) string {
	how := "Git's manifest against the live object with Argo CD's rules ("
	switch {
	case w.symmetric:
		how += "Argo CD's predicted and normalized live states"
	case w.ssa:
		how += "server-side apply: fields only live has count when argocd-controller owns them"
	default:
		how += "three-way with last-applied-configuration"
	}
	how += "), then again with raw values and lists replaced whole: no difference"
	var only []string
	for _, d := range twoWay {
		if !d.InGit {
			only = append(only, d.Path.String())
		}
	}
	switch {
	case len(only) == 0:
		how += "; a two-way comparison finds no field only in live either"
	case len(only) <= 5:
		how += "; a two-way comparison finds fields only in live (server defaults or other writers): " + strings.Join(only, ", ")
	default:
		how += "; a two-way comparison finds " + strconv.Itoa(len(only)) + " fields only in live (server defaults or other writers), first " + strings.Join(only[:5], ", ")
	}
	return how
}

// managed parses the live object's managedFields the first time they are needed.
func (w *walker) managed() []managed {
	if !w.parsed {
		w.entries, _ = parseManagedFields(w.rawLive)
		w.parsed = true
	}
	return w.entries
}

func (w *walker) add(p, gp drift.Pointer, git, live any, inGit, inLive bool, fi fieldInfo) {
	p = clonePath(p) // the walk's paths are reused: a kept report owns its own
	if !inGit && w.remarshaled {
		// The type's encoding dropped an empty value Git writes: Git still
		// declares it, and that is what a fix must change.
		if v, ok := p.Get(w.rawTarget); ok && zeroValue(v) {
			git, inGit, gp = v, true, p
		}
	}
	if !inGit {
		gp = nil
	} else if slices.Equal(gp, p) {
		gp = p // the same path: a kept report holds it once
	} else {
		gp = clonePath(gp)
	}
	d := drift.Difference{Resource: w.ref, Index: w.idx, Path: p, GitPath: gp, Git: git, Live: live, InGit: inGit, InLive: inLive,
		Builtin: w.rootType != nil, Undeclared: w.rootType != nil && !fi.known}
	for _, h := range w.hiders {
		if p.HasPrefix(h.path) {
			d.HiddenBy = appendUnique(d.HiddenBy, h.rule)
		}
	}
	// A rule that removes something beneath p hides p when the rest is
	// equal; and a map only one side has, emptied by the rules beneath it, is
	// nothing to Argo CD's patch: an empty map against none.
	if under := w.hidersUnder(p); len(under) > 0 {
		hidden := false
		switch {
		case inGit && inLive:
			hidden = drift.Equal(stripped(git, p, under), stripped(live, p, under))
		case inLive != inGit:
			// Only live's: an empty map left in live is nothing to the
			// patch. Only Git's: the patch adds the empty map, a
			// difference, except a client-side diff's metadata.annotations,
			// which Argo CD drops from Git's manifest when empty.
			v := live
			if inGit {
				v = nil
				if !w.ssa && len(p) == 2 && p[0] == "metadata" && p[1] == "annotations" {
					v = git
				}
			}
			if m, ok := v.(map[string]any); ok && len(m) > 0 {
				c, ok := stripped(m, p, under).(map[string]any)
				hidden = ok && len(c) == 0
			}
		}
		if hidden {
			for _, h := range under {
				d.HiddenBy = appendUnique(d.HiddenBy, h.rule)
			}
		}
	}
	w.diffs = append(w.diffs, d)
}

// hidersUnder returns the rules' paths strictly beneath p.
func (w *walker) hidersUnder(p drift.Pointer) []hider {
	var under []hider
	for _, h := range w.hiders {
		if len(h.path) > len(p) && h.path.HasPrefix(p) {
			under = append(under, h)
		}
	}
	return under
}

// stripped returns a copy of v, the value at p, without what the rules
// beneath p remove.
func stripped(v any, p drift.Pointer, under []hider) any {
	c := drift.DeepCopy(v)
	for _, h := range under {
		c, _ = h.path[len(p):].Delete(c)
	}
	return c
}

// liveOnlyIsDrift decides whether a field present only in live makes the
// resource differ: with client-side apply only when last-applied has it (Argo
// CD's three-way diff); with server-side apply only when Argo CD's manager owns
// it, so the next apply would remove it.
// The field is tok beneath parent; its path is only built when needed.
// Where liveOnlyByOrig, the answer is inOrig.
func (w *walker) liveOnlyIsDrift(parent drift.Pointer, tok string, inOrig bool) bool {
	if w.symmetric || w.mode == modeTwoWay || w.whole > 0 {
		return true
	}
	if w.inAtomic > 0 {
		return w.mode == modeRaw
	}
	if w.ssa {
		p := parent.Child(tok)
		for _, e := range w.managed() {
			if e.owner.Manager == argoSSAManager && e.owner.Operation == "Apply" && e.set.OwnsExactly(w.rawLive, p) {
				return true
			}
		}
		return false
	}
	return inOrig
}

// step and stepIndex extend a path the walk builds in place: the child's
// path reuses the parent's spare capacity, which its siblings reuse in turn,
// so a path the walk keeps must be copied (clonePath), as add does.
func step(p drift.Pointer, tok string) drift.Pointer { return append(p, tok) }

func stepIndex(p drift.Pointer, i int) drift.Pointer { return append(p, strconv.Itoa(i)) }

// rootPath is the empty path a walk starts from, with room to grow.
func rootPath() drift.Pointer { return make(drift.Pointer, 0, 16) }

// clonePath copies a path the walk built, with no spare capacity (as
// Pointer.Child makes them).
func clonePath(p drift.Pointer) drift.Pointer {
	if p == nil {
		return nil
	}
	c := make(drift.Pointer, len(p))
	copy(c, p)
	return c
}

// liveOnlyByOrig reports whether liveOnlyIsDrift answers with inOrig alone
// (a client-side three-way comparison outside lists replaced whole).
func (w *walker) liveOnlyByOrig() bool {
	return !w.symmetric && w.mode != modeTwoWay && w.whole == 0 && w.inAtomic == 0 && !w.ssa
}

func (w *walker) walk(p, gp drift.Pointer, d, l, o any, hasO bool, fi fieldInfo, depth int) {
	if depth > maxWalkDepth {
		if !drift.Equal(d, l) {
			w.add(p, gp, d, l, true, true, fi)
		}
		return
	}
	switch dv := d.(type) {
	case map[string]any:
		lv, ok := l.(map[string]any)
		if !ok {
			break
		}
		om, _ := o.(map[string]any)
		// Only keys whose values differ can give a difference (a walk over
		// equal values finds none), in sorted order as they are reported.
		var keys []string
		for k, dval := range dv {
			if lval, ok := lv[k]; ok {
				if drift.Equal(dval, lval) {
					continue
				}
			} else if dval == nil {
				// A null in Git means "absent": nothing to delete.
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cp := step(p, k)
			child, _ := w.b.child(fi.typ, k)
			child.known = child.known && fi.known
			ov, inO := om[k]
			if lval, ok := lv[k]; ok {
				w.walk(cp, step(gp, k), dv[k], lval, ov, hasO && inO, child, depth+1)
			} else {
				// A null in Git means "absent": a patch deletes with it.
				w.add(cp, step(gp, k), dv[k], nil, true, false, child)
			}
		}
		keys = keys[:0]
		if w.liveOnlyByOrig() {
			// Only fields last-applied has can be drift: look at those
			// rather than at every field live has.
			if hasO {
				for k := range om {
					if _, inLive := lv[k]; inLive {
						if _, inGit := dv[k]; !inGit {
							keys = append(keys, k)
						}
					}
				}
			}
		} else {
			for k := range lv {
				if _, ok := dv[k]; !ok {
					keys = append(keys, k)
				}
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			_, inO := om[k]
			if w.liveOnlyIsDrift(p, k, hasO && inO) {
				child, _ := w.b.child(fi.typ, k)
				child.known = child.known && fi.known
				w.add(step(p, k), nil, nil, lv[k], false, true, child)
			}
		}
		return
	case []any:
		lv, ok := l.([]any)
		if !ok {
			break
		}
		if fi.mergeKey != "" && allHaveKey(dv, fi.mergeKey) && allHaveKey(lv, fi.mergeKey) {
			w.walkKeyed(p, gp, dv, lv, o, hasO, fi, depth)
			return
		}
		if drift.Equal(d, l) {
			return
		}
		if w.rootType == nil && w.mode == modeArgo && !w.symmetric && !w.ssa && w.whole == 0 {
			// A custom resource's JSON merge patch is computed on live
			// stripped to the fields last-applied has (Git's manifest when
			// there is none), item by item: a list equal to Git's once its
			// items lose what only live has (schema defaults) is not patched.
			base, ok := o.([]any)
			if w.twoWay {
				base, ok = dv, true
			}
			if ok && hasO || w.twoWay {
				if drift.Equal(dv, stripToList(base, lv)) {
					return
				}
			}
		}
		w.walkWhole(p, gp, dv, lv, fi, depth)
		return
	}
	if drift.Equal(d, l) {
		return
	}
	if isQuantity(fi.typ) && w.mode == modeArgo && w.quantityHidden(d, l) {
		return
	}
	w.add(p, gp, d, l, true, true, fi)
}

// keyChanges pairs, in a list merged by key, Git's items whose key no live
// item has with live items whose key Git lacks, when there is exactly one of
// each and they sit at the same index: one item whose key was changed (a
// Service port edited from 80 to 8080), not one removed and one added.
func keyChanges(dv, lv []any, key string) map[int]int {
	var gitOnly, liveOnly []int
	for i, it := range dv {
		if findByKey(lv, key, it.(map[string]any)[key], nil) < 0 {
			gitOnly = append(gitOnly, i)
		}
	}
	for i, it := range lv {
		if findByKey(dv, key, it.(map[string]any)[key], nil) < 0 {
			liveOnly = append(liveOnly, i)
		}
	}
	if len(gitOnly) != 1 || len(liveOnly) != 1 || gitOnly[0] != liveOnly[0] {
		return nil
	}
	return map[int]int{gitOnly[0]: liveOnly[0]}
}

// nameKeys are the keys that identify items of lists without a merge key,
// tried in order, so a changed item is found by what it is, not where it sits.
var nameKeys = []string{"name", "key", "id"}

// walkWhole descends into a differing list that has no merge key, so each
// finding lands on the leaf that differs: items by a name key when every item
// has one, else by position when the lengths match; otherwise the list is one
// difference. In a built-in kind Argo CD applies scheme defaults to both
// sides, so fields only live has inside its items are defaults; in a custom
// resource the patch replaces the list whole, so they count.
func (w *walker) walkWhole(p, gp drift.Pointer, dv, lv []any, fi fieldInfo, depth int) {
	elem := fieldInfo{known: fi.known}
	if t := derefType(fi.typ); t != nil && t.Kind() == reflect.Slice {
		elem.typ = t.Elem()
	}
	builtin := w.rootType != nil && fi.known
	enter := func() {
		if builtin {
			w.inAtomic++
		} else {
			w.whole++
		}
	}
	leave := func() {
		if builtin {
			w.inAtomic--
		} else {
			w.whole--
		}
	}
	if key := commonKey(dv, lv); key != "" {
		used := make([]bool, len(lv))
		enter()
		for di, item := range dv {
			li := findByKey(lv, key, item.(map[string]any)[key], used)
			if li < 0 {
				w.add(stepIndex(p, di), stepIndex(gp, di), item, nil, true, false, elem)
				continue
			}
			used[li] = true
			w.walk(stepIndex(p, li), stepIndex(gp, di), item, lv[li], nil, false, elem, depth+1)
		}
		leave()
		for li, item := range lv {
			if !used[li] {
				w.add(stepIndex(p, li), nil, nil, item, false, true, elem)
			}
		}
		return
	}
	if len(dv) == len(lv) && (!builtin || allMaps(dv) && allMaps(lv)) {
		from := len(w.diffs)
		enter()
		for i := range dv {
			w.walk(stepIndex(p, i), stepIndex(gp, i), dv[i], lv[i], nil, false, elem, depth+1)
		}
		leave()
		if permutation(dv, lv) {
			rp := clonePath(p)
			for i := from; i < len(w.diffs); i++ {
				w.diffs[i].Reordered = rp
			}
		}
		return
	}
	w.add(p, gp, dv, lv, true, true, fi)
}

// permutation reports whether b holds exactly a's items in another order.
func permutation(a, b []any) bool {
	used := make([]bool, len(b))
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && drift.Equal(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// commonKey returns a name key every item on both sides has with a distinct
// scalar value, or "".
func commonKey(dv, lv []any) string {
	for _, k := range nameKeys {
		if distinctKey(dv, k) && distinctKey(lv, k) {
			return k
		}
	}
	return ""
}

func distinctKey(items []any, key string) bool {
	if len(items) == 0 {
		return false
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		s, ok := m[key].(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

func (w *walker) walkKeyed(p, gp drift.Pointer, dv, lv []any, o any, hasO bool, fi fieldInfo, depth int) {
	key := fi.mergeKey
	ol, _ := o.([]any)
	elem := fieldInfo{known: fi.known}
	if t := derefType(fi.typ); t != nil && t.Kind() == reflect.Slice {
		elem.typ = t.Elem()
	}
	used := make([]bool, len(lv))
	var pair map[int]int
	paired := false
	for di, item := range dv {
		kv := item.(map[string]any)[key]
		li := findByKey(lv, key, kv, used)
		if li < 0 {
			if !paired {
				pair, paired = keyChanges(dv, lv, key), true
			}
			if pl, ok := pair[di]; ok {
				// One item whose key changed: compare it with the live item
				// in its place, so the finding lands on the changed leaf.
				used[pl] = true
				w.walk(stepIndex(p, pl), stepIndex(gp, di), item, lv[pl], nil, false, elem, depth+1)
				continue
			}
			w.add(stepIndex(p, di), stepIndex(gp, di), item, nil, true, false, elem)
			continue
		}
		used[li] = true
		oi := findByKey(ol, key, kv, nil)
		var ov any
		if oi >= 0 {
			ov = ol[oi]
		}
		w.walk(stepIndex(p, li), stepIndex(gp, di), item, lv[li], ov, hasO && oi >= 0, elem, depth+1)
	}
	for li, item := range lv {
		if used[li] {
			continue
		}
		kv := item.(map[string]any)[key]
		inO := hasO && findByKey(ol, key, kv, nil) >= 0
		if w.liveOnlyIsDrift(p, strconv.Itoa(li), inO) {
			w.add(stepIndex(p, li), nil, nil, item, false, true, elem)
		}
	}
}

// quantityHidden reports whether Argo CD hides a quantity written in another
// form: only on a built-in kind, and only when both sides decode strictly.
func (w *walker) quantityHidden(a, b any) bool {
	qa, okA := drift.ParseQuantity(a)
	qb, okB := drift.ParseQuantity(b)
	if !okA || !okB || qa.Cmp(qb) != 0 {
		return false
	}
	return w.decodesStrictly()
}

// decodesStrictly reports whether Git's manifest and the live object both
// decode strictly into the kind's Go type, found once per resource.
func (w *walker) decodesStrictly() bool {
	if w.strict == 0 {
		w.strict = -1
		if w.rootType != nil && w.b.fits(w.rootType, w.rawTarget, 0) && w.b.fits(w.rootType, w.rawLive, 0) {
			w.strict = 1
		}
	}
	return w.strict == 1
}

func derefType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func allMaps(items []any) bool {
	for _, it := range items {
		if _, ok := it.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func allHaveKey(items []any, key string) bool {
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m[key]; !ok {
			return false
		}
	}
	return true
}

func findByKey(items []any, key string, want any, used []bool) int {
	for i, it := range items {
		if used != nil && used[i] {
			continue
		}
		if m, ok := it.(map[string]any); ok && drift.Equal(m[key], want) {
			return i
		}
	}
	return -1
}

// sortedSubsets returns an Endpoints object's subsets as Argo CD compares
// them: ports without a protocol get TCP, and addresses (by IP, then target
// UID), ports and subsets are put in one canonical order on both sides (Argo
// CD sorts by hash; any total order gives equal lists exactly when the two
// sides hold the same items). The input is not changed.
func sortedSubsets(subsets []any) []any {
	out := make([]any, 0, len(subsets))
	for _, s := range subsets {
		m, ok := s.(map[string]any)
		if !ok {
			return subsets
		}
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		for _, k := range []string{"addresses", "notReadyAddresses"} {
			if l, ok := c[k].([]any); ok {
				l = append([]any(nil), l...)
				sort.SliceStable(l, func(i, j int) bool {
					a, b := drift.Str(l[i], "ip"), drift.Str(l[j], "ip")
					if a != b {
						return a < b
					}
					return drift.Str(l[i], "targetRef", "uid") < drift.Str(l[j], "targetRef", "uid")
				})
				c[k] = l
			}
		}
		if l, ok := c["ports"].([]any); ok {
			ports := make([]any, len(l))
			for i, p := range l {
				if pm, ok := p.(map[string]any); ok {
					pc := make(map[string]any, len(pm)+1)
					for k, v := range pm {
						pc[k] = v
					}
					if pc["protocol"] == nil || pc["protocol"] == "" {
						pc["protocol"] = "TCP"
					}
					p = pc
				}
				ports[i] = p
			}
			sortCanonical(ports)
			c["ports"] = ports
		}
		out = append(out, c)
	}
	sortCanonical(out)
	return out
}

func sortCanonical(l []any) {
	keys := make([]string, len(l))
	for i, v := range l {
		b, _ := json.Marshal(v)
		keys[i] = string(b)
	}
	idx := make([]int, len(l))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	c := append([]any(nil), l...)
	for i, j := range idx {
		l[i] = c[j]
	}
}

// hasNull reports whether a null is anywhere in v.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

// hasNullInMaps reports whether a null is reachable from o through maps
// alone: where emptyNullStructs, which does not look into lists, can change
// anything.
func hasNullInMaps(o map[string]any) bool {
	for _, v := range o {
		switch x := v.(type) {
		case nil:
			return true
		case map[string]any:
			if hasNullInMaps(x) {
				return true
			}
		}
	}
	return false
}

// dropNulls removes the null fields of a built-in object, as Argo CD's
// re-encoding through the kind's Go type does before it compares: a null
// struct field decodes to its zero value and is left out. A null value in a
// string map (labels, annotations, data) decodes to "" and stays, as "".
// Maps and lists on the way to a null are copied, never changed in place:
// the snapshot's objects are shared.
func dropNulls(o map[string]any, structLike bool) {
	for k, v := range o {
		if v == nil {
			if structLike {
				delete(o, k)
			} else {
				o[k] = ""
			}
			continue
		}
		switch v.(type) {
		case map[string]any, []any:
			if nv, changed := withoutNulls(v, !stringMap(k)); changed {
				o[k] = nv
			}
		}
	}
}

// withoutNulls returns v with dropNulls applied, copied where it changed.
func withoutNulls(v any, structLike bool) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		var c map[string]any
		for k, e := range x {
			var ne any
			changed := false
			switch e.(type) {
			case nil:
				changed = true
			case map[string]any, []any:
				ne, changed = withoutNulls(e, !stringMap(k))
			}
			if !changed {
				continue
			}
			if c == nil {
				c = make(map[string]any, len(x))
				for k2, e2 := range x {
					c[k2] = e2
				}
			}
			switch {
			case e != nil:
				c[k] = ne
			case structLike:
				delete(c, k)
			default:
				c[k] = ""
			}
		}
		if c != nil {
			return c, true
		}
	case []any:
		var c []any
		for i, it := range x {
			if m, ok := it.(map[string]any); ok {
				if nm, changed := withoutNulls(m, true); changed {
					if c == nil {
						c = append([]any(nil), x...)
					}
					c[i] = nm
				}
			}
		}
		if c != nil {
			return c, true
		}
	}
	return v, false
}

// stringMap reports whether k is a field of built-in kinds that holds a
// string map.
func stringMap(k string) bool {
	switch k {
	case "labels", "annotations", "data", "binaryData", "stringData", "matchLabels", "nodeSelector", "selector":
		return true
	}
	return false
}

// normalize removes what Argo CD never compares: server-set metadata, status
// (ignoreResourceStatusField), the last-applied annotation; folds Secret
// stringData into data and drops empty Role rules.
func normalize(o map[string]any, builtin bool, s drift.Settings, desired bool) {
	dropServerFields(o, builtin, s)
	if md, ok := o["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if _, had := ann[annLastApplied]; had {
				// The annotations may be the snapshot's (shallowCopy
				// shares them): changed on a copy.
				c := make(map[string]any, len(ann)-1)
				for k, v := range ann {
					if k != annLastApplied {
						c[k] = v
					}
				}
				if len(c) == 0 {
					delete(md, "annotations")
				} else {
					md["annotations"] = c
				}
			}
		}
	}
	kind := drift.Str(o, "kind")
	group, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion"))
	if kind == "Secret" && group == "" {
		if sd, ok := o["stringData"].(map[string]any); ok {
			old, _ := o["data"].(map[string]any)
			data := make(map[string]any, len(old)+len(sd))
			for k, v := range old {
				data[k] = v
			}
			for k, v := range sd {
				str, _ := v.(string)
				data[k] = base64.StdEncoding.EncodeToString([]byte(str))
			}
			o["data"] = data
			delete(o, "stringData")
		}
	}
	if kind == "Endpoints" && group == "" {
		if subsets, ok := o["subsets"].([]any); ok {
			o["subsets"] = sortedSubsets(subsets)
		}
	}
	if (kind == "Role" || kind == "ClusterRole") && group == "rbac.authorization.k8s.io" {
		// Argo CD sets empty or ignored rules to null rather than removing
		// them: a null in Git's side deletes aggregated rules live has.
		if rules, ok := o["rules"].([]any); ok && len(rules) == 0 {
			o["rules"] = nil
		}
		// With ignoreAggregatedRoles, an aggregated role's rules are set to
		// null on both sides, whether Git writes rules or not.
		if _, agg := o["aggregationRule"].(map[string]any); agg && s.IgnoreAggregatedRoles {
			o["rules"] = nil
		}
	}
}

// serverFields are the metadata fields the API server sets, never compared.
var serverFields = []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"}

// dropServerFields is the part of normalize that only removes fields: the
// server-set metadata and, unless compared, status. It changes o's metadata
// map in place. Removing them before the rest of the normalization (and
// before dropNulls, which then need not walk them) gives the same result.
func dropServerFields(o map[string]any, builtin bool, s drift.Settings) {
	if md, ok := o["metadata"].(map[string]any); ok {
		for _, k := range serverFields {
			delete(md, k)
		}
	}
	switch s.StatusIgnore {
	case "none":
	case "crd":
		if !builtin {
			delete(o, "status")
		}
	default:
		delete(o, "status")
	}
}

// trackingNormalize mirrors Argo CD's tracking pre-normalization, which acts
// only under annotation tracking (annotation or annotation+label) and only on
// a live object that carries the instance label and is not a CRD (CRDs get no
// tracking annotation): a live object without the tracking annotation gets
// Git's (the label-to-annotation migration), and an instance label Git does
// not set is not compared. live's metadata is the caller's copy; its labels
// map is copied before a label is dropped.
func trackingNormalize(desired, live map[string]any, s drift.Settings) {
	if s.TrackingMethod == "" || s.TrackingMethod == "label" {
		return
	}
	md, _ := live["metadata"].(map[string]any)
	if md == nil {
		return
	}
	labels, _ := md["labels"].(map[string]any)
	if v, _ := labels[s.InstanceLabelKey].(string); v == "" {
		return
	}
	if g, _ := drift.SplitAPIVersion(drift.Str(live, "apiVersion")); g == "apiextensions.k8s.io" && drift.Str(live, "kind") == "CustomResourceDefinition" {
		return
	}
	ann, _ := md["annotations"].(map[string]any)
	if v, _ := ann[annTrackingID].(string); v == "" {
		// The annotations may be the snapshot's (shallowCopy shares
		// them): the tracking id goes into a copy.
		c := make(map[string]any, len(ann)+1)
		for k, v := range ann {
			c[k] = v
		}
		id, _ := drift.Map(desired, "metadata", "annotations")[annTrackingID].(string)
		c[annTrackingID] = id
		md["annotations"] = c
	}
	if v, _ := drift.Map(desired, "metadata", "labels")[s.InstanceLabelKey].(string); v == "" {
		c := make(map[string]any, len(labels))
		for k, v := range labels {
			if k != s.InstanceLabelKey {
				c[k] = v
			}
		}
		if len(c) == 0 {
			delete(md, "labels")
		} else {
			md["labels"] = c
		}
	}
}

// shallowCopy copies what normalization changes in place (the object and
// its metadata) and shares everything else with the original, which is
// never modified: what changes the annotations (normalize,
// trackingNormalize) replaces them with a changed copy.
func shallowCopy(o map[string]any) map[string]any {
	out := maps.Clone(o)
	if md, ok := o["metadata"].(map[string]any); ok {
		// The server-set fields are left out: normalize removes them from
		// every object it is given.
		mdc := maps.Clone(md)
		for _, k := range serverFields {
			delete(mdc, k)
		}
		out["metadata"] = mdc
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func appendUnique(list []int, v int) []int {
	for _, e := range list {
		if e == v {
			return list
		}
	}
	return append(list, v)
}

// dropEmptyAnnotations removes a null or empty metadata.annotations from a
// last-applied configuration, as Argo CD's three-way diff does before
// comparing: `kubectl apply` writes "annotations":{} there, which would
// otherwise read as Git having dropped every annotation live has.
func dropEmptyAnnotations(o map[string]any) {
	md, ok := o["metadata"].(map[string]any)
	if !ok {
		return
	}
	if a, has := md["annotations"]; has {
		if m, isMap := a.(map[string]any); a == nil || (isMap && len(m) == 0) {
			delete(md, "annotations")
		}
	}
}

// hasEmptyContainer reports whether v holds an empty map or list anywhere.
func hasEmptyContainer(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return true
		}
		for _, e := range x {
			if hasEmptyContainer(e) {
				return true
			}
		}
	case []any:
		if len(x) == 0 {
			return true
		}
		for _, e := range x {
			if hasEmptyContainer(e) {
				return true
			}
		}
	}
	return false
}

// stripToList returns live's list with only what base's items have, item by
// item by position (items past base's end kept whole), as Argo CD strips live
// before a custom resource's three-way merge patch.
func stripToList(base, live []any) []any {
	out := make([]any, len(live))
	for i, v := range live {
		if i < len(base) && v != nil {
			v = stripTo(base[i], v)
		}
		out[i] = v
	}
	return out
}

func stripTo(base, live any) any {
	switch b := base.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := make(map[string]any, len(b))
		for k, bv := range b {
			lv, ok := l[k]
			if !ok {
				continue
			}
			if lv != nil {
				lv = stripTo(bv, lv)
			}
			out[k] = lv
		}
		return out
	case []any:
		if l, ok := live.([]any); ok {
			return stripToList(b, l)
		}
	}
	return live
}

// lastAppliedPointer is where live carries kubectl's last-applied annotation.
var lastAppliedPointer = drift.Pointer{"metadata", "annotations", annLastApplied}

// rulesRemoveLastApplied reports whether an ignore rule of the resource removes
// live's last-applied annotation (it, the annotations or the metadata): Argo
// CD normalizes live with the rules before it reads last-applied, so it then
// finds none and compares two-way.
func rulesRemoveLastApplied(rules []drift.IgnoreRule, ref drift.Ref, target, live drift.Object) bool {
	for i := range rules {
		r := &rules[i]
		if !ruleMatches(r, ref) || len(r.JSONPointers)+len(r.JQPathExpressions) == 0 {
			continue
		}
		for _, p := range rulePointers(r, target, live) {
			if lastAppliedPointer.HasPrefix(p) {
				return true
			}
		}
	}
	return false
}
