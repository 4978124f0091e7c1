// Package ignores takes the inventory of every ignore rule that is active
// across a set of application snapshots: where each rule is declared, what
// it applies to, what it hides right now, whether it covers a sensitive
// path, and which rules hide nothing. It judges rules with the diff's own
// evaluator (diff.Compare, diff.RuleCovers) and does no I/O: the commit that
// added a rule comes from an Origin function the caller gives.
package ignores

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
)

// Rule kinds, as the report names them.
const (
	KindIgnoreDifferences     = "ignoreDifferences"
	KindIgnoreResourceUpdates = "ignoreResourceUpdates"
	KindCompareOption         = "compareOption"
)

// maxValue is how many characters of a Git or live value the report shows.
const maxValue = 60

// Report is the inventory of the ignore rules active in a set of snapshots.
type Report struct {
	// Applications are the applications read, as namespace/name.
	Applications []string `json:"applications"`
	Rules        []Rule   `json:"rules"`
	// Stale counts the rules that hide nothing now in any application.
	Stale int `json:"stale"`
	// Sensitive counts the rules that cover a sensitive path.
	Sensitive int `json:"sensitive"`
}

// Rule is one active rule and what it does right now.
type Rule struct {
	Kind     string   `json:"kind"`
	Declared Declared `json:"declared"`
	// Scope is what the rule selects: group, kind, name and namespace
	// ("*" for any group or kind; empty name or namespace for any).
	Scope                 Scope    `json:"scope"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
	// Option and Value are a resource.compareoptions setting.
	Option string `json:"option,omitempty"`
	Value  string `json:"value,omitempty"`
	// Effect says what the rule does to what it covers.
	Effect string `json:"effect"`
	// Applications are those with at least one resource the rule applies to.
	Applications []string   `json:"applications"`
	Resources    []Resource `json:"resources"`
	// Hides counts the differences the rule hides now, over every resource
	// (none for ignoreResourceUpdates: it hides nothing from the diff).
	Hides int `json:"hides"`
	// Stale says the rule hides nothing now in any application read;
	// StaleWhy says how that is known.
	Stale    bool   `json:"stale"`
	StaleWhy string `json:"staleWhy,omitempty"`
	// Sensitive lists the sensitive paths the rule covers.
	Sensitive []Sensitive `json:"sensitive,omitempty"`
	// ArgoCDDefault is, for a rule Argo CD ships in its own argocd-cm
	// (argocd-defaults.yaml), the file it ships in. Such a rule is never
	// stale and never proposed for removal.
	ArgoCDDefault string `json:"argocdDefault,omitempty"`

	at      drift.Pointer // where the rule sits in its holder
	content string        // the repository file that declares it
}

// Scope is what a rule selects.
type Scope struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Declared is where a rule is declared: its holder (the Application or
// argocd-cm) and key, the file and line in Git when the holder's manifest is
// among the repository files, and the commit that added it when the
// repository's history is known.
type Declared struct {
	Holder drift.Ref `json:"holder"`
	// Key is where the rule sits in its holder:
	// spec.ignoreDifferences[0], data.resource.customizations.ignoreDifferences.all.
	Key string `json:"key"`
	// Repo, File and Line are where Git declares the rule: the repository
	// (of the application whose files hold it), the file and the line.
	Repo string `json:"repo,omitempty"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// NotInGit says why no file and line are given.
	NotInGit string `json:"notInGit,omitempty"`
	// Commit and Added are the commit that added the rule's first line and
	// its commit time; AgeDays is the whole days since then.
	Commit  string     `json:"commit,omitempty"`
	Added   *time.Time `json:"added,omitempty"`
	AgeDays *int       `json:"ageDays,omitempty"`
	// CommitUnknown says why the commit is not known.
	CommitUnknown string `json:"commitUnknown,omitempty"`
}

// Resource is one resource a rule applies to, and what the rule covers there.
type Resource struct {
	Application string    `json:"application"`
	Resource    drift.Ref `json:"resource"`
	Paths       []Path    `json:"paths"`
}

// Path is one place where a rule removes a value from the comparison now.
// Differs says Git and live differ there, so without the rule Argo CD would
// report it; the two values are then kept (JSON: "git" and "live", left out
// on a side that lacks the path) except in a Secret, whose values are never
// shown ("masked": true).
type Path struct {
	Path    string
	Differs bool
	Git     any
	Live    any
	InGit   bool
	InLive  bool
	Masked  bool
}

// maxJSONValue is the longest value, as JSON, the JSON report writes whole;
// a longer one is written shortened, as a string.
const maxJSONValue = 1024

// MarshalJSON writes the path with its values as JSON values.
func (p Path) MarshalJSON() ([]byte, error) {
	out := struct {
		Path    string          `json:"path"`
		Differs bool            `json:"differs"`
		Git     json.RawMessage `json:"git,omitempty"`
		Live    json.RawMessage `json:"live,omitempty"`
		Masked  bool            `json:"masked,omitempty"`
	}{Path: p.Path, Differs: p.Differs, Masked: p.Masked}
	if p.Differs && !p.Masked {
		var err error
		if out.Git, err = jsonValue(p.Git, p.InGit); err != nil {
			return nil, err
		}
		if out.Live, err = jsonValue(p.Live, p.InLive); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a path as MarshalJSON writes it.
func (p *Path) UnmarshalJSON(b []byte) error {
	var in struct {
		Path    string          `json:"path"`
		Differs bool            `json:"differs"`
		Git     json.RawMessage `json:"git"`
		Live    json.RawMessage `json:"live"`
		Masked  bool            `json:"masked"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("read path: %w", err)
	}
	*p = Path{Path: in.Path, Differs: in.Differs, Masked: in.Masked, InGit: in.Git != nil, InLive: in.Live != nil}
	for _, side := range []struct {
		raw json.RawMessage
		dst *any
	}{{in.Git, &p.Git}, {in.Live, &p.Live}} {
		if side.raw != nil {
			if err := json.Unmarshal(side.raw, side.dst); err != nil {
				return fmt.Errorf("read path %s: %w", in.Path, err)
			}
		}
	}
	return nil
}

func jsonValue(v any, present bool) (json.RawMessage, error) {
	if !present {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode value: %w", err)
	}
	if len(raw) > maxJSONValue {
		return json.Marshal(drift.Brief(v, maxValue))
	}
	return raw, nil
}

// Values renders the two sides for a person: shortened, "(absent)" where a
// side lacks the path, "(secret)" in a Secret.
func (p Path) Values() (git, live string) {
	show := func(v any, in bool) string {
		switch {
		case !in:
			return "(absent)"
		case p.Masked:
			return "(secret)"
		}
		return drift.Brief(v, maxValue)
	}
	return show(p.Git, p.InGit), show(p.Live, p.InLive)
}

// Sensitive is a sensitive path a rule covers: in a resource it applies to
// now, or, for a rule that selects a kind, at a path of that kind.
type Sensitive struct {
	Application string     `json:"application,omitempty"`
	Resource    *drift.Ref `json:"resource,omitempty"`
	Path        string     `json:"path"`
	Why         string     `json:"why"`
}

// Origin is the commit that added a line of a repository file. Unknown says
// why it is not known (a depth-1 checkout, no history given, the file in the
// history differs from the snapshot's); Commit is then empty.
type Origin struct {
	Commit  string
	When    time.Time
	Unknown string
}

// Options tune an inventory.
type Options struct {
	// Sensitivity judges which covered paths are sensitive.
	Sensitivity drift.Sensitivity
	// Now dates the rules' ages.
	Now time.Time
	// Origin returns the commit that added line (1-based) of a file of the
	// repository, whose content is given. Nil: no history is known.
	Origin func(repo, file string, line int, content string) Origin
}

// ruleAcc gathers one rule across snapshots.
type ruleAcc struct {
	rule      Rule
	resources map[string]*Resource
	sensitive map[string]Sensitive
	// kindSensitive are sensitive paths the rule names for its kind,
	// reported when no resource it applies to shows one.
	kindSensitive map[string]Sensitive
	apps          map[string]bool
}

// Inventory takes the inventory of the rules active in the snapshots: the
// ignoreDifferences of each Application, and those of argocd-cm
// (ignoreDifferences, ignoreResourceUpdates and resource.compareoptions),
// counted once however many snapshots carry the same argocd-cm. Rules are
// sorted by holder and key.
func Inventory(snaps []*drift.Snapshot, opts Options) (*Report, error) {
	accs := map[string]*ruleAcc{}
	var order []string
	get := func(id string, r Rule) *ruleAcc {
		a, ok := accs[id]
		if !ok {
			a = &ruleAcc{rule: r, resources: map[string]*Resource{}, sensitive: map[string]Sensitive{}, kindSensitive: map[string]Sensitive{}, apps: map[string]bool{}}
			accs[id] = a
			order = append(order, id)
		}
		return a
	}
	rep := &Report{Applications: []string{}}
	seenApp := map[string]bool{}
	for _, s := range snaps {
		app := appName(s)
		if !seenApp[app] {
			seenApp[app] = true
			rep.Applications = append(rep.Applications, app)
		}
		if err := inventoryOne(s, app, opts, get); err != nil {
			return nil, fmt.Errorf("inventory application %s: %w", app, err)
		}
	}
	sort.Strings(rep.Applications)
	for _, id := range order {
		a := accs[id]
		r := a.rule
		for app := range a.apps {
			r.Applications = append(r.Applications, app)
		}
		sort.Strings(r.Applications)
		if r.Applications == nil {
			r.Applications = []string{}
		}
		r.Resources = []Resource{}
		for _, res := range a.resources {
			sort.Slice(res.Paths, func(i, j int) bool { return res.Paths[i].Path < res.Paths[j].Path })
			r.Resources = append(r.Resources, *res)
		}
		sort.Slice(r.Resources, func(i, j int) bool {
			x, y := r.Resources[i], r.Resources[j]
			if x.Application != y.Application {
				return x.Application < y.Application
			}
			return x.Resource.Less(y.Resource)
		})
		for _, res := range r.Resources {
			for _, p := range res.Paths {
				if p.Differs && r.Kind != KindIgnoreResourceUpdates {
					r.Hides++
				}
			}
		}
		for _, sv := range a.sensitive {
			r.Sensitive = append(r.Sensitive, sv)
		}
		if len(r.Sensitive) == 0 {
			for _, sv := range a.kindSensitive {
				r.Sensitive = append(r.Sensitive, sv)
			}
		}
		sort.Slice(r.Sensitive, func(i, j int) bool { return sensitiveKey(r.Sensitive[i]) < sensitiveKey(r.Sensitive[j]) })
		judgeStale(&r, len(rep.Applications))
		if r.Stale {
			rep.Stale++
		}
		if len(r.Sensitive) > 0 {
			rep.Sensitive++
		}
		rep.Rules = append(rep.Rules, r)
	}
	locate(snaps, rep.Rules)
	date(rep.Rules, opts)
	sort.SliceStable(rep.Rules, func(i, j int) bool { return ruleLess(&rep.Rules[i], &rep.Rules[j]) })
	if rep.Rules == nil {
		rep.Rules = []Rule{}
	}
	return rep, nil
}

// judgeStale marks a rule that hides nothing now, and says how that is known.
func judgeStale(r *Rule, apps int) {
	switch {
	case r.Kind == KindCompareOption && r.Option == optUpdatesOnDiff:
		return // it changes when Argo CD refreshes, not what it compares
	case r.ArgoCDDefault != "":
		return // Argo CD's own: not the user's to remove, whatever it covers now
	case r.Kind == KindIgnoreResourceUpdates:
		covered := 0
		for _, res := range r.Resources {
			covered += len(res.Paths)
		}
		if covered > 0 {
			return
		}
		r.Stale = true
	case r.Hides > 0:
		return
	default:
		r.Stale = true
	}
	switch {
	case len(r.Resources) == 0:
		r.StaleWhy = fmt.Sprintf("hides nothing now: it applies to no resource of the %d %s read", apps, plural(apps, "application", "applications"))
	case r.Kind == KindIgnoreResourceUpdates:
		r.StaleWhy = fmt.Sprintf("saves no refresh now: none of the paths it names exists in the %d %s it applies to (it never hides a difference)", len(r.Resources), plural(len(r.Resources), "resource", "resources"))
	default:
		r.StaleWhy = fmt.Sprintf("hides nothing now: Argo CD would see no difference at any path it covers in the %d %s it applies to", len(r.Resources), plural(len(r.Resources), "resource", "resources"))
	}
}

func inventoryOne(s *drift.Snapshot, app string, opts Options, get func(string, Rule) *ruleAcc) error {
	cmp, settings, err := diff.Compare(s)
	if err != nil {
		return err
	}
	diff.CoverManagedFields(s, cmp)
	for ri := range cmp.Rules {
		dr := &cmp.Rules[ri]
		r := baseRule(dr, KindIgnoreDifferences)
		r.Effect = "Argo CD does not compare what it covers: a change there never makes the application OutOfSync"
		a := get(ruleID(dr, KindIgnoreDifferences), r)
		hidden := map[int][]*drift.Difference{}
		for _, di := range dr.Hidden {
			d := &cmp.Diffs[di]
			hidden[d.Index] = append(hidden[d.Index], d)
		}
		for _, cov := range dr.Covered {
			addCovered(a, s, app, cov.Index, cov.Paths, hidden[cov.Index], settings, opts.Sensitivity)
		}
		kindSensitive(a, dr, opts.Sensitivity)
	}
	upd, err := diff.ReadResourceUpdateRules(s.Cluster)
	if err != nil {
		return err
	}
	for ui := range upd {
		ur := &upd[ui]
		r := baseRule(ur, KindIgnoreResourceUpdates)
		r.Effect = "a change to what it covers does not make Argo CD refresh the application; the diff still shows it at the next refresh"
		a := get(ruleID(ur, KindIgnoreResourceUpdates), r)
		for i := range s.Resources {
			res := &s.Resources[i]
			if !diff.RuleApplies(ur, res.Ref()) {
				continue
			}
			covered := diff.RuleCovers(ur, res)
			addCovered(a, s, app, i, covered, visibleUnder(cmp, i, covered), settings, opts.Sensitivity)
		}
		// It hides nothing from the diff, so no path it names is a
		// sensitive one it hides: the next refresh shows what changed there.
		clear(a.sensitive)
	}
	return compareOptions(s, app, cmp, opts.Sensitivity, get)
}

// visibleUnder returns the differences of resource idx that the diff shows
// at or beneath one of the covered paths: what an ignoreResourceUpdates
// rule covers. Such a rule hides none of them; a later change there only
// waits for the next refresh.
func visibleUnder(cmp *drift.Comparison, idx int, covered []drift.Pointer) []*drift.Difference {
	var out []*drift.Difference
	for di := range cmp.Diffs {
		d := &cmp.Diffs[di]
		if d.Index != idx || len(d.HiddenBy) > 0 {
			continue
		}
		for _, c := range covered {
			if d.Path.Related(c) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// baseRule copies what a rule declares.
func baseRule(r *drift.IgnoreRule, kind string) Rule {
	return Rule{
		Kind:         kind,
		Declared:     Declared{Holder: r.Holder, Key: keyOf(r.Path)},
		at:           r.Path,
		Scope:        Scope{Group: r.Group, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace},
		JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions,
		ManagedFieldsManagers: r.ManagedFieldsManagers,
		ArgoCDDefault:         shippedDefault(r),
	}
}

// ruleID identifies a rule across snapshots: an Application's rule by the
// Application and index, an argocd-cm rule by its key and what it says.
func ruleID(r *drift.IgnoreRule, kind string) string {
	return strings.Join([]string{kind, r.Holder.String(), r.Path.String(), r.Group, r.Kind,
		strings.Join(r.JSONPointers, "\x00"), strings.Join(r.JQPathExpressions, "\x00"), strings.Join(r.ManagedFieldsManagers, "\x00")}, "\x01")
}

// addCovered records, for one resource a rule applies to, the paths it
// covers that hold a value now: each difference it hides (differs), and
// each covered path where Git and live agree. Status is left out where Argo
// CD never compares it anyway.
func addCovered(a *ruleAcc, s *drift.Snapshot, app string, idx int, covered []drift.Pointer, diffs []*drift.Difference, settings drift.Settings, sens drift.Sensitivity) {
	res := &s.Resources[idx]
	ref := res.Ref()
	a.apps[app] = true
	key := app + "\x00" + ref.String() + "\x00" + ref.Group
	rr, ok := a.resources[key]
	if !ok {
		rr = &Resource{Application: app, Resource: ref, Paths: []Path{}}
		a.resources[key] = rr
	}
	have := map[string]bool{}
	for _, p := range rr.Paths {
		have[p.Path] = true
	}
	add := func(p Path) {
		if !have[p.Path] {
			have[p.Path] = true
			rr.Paths = append(rr.Paths, p)
		}
	}
	secret := ref.Kind == "Secret" && ref.Group == ""
	for _, d := range diffs {
		if d.Unexplained {
			continue
		}
		p := Path{Path: d.Path.String(), Differs: true, InGit: d.InGit, InLive: d.InLive, Masked: secret}
		if !secret {
			p.Git, p.Live = d.Git, d.Live
			gp := d.GitPath
			if gp == nil {
				gp = d.Path
			}
			if v, ok := gp.Get(res.Target); ok && d.InGit {
				p.Git = v // as Git writes it, not as compared
			}
		}
		add(p)
	}
	builtin := isBuiltinGroup(ref.Group)
	for _, c := range covered {
		if statusIgnored(c, builtin, settings) || (len(c) >= 2 && c[0] == "metadata" && c[1] == "managedFields") {
			continue
		}
		_, inGit := c.Get(res.Target)
		_, inLive := c.Get(res.Live)
		if inGit || inLive {
			related := false
			for _, d := range diffs {
				related = related || (!d.Unexplained && d.Path.Related(c))
			}
			if !related {
				add(Path{Path: c.String()})
			}
		}
		if why, bad := sens.Hides(ref, c, nil, res.Target, res.Live); bad {
			sv := Sensitive{Application: app, Resource: &ref, Path: c.String(), Why: why}
			a.sensitive[sensitiveKey(sv)] = sv
		}
	}
}

// kindSensitive flags a rule whose jsonPointers name a sensitive path of the
// kind it selects, whether or not a resource of that kind exists now: the
// rule would hide it as soon as one does.
func kindSensitive(a *ruleAcc, r *drift.IgnoreRule, sens drift.Sensitivity) {
	if r.Kind == "" || r.Kind == "*" {
		return
	}
	for _, s := range r.JSONPointers {
		p, err := drift.ParsePointer(s)
		if err != nil {
			continue
		}
		if field, why, ok := sens.Check(r.Kind, p, nil); ok {
			sv := Sensitive{Path: p.String(), Why: fmt.Sprintf("%s of every %s it selects is a sensitive field (%s)", field, r.Kind, why)}
			a.kindSensitive[sensitiveKey(sv)] = sv
		}
	}
}

// statusIgnored reports whether Argo CD never compares p anyway
// (ignoreResourceStatusField), so no rule is what hides it.
func statusIgnored(p drift.Pointer, builtin bool, s drift.Settings) bool {
	if len(p) == 0 || p[0] != "status" {
		return false
	}
	switch s.StatusIgnore {
	case "none":
		return false
	case "crd":
		return !builtin
	}
	return true
}

// isBuiltinGroup says whether a group is one of Kubernetes' own API groups
// (the core group, *.k8s.io and the unsuffixed built-in groups).
func isBuiltinGroup(g string) bool {
	switch g {
	case "", "apps", "batch", "autoscaling", "policy":
		return true
	}
	return strings.HasSuffix(g, ".k8s.io")
}

func sensitiveKey(s Sensitive) string {
	r := ""
	if s.Resource != nil {
		r = s.Resource.Group + "/" + s.Resource.String()
	}
	return s.Application + "\x00" + r + "\x00" + s.Path
}

// keyOf renders a rule's place in its holder: spec.ignoreDifferences[0],
// data.resource.customizations.ignoreDifferences.all.
func keyOf(p drift.Pointer) string {
	var b strings.Builder
	for i, tok := range p {
		if isIndex(tok) && i > 0 {
			fmt.Fprintf(&b, "[%s]", tok)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func appName(s *drift.Snapshot) string {
	ref := drift.RefOf(s.Application)
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// ruleLess orders rules by holder (Applications before argocd-cm), key and
// scope.
func ruleLess(a, b *Rule) bool {
	ha, hb := a.Declared.Holder, b.Declared.Holder
	if ha != hb {
		if (ha.Kind == "Application") != (hb.Kind == "Application") {
			return ha.Kind == "Application"
		}
		return ha.Less(hb)
	}
	if ka, kb := keyOrder(a.Declared.Key), keyOrder(b.Declared.Key); ka != kb {
		return ka < kb
	}
	if a.Declared.Key != b.Declared.Key {
		return a.Declared.Key < b.Declared.Key
	}
	if a.Scope.Group+"/"+a.Scope.Kind != b.Scope.Group+"/"+b.Scope.Kind {
		return a.Scope.Group+"/"+a.Scope.Kind < b.Scope.Group+"/"+b.Scope.Kind
	}
	return a.Option < b.Option
}

// keyOrder sorts spec.ignoreDifferences[10] after [9].
func keyOrder(k string) string {
	if i := strings.IndexByte(k, '['); i >= 0 && strings.HasSuffix(k, "]") {
		return fmt.Sprintf("%s[%08s]", k[:i], k[i+1:len(k)-1])
	}
	return k
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// At is where the rule sits in its holder: /spec/ignoreDifferences/0,
// /data/resource.customizations.ignoreDifferences.all.
func (r *Rule) At() drift.Pointer { return r.at }

// Identity names the rule across cycles by its holder and what it says,
// not by its place: a rule moved within its list keeps its identity, one
// whose content changes is another rule.
func (r *Rule) Identity() string {
	h := sha256.New()
	for _, s := range []string{r.Kind, r.Declared.Holder.Group, r.Declared.Holder.Kind, r.Declared.Holder.Namespace, r.Declared.Holder.Name,
		r.Scope.Group, r.Scope.Kind, r.Scope.Name, r.Scope.Namespace, strings.Join(r.JSONPointers, "\x00"),
		strings.Join(r.JQPathExpressions, "\x00"), strings.Join(r.ManagedFieldsManagers, "\x00"), r.Option, r.Value} {
		h.Write([]byte(s))
		h.Write([]byte{1})
	}
	if r.Declared.Holder.Kind != "Application" {
		h.Write([]byte(r.Declared.Key)) // an argocd-cm rule is its key's
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// HasSystemRules reports whether argocd-cm among the cluster objects holds
// a rule that can apply to every application (an argocd-cm it cannot read
// counts: the inventory reports it).
func HasSystemRules(cluster []drift.Object) bool {
	_, rules, err := diff.ReadSettings(cluster)
	if err != nil || len(rules) > 0 {
		return true
	}
	if upd, err := diff.ReadResourceUpdateRules(cluster); err != nil || len(upd) > 0 {
		return true
	}
	for _, o := range cluster {
		if drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm" && strings.TrimSpace(drift.Str(o, "data", "resource.compareoptions")) != "" {
			return true
		}
	}
	return false
}
