package remediations

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/ignores"
	"github.com/driftfix/driftfix/templates"
)

// Planning the ignore-rule pull requests of an instance: the inventory of
// its rules (bot/ignores) is judged (RuleInventory.Judge) into the lines the
// digest shows and, per file that declares rules, what a pull request
// changes there: the rules that hid nothing for the policy's staleAfter are
// removed, and at most one broad rule is narrowed with the narrow-ignore
// remedy. Each file's change is edited and verified (RuleInventory.Change)
// by re-diagnosing every application read without the removed rules.
// Reading the applications and the files is the caller's.

// RuleSnap is an application read for the inventory.
type RuleSnap struct {
	Snapshot *drift.Snapshot
	// Report is its diagnosis: the cycle's when it made one, else Judge's.
	Report *drift.Report
	// Sensitivity is its policy's.
	Sensitivity drift.Sensitivity
}

// PlatformFile is the file of a platform repository that declares argocd-cm.
type PlatformFile struct{ URL, File, Branch string }

// RuleInventory is one instance's ignore-rule inventory being judged.
type RuleInventory struct {
	Instance string
	Snaps    []RuleSnap
	// Sensitivity is the global policy's; Now the inventory's time; Stale
	// the policy's staleAfter.
	Sensitivity drift.Sensitivity
	Now         time.Time
	Stale       time.Duration
	// Complete says every application a rule can apply to was read, so
	// what hides nothing is known. AllApps says every application of the
	// shard was read (argocd-cm has rules): only then is an argocd-cm rule
	// known to hide nothing.
	Complete, AllApps bool
	// Platform is the instance's platform repository file (nil: none), by
	// which argocd-cm's rules are changed.
	Platform *PlatformFile
	// RuleIdle records whether a rule (by identity) hid nothing, and returns
	// since when it has hidden nothing (zero when it hides something). Nil:
	// never stale for long enough to be removed.
	RuleIdle func(rule string, idle bool) time.Time
	// Diagnose diagnoses an application; Fix plans an application's fixes
	// under its policy (nil: no broad rule is narrowed).
	Diagnose Diagnose
	Fix      func(*drift.Snapshot) ([]Plan, error)

	judged map[string]judgment // why the diagnosis flags a rule, by holder and place
}

// RuleReport is what judging an instance's inventory gave.
type RuleReport struct {
	// Lines are the rules it flags: covering a sensitive path, hiding
	// nothing, or broader than what they hide.
	Lines []templates.IgnoreLine
	// Keys are the files (RuleFile.Key) whose pull request is still wanted.
	Keys []string
	// Files are the files with a change to make, by key.
	Files []*RuleFile
	// Skipped are the rules left for a person, and why; Errors the
	// applications whose fixes could not be planned.
	Skipped []string
	Errors  []error
}

// RuleFile is one file that declares rules a pull request changes.
type RuleFile struct {
	Repo, Base, File string
	// Key names the file (instance, repository, file): its pull request's.
	Key    string
	remove []*ignores.Rule
	narrow *narrowing
	cm     bool // argocd-cm in the platform repository
}

// narrowing is a verified narrow-ignore plan of a broad rule.
type narrowing struct {
	rule *ignores.Rule
	app  string
	plan Plan
}

// RuleChange is a file's change, verified: what its pull request carries.
type RuleChange struct {
	Key, Fingerprint string
	Before, After    []byte
	// Rules are the identities of the rules it removes or narrows; Holds
	// the rules it changes by holder and place (RuleAt).
	Rules, Holds []string
	View         templates.IgnorePRView
}

// SystemRules says argocd-cm declares ignore rules in one of the cluster
// contexts: they may apply to any application, so the inventory reads
// every application of the shard, not only those declaring rules.
func SystemRules(clusters ...[]drift.Object) bool {
	for _, c := range clusters {
		if ignores.HasSystemRules(c) {
			return true
		}
	}
	return false
}

// RuleAt names a rule by its holder and place, as a narrow-ignore finding
// names it (its resource and path).
func RuleAt(holder drift.Ref, at drift.Pointer) string {
	return holder.String() + "\x00" + at.String()
}

// Judge judges the inventory: the lines to show, and the files to change.
func (inv *RuleInventory) Judge() (RuleReport, error) {
	var out RuleReport
	var all []*drift.Snapshot
	for _, k := range inv.Snaps {
		all = append(all, k.Snapshot)
	}
	rep, err := ignores.Inventory(all, ignores.Options{Sensitivity: inv.Sensitivity, Now: inv.Now})
	if err != nil {
		return out, err
	}
	if err := inv.judgeBroad(); err != nil {
		return out, err
	}
	files := map[string]*RuleFile{}
	for i := range rep.Rules {
		r := &rep.Rules[i]
		if r.Declared.Holder.Kind != "Application" && !inv.AllApps {
			// argocd-cm seen only in a diagnosed application's cluster
			// context: the applications not read may be what it hides
			r.Stale = false
		}
		var since time.Time
		if inv.RuleIdle != nil && inv.Complete {
			since = inv.RuleIdle(r.Identity(), r.Stale)
		}
		j := inv.judged[RuleAt(r.Declared.Holder, r.At())]
		flagged := j.flagged()
		if len(r.Sensitive) == 0 && !r.Stale && !flagged {
			continue
		}
		out.Lines = append(out.Lines, inv.line(r, j, since))
		switch {
		case r.Stale && !since.IsZero() && inv.Now.Sub(since) >= inv.Stale:
			inv.addRemoval(&out, files, r)
		case flagged && r.Hides > 0:
			inv.addNarrowing(&out, files, r)
		}
		if f := inv.fileOf(r); f != nil && (r.Stale || (flagged && r.Hides > 0)) {
			out.Keys = append(out.Keys, f.Key)
		}
	}
	slices.Sort(out.Keys)
	out.Keys = slices.Compact(out.Keys)
	for _, k := range slices.Sorted(maps.Keys(files)) {
		if f := files[k]; len(f.remove) > 0 || f.narrow != nil {
			out.Files = append(out.Files, f)
		}
	}
	return out, nil
}

// line is the digest's line of a flagged rule.
func (inv *RuleInventory) line(r *ignores.Rule, j judgment, since time.Time) templates.IgnoreLine {
	l := templates.IgnoreLine{Instance: inv.Instance, Rule: r.Identity(), Holder: holderText(r.Declared.Holder), Key: r.Declared.Key,
		Apps: r.Applications, Stale: r.Stale, Broad: j.broad, NarrowSensitive: j.sensitive}
	if h := r.Declared.Holder; h.Kind == "Application" && !slices.Contains(l.Apps, h.Namespace+"/"+h.Name) {
		l.Apps = append(slices.Clone(l.Apps), h.Namespace+"/"+h.Name) // its own, even when it applies to nothing
	}
	if r.Declared.File != "" {
		l.Where = r.Declared.File + ":" + strconv.Itoa(r.Declared.Line)
	}
	if len(r.Sensitive) > 0 {
		sv := r.Sensitive[0]
		l.Sensitive = sv.Path + " (" + sv.Why + ")"
		if sv.Resource != nil {
			l.Sensitive = sv.Resource.String() + " " + l.Sensitive
		}
	}
	if r.Stale && !since.IsZero() {
		l.IdleDays = int(inv.Now.Sub(since) / (24 * time.Hour))
	}
	return l
}

func holderText(h drift.Ref) string {
	if h.Namespace == "" {
		return h.Kind + " " + h.Name
	}
	return h.Kind + " " + h.Namespace + "/" + h.Name
}

// judgment is why the broad-ignore diagnosis flags a rule: broad says what
// makes it broad (and any sensitive path it also covers); sensitive, for a
// rule scoped narrowly (one resource by name, exact paths), the sensitive
// path it covers. One of the two is set.
type judgment struct{ broad, sensitive string }

func (j judgment) flagged() bool { return j.broad != "" || j.sensitive != "" }

// judge reads a broad-ignore finding's evidence: what makes the rule
// broad (drift.EvidenceBroadRule), or the sensitive paths a rule scoped
// narrowly covers (drift.EvidenceSensitiveRule). Evidence of neither kind
// is taken as broad, its first sentence whole.
func judge(ev []drift.Evidence) judgment {
	for _, e := range ev {
		switch e.Kind {
		case drift.EvidenceBroadRule:
			return judgment{broad: e.Detail}
		case drift.EvidenceSensitiveRule:
			return judgment{sensitive: e.Detail}
		}
	}
	return judgment{broad: ev[0].Text}
}

// judgeBroad finds the rules the broad-ignore diagnosis flags, broad or
// scoped narrowly on a sensitive path, in every application read
// (diagnosing those the cycle did not).
func (inv *RuleInventory) judgeBroad() error {
	inv.judged = map[string]judgment{}
	for i := range inv.Snaps {
		k := &inv.Snaps[i]
		if k.Report == nil {
			rep, err := inv.Diagnose(k.Snapshot, k.Sensitivity)
			if err != nil {
				return fmt.Errorf("diagnose %s: %w", k.Snapshot.AppName(), err)
			}
			k.Report = rep
		}
		for _, f := range k.Report.Findings {
			if f.Cause != drift.CauseBroadIgnore || len(f.Evidence) == 0 {
				continue
			}
			inv.judged[RuleAt(f.Resource, f.Path)] = judge(f.Evidence)
		}
	}
	return nil
}

// snapOf is the snapshot of the Application that holds a rule.
func (inv *RuleInventory) snapOf(h drift.Ref) *RuleSnap {
	for i := range inv.Snaps {
		if drift.RefOf(inv.Snaps[i].Snapshot.Application) == h {
			return &inv.Snaps[i]
		}
	}
	return nil
}

// fileOf is the file that declares a rule, as a pull request changes it
// (nil when driftfix cannot change it).
func (inv *RuleInventory) fileOf(r *ignores.Rule) *RuleFile {
	var f *RuleFile
	switch {
	case r.Declared.Holder.Kind == "Application":
		if r.Declared.File == "" {
			return nil
		}
		f = &RuleFile{Repo: r.Declared.Repo, File: r.Declared.File, Base: "HEAD"}
		for _, k := range inv.Snaps {
			if srcs := drift.Sources(k.Snapshot.Application); len(srcs) > 0 && srcs[0].RepoURL == f.Repo && srcs[0].TargetRevision != "" {
				f.Base = srcs[0].TargetRevision
				break
			}
		}
	case inv.Platform == nil:
		return nil
	default:
		f = &RuleFile{Repo: inv.Platform.URL, File: inv.Platform.File, Base: inv.Platform.Branch, cm: true}
	}
	h := sha256.New()
	for _, s := range []string{inv.Instance, f.Repo, f.File} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	f.Key = hex.EncodeToString(h.Sum(nil))[:12]
	return f
}

// file is the pull request's file of a rule, one per file (nil when
// driftfix cannot change it).
func (inv *RuleInventory) file(files map[string]*RuleFile, r *ignores.Rule) *RuleFile {
	f := inv.fileOf(r)
	if f == nil {
		return nil
	}
	if files[f.Key] == nil {
		files[f.Key] = f
	}
	return files[f.Key]
}

// addRemoval adds a stale rule to the pull request of its file; a rule
// driftfix cannot remove is said to be left for a person.
func (inv *RuleInventory) addRemoval(out *RuleReport, files map[string]*RuleFile, r *ignores.Rule) {
	name := holderText(r.Declared.Holder) + " " + r.Declared.Key
	switch {
	case r.ArgoCDDefault != "":
		return // Argo CD's own rule (the inventory never calls it stale; kept out here too)
	case r.Kind == ignores.KindCompareOption:
		out.Skipped = append(out.Skipped, fmt.Sprintf("ignore rule %s hides nothing: it is a compare option of argocd-cm; change it by hand", name))
		return
	case r.Declared.Holder.Kind != "Application" && (len(r.At()) != 2 || r.At()[0] != "data" ||
		!(strings.HasPrefix(r.At()[1], "resource.customizations.ignoreDifferences.") || strings.HasPrefix(r.At()[1], "resource.customizations.ignoreResourceUpdates."))):
		out.Skipped = append(out.Skipped, fmt.Sprintf("ignore rule %s hides nothing: it shares its argocd-cm key with other rules; remove it by hand", name))
		return
	}
	f := inv.file(files, r)
	if f == nil {
		why := r.Declared.NotInGit
		if r.Declared.Holder.Kind != "Application" {
			why = "no platformRepos entry names the file that declares argocd-cm"
		}
		out.Skipped = append(out.Skipped, fmt.Sprintf("ignore rule %s hides nothing: %s; remove it by hand", name, why))
		return
	}
	f.remove = append(f.remove, r)
}

// addNarrowing plans the narrow-ignore fix of a broad rule: at most one per
// file, the others wait for it. A stuck application's own fixes may plan
// it too; that one is held back while this pull request is open.
func (inv *RuleInventory) addNarrowing(out *RuleReport, files map[string]*RuleFile, r *ignores.Rule) {
	if r.Declared.Holder.Kind != "Application" {
		return // an argocd-cm rule is narrowed by hand; the digest says it is broad
	}
	k := inv.snapOf(r.Declared.Holder)
	if k == nil || inv.Fix == nil {
		return
	}
	f := inv.file(files, r)
	if srcs := drift.Sources(k.Snapshot.Application); f == nil || f.narrow != nil || len(srcs) == 0 || srcs[0].RepoURL != f.Repo {
		return // the manifest is not in the application's own repository, which the remedy edits
	}
	plans, err := inv.Fix(k.Snapshot)
	if err != nil {
		out.Errors = append(out.Errors, fmt.Errorf("application %s: %w", k.Snapshot.AppName(), err))
		return
	}
	for _, p := range plans {
		if p.Kind != drift.FixNarrowIgnore || p.Dropped != "" || len(p.Edits) != 1 || p.Edits[0].File != f.File || len(p.Findings) == 0 || p.Findings[0].Path.String() != r.At().String() {
			continue
		}
		f.narrow = &narrowing{rule: r, app: drift.Str(k.Snapshot.Application, "metadata", "name"), plan: p}
		return
	}
}

// Change edits one file (its content src, at the pull request's base) and
// verifies the change; a change that is not proposed comes back with why.
func (inv *RuleInventory) Change(f *RuleFile, src string) (RuleChange, string, error) {
	before := []byte(src)
	after := before
	var narrowed []string // Applications, with the index narrowed
	narrowAt := map[string]int{}
	if f.narrow != nil {
		e := f.narrow.plan.Edits[0]
		if string(e.Before) != src {
			return RuleChange{}, f.File + " changed since the application's revision was read; narrowing waits for the next cycle", nil
		}
		after = e.After
		n, _ := strconv.Atoi(f.narrow.rule.At().Last())
		narrowAt[f.narrow.app] = n
		narrowed = append(narrowed, f.narrow.rule.Identity())
	}
	after, removed, err := inv.removeRules(f, after, narrowAt)
	if err != nil {
		return RuleChange{}, "not proposed: " + err.Error(), nil
	}
	verified, why, err := inv.verify(f)
	if err != nil || why != "" {
		return RuleChange{}, why, err
	}
	if f.narrow != nil {
		verified += " The narrowed rule: " + f.narrow.plan.Verification
	}
	if string(before) == string(after) {
		return RuleChange{}, "the file already has the change; waiting for Argo CD to read it", nil
	}
	return inv.change(f, before, after, verified, append(removed, narrowed...)), "", nil
}

// removeRules removes the file's stale rules from its content after: keys
// of argocd-cm, or entries of Applications' ignoreDifferences (narrowAt: the
// index of each Application's rule narrowed, which left the list).
func (inv *RuleInventory) removeRules(f *RuleFile, after []byte, narrowAt map[string]int) ([]byte, []string, error) {
	var removed []string
	if f.cm {
		var keys []string
		for _, r := range f.remove {
			keys = append(keys, r.At()[1])
			removed = append(removed, r.Identity())
		}
		out, _, err := RemoveArgoCDCMKeys(f.File, after, keys)
		return out, removed, err
	}
	byApp := map[string]map[int]any{}
	for _, r := range f.remove {
		k := inv.snapOf(r.Declared.Holder)
		if k == nil {
			continue
		}
		i, _ := strconv.Atoi(r.At().Last())
		rule := drift.List(k.Snapshot.Application, "spec", "ignoreDifferences")[i]
		if n, ok := narrowAt[r.Declared.Holder.Name]; ok && i > n {
			i-- // the narrowed rule left the list; its replacements are at its end
		}
		if byApp[r.Declared.Holder.Name] == nil {
			byApp[r.Declared.Holder.Name] = map[int]any{}
		}
		byApp[r.Declared.Holder.Name][i] = rule
		removed = append(removed, r.Identity())
	}
	for _, app := range slices.Sorted(maps.Keys(byApp)) {
		var err error
		if after, err = RemoveAppIgnoreRules(f.File, after, app, byApp[app]); err != nil {
			return nil, nil, err
		}
	}
	return after, removed, nil
}

// verify re-diagnoses every application read without the rules removed
// (each Application without its own, all of them without argocd-cm's): no
// difference may be new, so no application becomes OutOfSync.
func (inv *RuleInventory) verify(f *RuleFile) (string, string, error) {
	if len(f.remove) == 0 {
		return "", "", nil
	}
	gone := map[string]map[int]bool{} // Application rules removed, by holder
	var keys []string
	for _, r := range f.remove {
		if f.cm {
			keys = append(keys, r.At()[1])
			continue
		}
		i, _ := strconv.Atoi(r.At().Last())
		h := r.Declared.Holder.String()
		if gone[h] == nil {
			gone[h] = map[int]bool{}
		}
		gone[h][i] = true
	}
	checked := 0
	for _, k := range inv.Snaps {
		changed := *k.Snapshot
		if idx := gone[drift.RefOf(k.Snapshot.Application).String()]; idx != nil {
			app := drift.DeepCopy(k.Snapshot.Application).(map[string]any)
			var kept []any
			for i, r := range drift.List(app, "spec", "ignoreDifferences") {
				if !idx[i] {
					kept = append(kept, r)
				}
			}
			drift.Map(app, "spec")["ignoreDifferences"] = kept
			changed.Application = app
		} else if len(keys) > 0 {
			changed.Cluster = withoutArgoCDCMKeys(k.Snapshot.Cluster, keys)
		} else {
			continue
		}
		before, err := inv.Diagnose(k.Snapshot, k.Sensitivity)
		if err != nil {
			return "", "", err
		}
		after, err := inv.Diagnose(&changed, k.Sensitivity)
		if err != nil {
			return "", fmt.Sprintf("%s: re-diagnosing without the rules failed: %v", k.Snapshot.AppName(), err), nil
		}
		had := map[string]bool{}
		for _, f := range before.Findings {
			had[findingID(f)] = true
		}
		for _, f := range after.Findings {
			if !had[findingID(f)] && f.Cause != drift.CauseBroadIgnore {
				return "", fmt.Sprintf("%s: without the rules %s %s differs (%s); they hide something after all", k.Snapshot.AppName(), f.Resource, f.Path, f.Cause), nil
			}
		}
		checked++
	}
	return fmt.Sprintf("Re-diagnosed the %d %s the removed rules apply to without them: no new difference, so none becomes OutOfSync.", checked, plural(checked, "application", "applications")), "", nil
}

// withoutArgoCDCMKeys is a cluster context whose argocd-cm lacks the keys.
func withoutArgoCDCMKeys(cluster []drift.Object, keys []string) []drift.Object {
	out := make([]drift.Object, 0, len(cluster))
	for _, o := range cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm" {
			cm := drift.DeepCopy(o).(map[string]any)
			data, _ := cm["data"].(map[string]any)
			for _, k := range keys {
				delete(data, k)
			}
			o = cm
		}
		out = append(out, o)
	}
	return out
}

// change is a verified change with what its pull request says of it.
func (inv *RuleInventory) change(f *RuleFile, before, after []byte, verified string, rules []string) RuleChange {
	h := sha256.New()
	for _, s := range []string{f.Key, f.Repo, f.File, string(after)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	fp := hex.EncodeToString(h.Sum(nil))[:12]
	v := templates.IgnorePRView{Instance: inv.Instance, Repo: f.Repo, File: f.File, StaleAfterDays: int(inv.Stale / (24 * time.Hour)),
		Diff: UnifiedDiff(f.File, before, after), Verification: verified, Fingerprint: fp}
	line := func(r *ignores.Rule) templates.IgnoreLine {
		l := templates.IgnoreLine{Holder: holderText(r.Declared.Holder), Key: r.Declared.Key, Stale: r.Stale}
		if r.Declared.Line > 0 {
			l.Where = r.Declared.File + ":" + strconv.Itoa(r.Declared.Line)
		}
		return l
	}
	var holds []string
	for _, r := range f.remove {
		v.Removed = append(v.Removed, line(r))
		holds = append(holds, RuleAt(r.Declared.Holder, r.At()))
	}
	if f.narrow != nil {
		l := line(f.narrow.rule)
		j := inv.judged[RuleAt(f.narrow.rule.Declared.Holder, f.narrow.rule.At())]
		l.Broad, l.NarrowSensitive = j.broad, j.sensitive
		v.Narrowed = []templates.IgnoreLine{l}
		v.NarrowWhy, v.NarrowRisk = f.narrow.plan.Rationale.Why, f.narrow.plan.Rationale.Risk
		holds = append(holds, RuleAt(f.narrow.rule.Declared.Holder, f.narrow.rule.At()))
	}
	return RuleChange{Key: f.Key, Fingerprint: fp, Before: before, After: after, Rules: rules, Holds: holds, View: v}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
