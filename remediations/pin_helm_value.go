package remediations

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// PinHelmValue makes a generated chart value stable: it points the chart at a
// Secret managed outside it (existingSecret) instead of a random value. It
// never writes a secret value into Git.
var PinHelmValue = Remedy{
	Kind:  drift.FixPinHelmValue,
	Doc:   "a chart value that feeds `randAlphaNum`/`genCA`/`lookup` points at a Secret managed outside the chart (`existingSecret`); no secret is ever written to Git",
	Title: "Pin the value the chart generates for {resource}",
	Group: perApplication,
	Locate: func(s *drift.Snapshot, _ Repo, _ drift.Ref) string {
		if src, ok := s.HelmSource(); ok {
			return valuesFile(s, src)
		}
		return ""
	},
	Applies: func(c *Context, f drift.Finding) string {
		if why := fieldFinding(f); why != "" {
			return why
		}
		if _, ok := helmSource(c.Snapshot, c.Repo); !ok {
			return noChart
		}
		return ""
	},
	Plan: planPinHelmValue,
}

const noChart = "the application does not render a Helm chart"

var valuesRef = regexp.MustCompile(`\.Values\.([A-Za-z0-9_.]+)`)

func planPinHelmValue(c *Context, group []drift.Finding) (Plan, *drift.Snapshot) {
	p := Plan{Resource: group[0].Resource}
	src, ok := helmSource(c.Snapshot, c.Repo)
	if !ok {
		p.Dropped = noChart
		return p, nil
	}
	if c.valuesFile(src) == "" {
		p.Dropped = "no values file of the chart is in the repository"
		return p, nil
	}
	key := generatedValue(c)
	if key == "" {
		p.Dropped = "no chart value feeds the generated field; the template itself must stop generating it"
		return p, nil
	}
	// The value files the source reads ($ref ones included): the last that
	// offers existingSecret beside the key takes it.
	keyPath := strings.Split(key, ".")
	values := c.valuesFileFor(src, strings.Join(append(keyPath[:len(keyPath)-1:len(keyPath)-1], "existingSecret"), "."))
	var secret drift.Ref
	for _, f := range group {
		if f.Resource.Kind == "Secret" && f.Resource.Group == "" {
			secret = f.Resource
		}
	}
	parent := strings.Split(key, ".")
	parent = parent[:len(parent)-1]
	docs, err := yamledit.Documents(c.Repo[values])
	if err != nil || len(docs) == 0 {
		p.Dropped = fmt.Sprintf("read %s: %v", values, err)
		return p, nil
	}
	ref := drift.Pointer(append(append([]string{}, parent...), "existingSecret"))
	if _, has := ref.Get(docs[0]); !has || secret.Name == "" {
		p.Dropped = fmt.Sprintf("the chart generates %s and offers no existingSecret beside it; give %s a value from a secret store (never a literal secret in Git), or change the chart", key, key)
		return p, nil
	}
	if !p.addEdit(applyEdits(c.Repo, values, func(b []byte) ([]byte, error) {
		return yamledit.SetValue(b, 0, ref, secret.Name)
	})) {
		return p, nil
	}
	setting := strings.Join(ref, ".")
	p.Rationale = Rationale{
		Why:  fmt.Sprintf("the chart generates %s on every render; with %s set, it uses a Secret managed outside the chart instead, so every render is the same, and no secret value is written to Git", key, setting),
		Risk: fmt.Sprintf("the chart stops rendering %s: create it outside the chart (a secret manager, or keep the current one with the annotation argocd.argoproj.io/sync-options: Prune=false) before merging, or Argo CD prunes it", secret),
		Undo: undoText(values),
	}
	c.verifyPinned(&p, src, values, p.Edits[0].After, group, secret)
	return p, nil
}

// generatedValue finds the chart value a template passes through a random,
// time-based or lookup function (e.g. database.password in
// `{{ .Values.database.password | default (randAlphaNum 24) }}`).
func generatedValue(c *Context) string {
	for _, f := range templateFiles(c.Snapshot, c.Repo) {
		for _, line := range strings.Split(string(c.Repo[f]), "\n") {
			if !strings.Contains(line, "rand") && !strings.Contains(line, "gen") && !strings.Contains(line, "lookup") && !strings.Contains(line, "uuid") && !strings.Contains(line, "now") {
				continue
			}
			if m := valuesRef.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// verifyPinned renders the chart twice with the edited values: every fixed path
// must now render the same both times, the generated Secret may leave the
// chart, and nothing else may change.
func (c *Context) verifyPinned(p *Plan, src drift.Source, values string, edited []byte, group []drift.Finding, secret drift.Ref) {
	files := map[string][]byte{}
	for k, v := range c.Repo {
		files[k] = v
	}
	files[values] = edited
	opts := render.HelmOptionsFor(c.Snapshot.Application, src)
	opts.Limits = c.Render
	r1, err := render.Helm(files, opts)
	if err == nil {
		var r2 []drift.Object
		if r2, err = render.Helm(files, opts); err == nil {
			err = c.comparePinned(r1, r2, group, secret, opts.Namespace)
		}
	}
	if err != nil {
		p.Dropped = "verification failed: " + err.Error()
		return
	}
	p.Verification = fmt.Sprintf("rendered the chart twice with %s changed: the fixed paths render the same both times, %s leaves the chart, and nothing else changes", values, secret)
}

func (c *Context) comparePinned(r1, r2 []drift.Object, group []drift.Finding, secret drift.Ref, ns string) error {
	fixed := map[drift.Ref][]drift.Pointer{}
	for _, f := range group {
		fixed[f.Resource] = append(fixed[f.Resource], f.GitPath)
	}
	for _, res := range c.Snapshot.Resources {
		if res.Target == nil {
			continue
		}
		ref := res.Ref()
		a, b := findObject(r1, ref, ns), findObject(r2, ref, ns)
		if a == nil || b == nil {
			if ref == secret && a == nil && b == nil {
				continue
			}
			return fmt.Errorf("%s no longer renders", ref)
		}
		for _, fp := range fixed[ref] {
			va, okA := fp.Get(a)
			vb, okB := fp.Get(b)
			if okA != okB || !drift.Equal(va, vb) {
				return fmt.Errorf("%s %s still differs between renders", ref, fp)
			}
		}
		want := drift.DeepCopy(res.Target)
		got := drift.DeepCopy(a)
		for _, fp := range fixed[ref] {
			want, _ = fp.Delete(want)
			got, _ = fp.Delete(got)
		}
		stripArgoMetadata(want)
		stripArgoMetadata(got)
		if !drift.Equal(want, got) {
			return fmt.Errorf("%s renders differently beyond the fixed paths", ref)
		}
	}
	return nil
}

func findObject(objs []drift.Object, ref drift.Ref, ns string) drift.Object {
	for _, o := range objs {
		r := drift.RefOf(o)
		if r.Namespace == "" {
			r.Namespace = ns
		}
		if r == ref || (r.Group == ref.Group && r.Kind == ref.Kind && r.Name == ref.Name && ref.Namespace == "") {
			return o
		}
	}
	return nil
}

// stripArgoMetadata removes what Argo CD adds to a rendered manifest (tracking
// annotation and label, the destination namespace) so renders compare with targets.
func stripArgoMetadata(o any) {
	md := drift.Map(o, "metadata")
	if md == nil {
		return
	}
	delete(md, "namespace")
	if ann := drift.Map(md, "annotations"); ann != nil {
		delete(ann, "argocd.argoproj.io/tracking-id")
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
}
