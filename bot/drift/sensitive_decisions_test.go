package drift

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// decisionCase is one question put to the safety model: is path p of ref
// sensitive, and, when it comes from a snapshot, would a fix there go ahead.
type decisionCase struct {
	ref          Ref
	p            Pointer
	target, live Object // set for a path of a snapshot's resource
}

// decisionSources are the snapshots whose every path is a case: this
// package's (copies of cases under testdata/cases with webhooks, CA bundles,
// RBAC, Secrets, sidecars and ignore rules), and the shared fixtures when
// they are present beside the worktree.
var decisionSources = []string{"testdata/snapshots/*.yaml", "../../../shared/fixtures/*.yaml"}

// generatedCases returns the cases: every table entry's pattern made
// concrete in every kind it names, in any group and in look-alike custom
// resources, its parents and children, and every path of every object of
// the snapshots. Each source's cases come under its own name.
func generatedCases(t *testing.T) map[string][]decisionCase {
	t.Helper()
	out := map[string][]decisionCase{"table": tableCases()}
	for _, glob := range decisionSources {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if strings.HasSuffix(f, ".expected.yaml") {
				continue
			}
			s, err := LoadSnapshot(f)
			if err != nil {
				continue // not a snapshot (an expectation, a README)
			}
			var cs []decisionCase
			for i := range s.Resources {
				r := &s.Resources[i]
				ref := r.Ref()
				seen := map[string]bool{}
				for _, o := range []Object{r.Target, r.Live} {
					walkPaths(o, nil, func(p Pointer) {
						if k := p.String(); !seen[k] {
							seen[k] = true
							cs = append(cs, decisionCase{ref: ref, p: append(Pointer{}, p...), target: r.Target, live: r.Live})
						}
					})
				}
			}
			out[filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f))] = cs
		}
	}
	return out
}

func walkPaths(v any, at Pointer, visit func(Pointer)) {
	if len(at) > 0 {
		visit(at)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range SortedKeys(x) {
			if len(at) == 0 && k == "metadata" {
				// metadata's bookkeeping (managedFields) is no path a fix
				// touches; its labels and annotations are.
				md := Map(x, "metadata")
				visit(Pointer{"metadata"})
				for _, mk := range []string{"labels", "annotations", "name"} {
					if mv, ok := md[mk]; ok {
						walkPaths(mv, Pointer{"metadata", mk}, visit)
					}
				}
				continue
			}
			walkPaths(x[k], at.Child(k), visit)
		}
	case []any:
		for i, e := range x {
			walkPaths(e, at.Index(i), visit)
		}
	}
}

// tableCases makes each entry's pattern concrete in the kinds it names,
// in any group, in look-alike custom resources and in other objects, with
// its parents and children.
func tableCases() []decisionCase {
	lookalikes := []Ref{
		{Group: "*", Kind: "Deployment"}, {Group: "*", Kind: "ConfigMap"}, {Group: "*", Kind: "Service"}, {Group: "*", Kind: "Rollout"},
		{Group: "apps.kruise.io", Kind: "StatefulSet", Name: "s"}, {Group: "serving.knative.dev", Kind: "Service", Name: "s"},
		{Group: "argoproj.io", Kind: "Rollout", Name: "r"}, {Group: "example.com", Kind: "Memcached", Name: "m"},
		{Kind: "ConfigMap", Namespace: "argocd", Name: "other-cm"}, {Group: "constraints.gatekeeper.sh", Kind: "K8sAllowedRepos", Name: "c"},
	}
	var out []decisionCase
	seen := map[string]bool{}
	defer func() {
		sort.SliceStable(out, func(a, b int) bool {
			return out[a].ref.String()+out[a].ref.Group < out[b].ref.String()+out[b].ref.Group
		})
	}()
	add := func(refs []Ref, full Pointer) {
		var ps []Pointer
		for n := 1; n <= len(full); n++ {
			ps = append(ps, full[:n])
		}
		ps = append(ps, append(append(Pointer{}, full...), "x"), append(append(Pointer{}, full...), "0", "image"))
		for _, r := range refs {
			for _, p := range ps {
				k := r.String() + "\x00" + r.Group + "\x00" + p.String()
				if !seen[k] {
					seen[k] = true
					out = append(out, decisionCase{ref: r, p: append(Pointer{}, p...)})
				}
			}
		}
	}
	for i := range builtin.paths {
		e := &builtin.paths[i]
		refs := append([]Ref{}, lookalikes...)
		for _, sc := range e.Scopes {
			if !sc.Pod && !sc.Custom {
				g, k := sc.Group, sc.Kind
				if g == "*" {
					g = "example.com"
				}
				if k == "*" {
					k = "Anything"
				}
				refs = append(refs, Ref{Group: g, Kind: k, Name: e.Name + "x"}, Ref{Group: g, Kind: k, Name: e.Name}, Ref{Group: "*", Kind: k})
			}
		}
		if e.Field != "" {
			for _, base := range []string{"/spec", "/spec/x/0", "/metadata/labels", "/status", "/data"} {
				add(refs, append(MustPointer(base), e.Field))
			}
			continue
		}
		if !e.inScope(func(c Scope) bool { return c.Pod }) {
			for _, c := range concrete(e.Pattern) {
				add(refs, c)
			}
			continue
		}
		for _, ps := range builtin.podSpecs {
			base := ps.at
			kindRefs := lookalikes
			if !ps.scope.Custom {
				kindRefs = []Ref{{Group: ps.scope.Group, Kind: ps.scope.Kind, Name: "w"}, {Group: "*", Kind: ps.scope.Kind}}
			}
			pat := e.Pattern
			if len(pat) > 0 && pat[0] == "metadata" {
				base = append(append(Pointer{}, base[:len(base)-1]...), "metadata")
				pat = pat[1:]
			}
			for _, c := range concrete(pat) {
				add(kindRefs, append(append(Pointer{}, base...), c...))
			}
		}
	}
	return out
}

// concrete turns a pattern into paths it matches: "*" as an index (and as
// a key at the end), each alternative of "a|b", "prefix*" with a suffix, and
// a near miss of the last step.
func concrete(pat Pointer) []Pointer {
	out := []Pointer{{}}
	for i, tok := range pat {
		last := i == len(pat)-1
		var alts []string
		for _, a := range strings.Split(tok, "|") {
			switch {
			case a == "*":
				alts = append(alts, "0")
				if last {
					alts = append(alts, "web")
				}
			case strings.HasSuffix(a, "*"):
				alts = append(alts, strings.TrimSuffix(a, "*")+"web")
			default:
				alts = append(alts, a)
				if last {
					alts = append(alts, a+"-note")
				}
			}
		}
		var next []Pointer
		for _, o := range out {
			for _, a := range alts {
				next = append(next, append(append(Pointer{}, o...), a))
			}
		}
		out = next
	}
	return out
}

// judge is the safety model's answers to one case, written as one line.
type judge struct {
	within  func(Ref, Pointer) (path Pointer, reason, what string, whole, ok bool)
	check   func(Ref, Pointer, Object) (Pointer, string, bool)
	hides   func(Ref, Pointer, Object, Object) (string, bool)
	refuses func(FixKind, *Finding, Object, Object) (string, bool)
	// brief leaves out the sentences users read (what a path controls, why
	// a fix is refused), which the golden files need not repeat.
	brief bool
}

func newJudge(s Sensitivity) judge {
	return judge{
		within: func(r Ref, p Pointer) (Pointer, string, string, bool, bool) {
			m, ok := s.Within(r, p)
			return m.Path, m.Reason, m.What, m.entry != nil && m.entry.Whole, ok
		},
		check:   s.CheckRef,
		hides:   func(r Ref, p Pointer, tg, lv Object) (string, bool) { return s.Hides(r, p, nil, tg, lv) },
		refuses: s.Refuse,
	}
}

var judgedFixes = []FixKind{FixRemoveField, FixSetValue, FixPinHelmValue, FixAdoptLive, FixIgnoreDifference}

func (j judge) line(c decisionCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", c.p)
	if path, reason, what, whole, ok := j.within(c.ref, c.p); ok {
		if j.brief {
			fmt.Fprintf(&b, " within %s (%s)", path, reason)
		} else {
			fmt.Fprintf(&b, " within %s (%s: %s)", path, reason, what)
		}
		if whole {
			b.WriteString(" whole")
		}
	} else {
		b.WriteString(" not within")
	}
	if c.target == nil && c.live == nil {
		j.exact(&b, c)
		return b.String()
	}
	if f, why, ok := j.check(c.ref, c.p, c.target); ok {
		fmt.Fprintf(&b, "; check %s %s", f, why)
	}
	if why, ok := j.hides(c.ref, c.p, c.target, c.live); ok {
		if j.brief {
			why = ""
		}
		fmt.Fprintf(&b, "; hides %s", why)
	}
	gv, inGit := c.p.Get(c.target)
	lv, inLive := c.p.Get(c.live)
	f := Finding{Resource: c.ref, Path: c.p, Git: gv, InGit: inGit, Live: lv, InLive: inLive}
	for _, k := range judgedFixes {
		if why, ok := j.refuses(k, &f, c.target, c.live); ok {
			if j.brief {
				fmt.Fprintf(&b, "; refuses %s", k)
			} else {
				fmt.Fprintf(&b, "; refuses %s: %s", k, why)
			}
		}
	}
	return b.String()
}

// hiddenSamples are live values an entry's hidden check judges.
var hiddenSamples = []any{nil, true, false, "", "x", "Bidirectional", "unconfined", "Default", "false", 0, 1000,
	map[string]any{"privileged": true}, map[string]any{"runAsUser": 0}, map[string]any{"runAsNonRoot": true},
	map[string]any{"capabilities": map[string]any{"add": []any{"NET_ADMIN"}}}, map[string]any{"path": "/"},
	[]any{map[string]any{"name": "t", "mountPath": "/var/run/secrets/x"}}, []any{map[string]any{"name": "a", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k"}}}},
	[]any{map[string]any{"secretRef": map[string]any{"name": "s"}}}, map[string]any{"secretName": "s", "claimName": "c", "name": "n"},
	[]any{map[string]any{"name": "h", "mountPath": "/h", "mountPropagation": "Bidirectional"}}}

// exact adds, for a case at an entry's own path, how the entry judges
// content found only in live (one digit per hidden sample) and which fixes
// it still allows on an empty value Git declares, with and without an
// aggregationRule in Git.
func (j judge) exact(b *strings.Builder, c decisionCase) {
	path, _, _, _, ok := j.within(c.ref, c.p)
	if !ok || len(path) != len(c.p) {
		return
	}
	b.WriteString("; hidden ")
	for _, v := range hiddenSamples {
		lv := Object{}
		setAt(lv, c.p, v)
		if _, bad := j.hides(c.ref, c.p[:len(c.p)-1], nil, lv); bad {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	agg := Object{"aggregationRule": map[string]any{"clusterRoleSelectors": []any{map[string]any{}}}}
	for _, tg := range []Object{nil, agg} {
		for _, k := range []FixKind{FixRemoveField, FixPinHelmValue} {
			f := Finding{Resource: c.ref, Path: c.p, InGit: true, Git: "", InLive: true, Live: "x"}
			if _, refused := j.refuses(k, &f, tg, nil); !refused {
				fmt.Fprintf(b, "; allows %s", k)
			}
		}
	}
}

// setAt places v at p in o, making maps on the way.
func setAt(o Object, p Pointer, v any) {
	m := map[string]any(o)
	for _, tok := range p[:len(p)-1] {
		next, ok := m[tok].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[tok] = next
		}
		m = next
	}
	m[p[len(p)-1]] = v
}

// policyExtra is a policy's sensitivePaths in the short form, judged with
// the table.
var policyExtra = []string{"/spec/template/spec/dnsConfig", "spec.template.spec.containers[].resources", "tolerations", "Deployment:/spec/paused", "apps/Deployment:spec.strategy", `ConfigMap:data.policy\.json`, "replicas"}

func newExtra(t *testing.T) []SensitivePath {
	var out []SensitivePath
	for _, s := range policyExtra {
		sp, err := ParseSensitivePath(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// decisionLines are the model's answers to every generated case, by source:
// the cases of one resource under a line naming it.
func decisionLines(t *testing.T, cases map[string][]decisionCase, j, withExtra judge) map[string][]string {
	out := map[string][]string{}
	for src, cs := range cases {
		var lines []string
		last := ""
		for _, c := range cs {
			if head := fmt.Sprintf("%s/%s %s", c.ref.Group, c.ref.Kind, c.ref.Name); head != last {
				lines = append(lines, head)
				last = head
			}
			l := j.line(c)
			lines = append(lines, "  "+l)
			if src == "table" {
				if w := withExtra.line(c); w != l {
					lines = append(lines, "    with policy: "+w)
				}
			}
		}
		out[src] = lines
	}
	return out
}

// TestSensitiveDecisions holds the safety model's answer to every generated
// case (the table's entries made concrete, every path of the snapshots) to
// the golden files under testdata/sensitive-decisions, written with -update
// and read before committing: a change to sensitive.yaml shows there as the
// decisions it changes. The goldens were first written when the table
// became data, by the commit whose TestSensitiveDecisionsMatchOldTable put
// every case to the Go table it replaced and found the same answers.
func TestSensitiveDecisions(t *testing.T) {
	j, withExtra := newJudge(Sensitivity{}), newJudge(Sensitivity{Extra: newExtra(t)})
	j.brief, withExtra.brief = true, true
	lines := decisionLines(t, generatedCases(t), j, withExtra)
	dir := filepath.Join("testdata", "sensitive-decisions")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if len(lines["table"]) == 0 {
		t.Fatal("no cases from the table")
	}
	for src, ls := range lines {
		file := filepath.Join(dir, strings.TrimSuffix(src, ".yaml")+".golden")
		got := strings.Join(ls, "\n") + "\n"
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v (run go test ./bot/drift -run TestSensitiveDecisions -update)", src, err)
			continue
		}
		if string(want) != got {
			wl := strings.Split(string(want), "\n")
			gl := strings.Split(got, "\n")
			for i := 0; i < len(wl) || i < len(gl); i++ {
				var w, g string
				if i < len(wl) {
					w = wl[i]
				}
				if i < len(gl) {
					g = gl[i]
				}
				if w != g {
					t.Errorf("%s line %d:\nwant: %s\ngot:  %s\n(if the table changed on purpose, run -update and read the diff)", file, i+1, w, g)
					break
				}
			}
		}
	}
}
