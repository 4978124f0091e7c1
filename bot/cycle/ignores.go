package cycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/ignores"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// IgnoreInventory is the ignore-rule inventory of one instance this cycle,
// taken when the policy sets ignoreRules.
type IgnoreInventory struct {
	Instance string
	// Lines are the rules it flags: covering a sensitive path, hiding
	// nothing, or broader than what they hide.
	Lines []templates.IgnoreLine
	// Keys are the ignore-rule pull requests (by key) still wanted: every
	// file with a rule that hides nothing or is broad. An open one whose key
	// is not among them is no longer needed.
	Keys []string
	// Complete says every application a rule can apply to was read, so
	// what hides nothing is known.
	Complete bool
}

// IgnorePR is one pull request to the file that declares ignore rules: it
// removes the rules that hid nothing for the policy's staleAfter, and
// narrows at most one broad rule with the narrow-ignore remedy.
type IgnorePR struct {
	Instance string
	// Key names the file (instance, repository, file); it names the branch,
	// so restarts and replicas find the same pull request again.
	Key         string
	Fingerprint string // the change's content; a changed change updates the PR
	RepoURL     string
	Base        string // "" or HEAD: the repository's default branch
	Branch      string
	Title, Body string
	Policy      config.Policy // the global policy: labels, reviewers, draft, dry run, quiet hours
	File        string
	Before      []byte
	After       []byte
	// Rules are the identities of the rules it removes or narrows.
	Rules []string
	// Holds are the rules it changes by holder and place (RuleAt): an
	// application's own narrow-ignore fix of one of them is held back while
	// it is open.
	Holds []string
}

// IgnoreMarker ends an ignore-rule PR's body, so it is told apart from the
// other pull requests; it never matches KeyMarkerRE.
func IgnoreMarker(key string) string { return "\n<!-- driftfix:ignores=" + key + " -->\n" }

// IgnoreBranch is the branch of an ignore-rule pull request.
func IgnoreBranch(prefix, instance, key string) string {
	return Branch(prefix, "ignores-"+instance, "ignore-rules", key)
}

// inventorySnap is an application read for the inventory.
type inventorySnap struct {
	s      *drift.Snapshot
	report *drift.Report // its diagnosis, when the cycle made one
}

// wantsInventory reports whether an application's snapshot is needed for
// the inventory: it declares rules, or argocd-cm does.
func wantsInventory(a argocd.AppSummary, system bool) bool { return system || a.IgnoreRules > 0 }

// inventoryReaders bound the snapshots the inventory reads at once, as the
// scan's workers do.
const inventoryReaders = 8

// inventory takes the ignore-rule inventory of an instance: the snapshots
// the cycle diagnosed, and one more snapshot (no refresh) per listed
// application a rule can apply to. It records since when each rule hid
// nothing, and plans the pull requests that remove the rules stale for the
// policy's staleAfter and narrow the broad ones.
func (res *CycleResult) inventory(ctx context.Context, cfg *config.Config, in Instance, cluster func(*drift.Snapshot) []drift.Object,
	listed []argocd.AppSummary, kept map[string]inventorySnap, failed int, now time.Time, opts CycleOptions) {
	settings, err := in.Client.Settings(ctx)
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("ignore-rule inventory of %s: %w", in.Name, err))
		return
	}
	system := ignores.HasSystemRules([]drift.Object{settings.ConfigMap()})
	for _, k := range kept {
		system = system || ignores.HasSystemRules(k.s.Cluster)
	}
	// The applications not diagnosed this cycle are read in inventoryReaders
	// at once; the snapshots keep the list's order.
	type read struct {
		app  argocd.AppSummary
		snap inventorySnap
		err  error
	}
	var reads []read
	for _, a := range listed {
		if !inShard(in.Shard, a.Name) || a.CannotCompare {
			continue
		}
		if k, ok := kept[a.Namespace+"/"+a.Name]; ok {
			reads = append(reads, read{app: a, snap: k})
		} else if wantsInventory(a, system) {
			reads = append(reads, read{app: a})
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < inventoryReaders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				a := reads[i].app
				s, err := in.Client.Snapshot(ctx, a.Namespace, a.Name, argocd.SnapshotOptions{Settings: &settings})
				if err == nil && cluster != nil {
					collect.AddClusterContext(s, cluster(s))
				}
				if err == nil && in.RepoFiles != nil {
					s.Repo.Files, err = in.RepoFiles(ctx, s)
				}
				reads[i].snap, reads[i].err = inventorySnap{s: s}, err
			}
		}()
	}
	for i := range reads {
		if reads[i].snap.s == nil {
			jobs <- i
		}
	}
	close(jobs)
	wg.Wait()
	var snaps []inventorySnap
	for _, r := range reads {
		if r.err != nil {
			failed++
			res.Errors = append(res.Errors, fmt.Errorf("ignore-rule inventory: application %s/%s: %w", r.app.Namespace, r.app.Name, r.err))
			continue
		}
		snaps = append(snaps, r.snap)
	}
	if len(snaps) == 0 {
		res.Ignores = append(res.Ignores, IgnoreInventory{Instance: in.Name, Complete: failed == 0})
		return
	}
	inv := &inventoryRun{res: res, cfg: cfg, in: in, snaps: snaps, now: now, opts: opts, complete: failed == 0, allApps: system}
	if err := inv.run(ctx); err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("ignore-rule inventory of %s: %w", in.Name, err))
	}
}

// inventoryRun is one instance's inventory being judged.
type inventoryRun struct {
	res      *CycleResult
	cfg      *config.Config
	in       Instance
	snaps    []inventorySnap
	now      time.Time
	opts     CycleOptions
	complete bool
	// allApps says every application of the shard was read (argocd-cm has
	// rules): only then is an argocd-cm rule known to hide nothing.
	allApps bool

	judged map[string]judgment // why the diagnosis flags a rule, by holder and place
}

// ruleFile is one file that declares rules a pull request changes.
type ruleFile struct {
	repo, base, file string
	remove           []*ignores.Rule
	narrow           *narrowing
	cm               bool // argocd-cm in the platform repository
}

// narrowing is a verified narrow-ignore plan of a broad rule.
type narrowing struct {
	rule *ignores.Rule
	app  string
	plan remediations.Plan
}

func (inv *inventoryRun) run(ctx context.Context) error {
	var all []*drift.Snapshot
	for _, k := range inv.snaps {
		all = append(all, k.s)
	}
	rep, err := ignores.Inventory(all, ignores.Options{Sensitivity: inv.cfg.Policy.Sensitivity(), Now: inv.now})
	if err != nil {
		return err
	}
	if err := inv.judgeBroad(); err != nil {
		return err
	}
	out := IgnoreInventory{Instance: inv.in.Name, Complete: inv.complete}
	files := map[string]*ruleFile{}
	stale := inv.cfg.Policy.IgnoreRules.Stale()
	for i := range rep.Rules {
		r := &rep.Rules[i]
		id := r.Identity()
		if r.Declared.Holder.Kind != "Application" && !inv.allApps {
			// argocd-cm seen only in a diagnosed application's cluster
			// context: the applications not read may be what it hides
			r.Stale = false
		}
		var since time.Time
		if inv.opts.RuleIdle != nil && inv.complete {
			since = inv.opts.RuleIdle(inv.in.Name, id, r.Stale)
		}
		j := inv.judged[RuleAt(r.Declared.Holder, r.At())]
		flagged := j.flagged()
		l := templates.IgnoreLine{Instance: inv.in.Name, Rule: id, Holder: holderText(r.Declared.Holder), Key: r.Declared.Key,
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
			l.IdleDays = int(inv.now.Sub(since) / (24 * time.Hour))
		}
		if len(r.Sensitive) == 0 && !r.Stale && !flagged {
			continue
		}
		out.Lines = append(out.Lines, l)
		switch {
		case r.Stale && !since.IsZero() && inv.now.Sub(since) >= stale:
			inv.addRemoval(files, r)
		case flagged && r.Hides > 0:
			inv.addNarrowing(files, r)
		}
		if f := inv.fileOf(r); f != nil && (r.Stale || (flagged && r.Hides > 0)) {
			out.Keys = append(out.Keys, inv.fileKey(f))
		}
	}
	slices.Sort(out.Keys)
	out.Keys = slices.Compact(out.Keys)
	inv.res.Ignores = append(inv.res.Ignores, out)
	for _, k := range slices.Sorted(maps.Keys(files)) {
		pr, why, err := inv.plan(ctx, files[k])
		switch {
		case err != nil:
			inv.res.Errors = append(inv.res.Errors, fmt.Errorf("ignore rules in %s of %s: %w", files[k].file, files[k].repo, err))
		case why != "":
			inv.res.Skipped = append(inv.res.Skipped, fmt.Sprintf("ignore rules in %s of %s: %s", files[k].file, files[k].repo, why))
		default:
			inv.res.IgnorePRs = append(inv.res.IgnorePRs, pr)
		}
	}
	return nil
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
func (inv *inventoryRun) judgeBroad() error {
	inv.judged = map[string]judgment{}
	for i := range inv.snaps {
		k := &inv.snaps[i]
		if k.report == nil {
			rep, err := pipeline.Diagnose(k.s, inv.policyOf(k.s).Sensitivity())
			if err != nil {
				return fmt.Errorf("diagnose %s: %w", k.s.AppName(), err)
			}
			k.report = rep
		}
		for _, f := range k.report.Findings {
			if f.Cause != drift.CauseBroadIgnore || len(f.Evidence) == 0 {
				continue
			}
			inv.judged[RuleAt(f.Resource, f.Path)] = judge(f.Evidence)
		}
	}
	return nil
}

func (inv *inventoryRun) policyOf(s *drift.Snapshot) config.Policy {
	app := s.Application
	return inv.cfg.For(drift.Str(app, "spec", "project"), drift.Str(app, "metadata", "name"), drift.Str(app, "metadata", "namespace"))
}

// snapOf is the snapshot of the Application that holds a rule.
func (inv *inventoryRun) snapOf(h drift.Ref) *inventorySnap {
	for i := range inv.snaps {
		if drift.RefOf(inv.snaps[i].s.Application) == h {
			return &inv.snaps[i]
		}
	}
	return nil
}

// fileOf is the file that declares a rule, as a pull request changes it
// (nil when driftfix cannot change it).
func (inv *inventoryRun) fileOf(r *ignores.Rule) *ruleFile {
	if r.Declared.Holder.Kind == "Application" {
		if r.Declared.File == "" {
			return nil
		}
		f := &ruleFile{repo: r.Declared.Repo, file: r.Declared.File, base: "HEAD"}
		for _, k := range inv.snaps {
			if srcs := drift.Sources(k.s.Application); len(srcs) > 0 && srcs[0].RepoURL == f.repo && srcs[0].TargetRevision != "" {
				f.base = srcs[0].TargetRevision
				break
			}
		}
		return f
	}
	repo, ok := inv.cfg.Platform(inv.in.Name)
	if !ok {
		return nil
	}
	return &ruleFile{repo: repo.URL, file: repo.File, base: repo.Branch, cm: true}
}

func (inv *inventoryRun) fileKey(f *ruleFile) string {
	h := sha256.New()
	for _, s := range []string{inv.in.Name, f.repo, f.file} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// file is the pull request's file of a rule, one per file (nil when
// driftfix cannot change it).
func (inv *inventoryRun) file(files map[string]*ruleFile, r *ignores.Rule) *ruleFile {
	f := inv.fileOf(r)
	if f == nil {
		return nil
	}
	k := inv.fileKey(f)
	if files[k] == nil {
		files[k] = f
	}
	return files[k]
}

// addRemoval adds a stale rule to the pull request of its file; a rule
// driftfix cannot remove is said to be left for a person.
func (inv *inventoryRun) addRemoval(files map[string]*ruleFile, r *ignores.Rule) {
	name := holderText(r.Declared.Holder) + " " + r.Declared.Key
	switch {
	case r.ArgoCDDefault != "":
		return // Argo CD's own rule (the inventory never calls it stale; kept out here too)
	case r.Kind == ignores.KindCompareOption:
		inv.res.Skipped = append(inv.res.Skipped, fmt.Sprintf("ignore rule %s hides nothing: it is a compare option of argocd-cm; change it by hand", name))
		return
	case r.Declared.Holder.Kind != "Application" && (len(r.At()) != 2 || r.At()[0] != "data" ||
		!(strings.HasPrefix(r.At()[1], "resource.customizations.ignoreDifferences.") || strings.HasPrefix(r.At()[1], "resource.customizations.ignoreResourceUpdates."))):
		inv.res.Skipped = append(inv.res.Skipped, fmt.Sprintf("ignore rule %s hides nothing: it shares its argocd-cm key with other rules; remove it by hand", name))
		return
	}
	f := inv.file(files, r)
	if f == nil {
		why := r.Declared.NotInGit
		if r.Declared.Holder.Kind != "Application" {
			why = "no platformRepos entry names the file that declares argocd-cm"
		}
		inv.res.Skipped = append(inv.res.Skipped, fmt.Sprintf("ignore rule %s hides nothing: %s; remove it by hand", name, why))
		return
	}
	f.remove = append(f.remove, r)
}

// addNarrowing plans the narrow-ignore fix of a broad rule: at most one per
// file, the others wait for it. A stuck application's own fixes may plan
// it too; that one is held back while this pull request is open.
func (inv *inventoryRun) addNarrowing(files map[string]*ruleFile, r *ignores.Rule) {
	if r.Declared.Holder.Kind != "Application" {
		return // an argocd-cm rule is narrowed by hand; the digest says it is broad
	}
	k := inv.snapOf(r.Declared.Holder)
	if k == nil || inv.in.RepoFiles == nil {
		return
	}
	f := inv.file(files, r)
	if srcs := drift.Sources(k.s.Application); f == nil || f.narrow != nil || len(srcs) == 0 || srcs[0].RepoURL != f.repo {
		return // the manifest is not in the application's own repository, which the remedy edits
	}
	pol := inv.policyOf(k.s)
	fo := pipeline.FixOptions{Sensitivity: pol.Sensitivity(), Now: inv.now, Render: RenderLimits(inv.cfg.Limits), Decide: pol.Decide}
	_, plans, err := pipeline.FixWith(k.s, remediations.RepoFromSnapshot(k.s), fo)
	if err != nil {
		inv.res.Errors = append(inv.res.Errors, fmt.Errorf("application %s: %w", k.s.AppName(), err))
		return
	}
	for _, p := range plans {
		if p.Kind != drift.FixNarrowIgnore || p.Dropped != "" || len(p.Edits) != 1 || p.Edits[0].File != f.file || len(p.Findings) == 0 || p.Findings[0].Path.String() != r.At().String() {
			continue
		}
		f.narrow = &narrowing{rule: r, app: drift.Str(k.s.Application, "metadata", "name"), plan: p}
		return
	}
}

// plan edits one file and verifies the change; a change that is not
// proposed comes back with why.
func (inv *inventoryRun) plan(ctx context.Context, f *ruleFile) (IgnorePR, string, error) {
	if len(f.remove) == 0 && f.narrow == nil {
		return IgnorePR{}, "", nil
	}
	if inv.in.BranchFiles == nil {
		return IgnorePR{}, "the repository cannot be read (no Git access configured)", nil
	}
	base := f.base
	if base == "" {
		base = "HEAD"
	}
	files, _, err := inv.in.BranchFiles(ctx, f.repo, base)
	if err != nil {
		return IgnorePR{}, "", fmt.Errorf("read %s: %w", f.repo, err)
	}
	src, ok := files[f.file]
	if !ok {
		return IgnorePR{}, fmt.Sprintf("%s has no file %s", f.repo, f.file), nil
	}
	before := []byte(src)
	after := before
	var narrowed []string // Applications, with the index narrowed
	narrowAt := map[string]int{}
	if f.narrow != nil {
		e := f.narrow.plan.Edits[0]
		if string(e.Before) != src {
			return IgnorePR{}, f.file + " changed since the application's revision was read; narrowing waits for the next cycle", nil
		}
		after = e.After
		n, _ := strconv.Atoi(f.narrow.rule.At().Last())
		narrowAt[f.narrow.app] = n
		narrowed = append(narrowed, f.narrow.rule.Identity())
	}
	var removed []string
	if f.cm {
		var keys []string
		for _, r := range f.remove {
			keys = append(keys, r.At()[1])
			removed = append(removed, r.Identity())
		}
		if after, _, err = remediations.RemoveArgoCDCMKeys(f.file, after, keys); err != nil {
			return IgnorePR{}, "not proposed: " + err.Error(), nil
		}
	} else {
		byApp := map[string]map[int]any{}
		for _, r := range f.remove {
			k := inv.snapOf(r.Declared.Holder)
			if k == nil {
				continue
			}
			i, _ := strconv.Atoi(r.At().Last())
			rule := drift.List(k.s.Application, "spec", "ignoreDifferences")[i]
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
			if after, err = remediations.RemoveAppIgnoreRules(f.file, after, app, byApp[app]); err != nil {
				return IgnorePR{}, "not proposed: " + err.Error(), nil
			}
		}
	}
	verified, why, err := inv.verify(f)
	if err != nil || why != "" {
		return IgnorePR{}, why, err
	}
	if f.narrow != nil {
		verified += " The narrowed rule: " + f.narrow.plan.Verification
	}
	return inv.propose(f, before, after, verified, append(removed, narrowed...))
}

// verify re-diagnoses every application read without the rules removed
// (each Application without its own, all of them without argocd-cm's): no
// difference may be new, so no application becomes OutOfSync.
func (inv *inventoryRun) verify(f *ruleFile) (string, string, error) {
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
	for _, k := range inv.snaps {
		changed := *k.s
		if idx := gone[drift.RefOf(k.s.Application).String()]; idx != nil {
			app := drift.DeepCopy(k.s.Application).(map[string]any)
			var kept []any
			for i, r := range drift.List(app, "spec", "ignoreDifferences") {
				if !idx[i] {
					kept = append(kept, r)
				}
			}
			drift.Map(app, "spec")["ignoreDifferences"] = kept
			changed.Application = app
		} else if len(keys) > 0 {
			changed.Cluster = withoutArgoCDCMKeys(k.s.Cluster, keys)
		} else {
			continue
		}
		sens := inv.policyOf(k.s).Sensitivity()
		before, err := pipeline.Diagnose(k.s, sens)
		if err != nil {
			return "", "", err
		}
		after, err := pipeline.Diagnose(&changed, sens)
		if err != nil {
			return "", fmt.Sprintf("%s: re-diagnosing without the rules failed: %v", k.s.AppName(), err), nil
		}
		had := map[string]bool{}
		for _, f := range before.Findings {
			had[findingID(f)] = true
		}
		for _, f := range after.Findings {
			if !had[findingID(f)] && f.Cause != drift.CauseBroadIgnore {
				return "", fmt.Sprintf("%s: without the rules %s %s differs (%s); they hide something after all", k.s.AppName(), f.Resource, f.Path, f.Cause), nil
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

// propose turns a verified change into its pull request.
func (inv *inventoryRun) propose(f *ruleFile, before, after []byte, verified string, rules []string) (IgnorePR, string, error) {
	if string(before) == string(after) {
		return IgnorePR{}, "the file already has the change; waiting for Argo CD to read it", nil
	}
	key := inv.fileKey(f)
	h := sha256.New()
	for _, s := range []string{key, f.repo, f.file, string(after)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	fp := hex.EncodeToString(h.Sum(nil))[:12]
	v := templates.IgnorePRView{Instance: inv.in.Name, Repo: f.repo, File: f.file, StaleAfterDays: int(inv.cfg.Policy.IgnoreRules.Stale() / (24 * time.Hour)),
		Diff: remediations.UnifiedDiff(f.file, before, after), Verification: verified, Fingerprint: fp}
	line := func(r *ignores.Rule) templates.IgnoreLine {
		l := templates.IgnoreLine{Holder: holderText(r.Declared.Holder), Key: r.Declared.Key, Stale: r.Stale}
		if r.Declared.Line > 0 {
			l.Where = r.Declared.File + ":" + strconv.Itoa(r.Declared.Line)
		}
		return l
	}
	for _, r := range f.remove {
		v.Removed = append(v.Removed, line(r))
	}
	if f.narrow != nil {
		l := line(f.narrow.rule)
		j := inv.judged[RuleAt(f.narrow.rule.Declared.Holder, f.narrow.rule.At())]
		l.Broad, l.NarrowSensitive = j.broad, j.sensitive
		v.Narrowed = []templates.IgnoreLine{l}
		v.NarrowWhy, v.NarrowRisk = f.narrow.plan.Rationale.Why, f.narrow.plan.Rationale.Risk
	}
	var holds []string
	for _, r := range f.remove {
		holds = append(holds, RuleAt(r.Declared.Holder, r.At()))
	}
	if f.narrow != nil {
		holds = append(holds, RuleAt(f.narrow.rule.Declared.Holder, f.narrow.rule.At()))
	}
	pol := inv.cfg.Policy
	return IgnorePR{Instance: inv.in.Name, Key: key, Fingerprint: fp, RepoURL: f.repo, Base: f.base,
		Branch: IgnoreBranch(pol.BranchPrefix, inv.in.Name, key), Title: templates.IgnorePRTitle(v),
		Body: templates.IgnorePRBody(v) + IgnoreMarker(key), Policy: pol, File: f.file, Before: before, After: after, Rules: rules, Holds: holds}, "", nil
}

// RuleAt names a rule by its holder and place, as a narrow-ignore finding
// names it (its resource and path).
func RuleAt(holder drift.Ref, at drift.Pointer) string {
	return holder.String() + "\x00" + at.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
