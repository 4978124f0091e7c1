package remediations

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/render"
	"github.com/driftfix/driftfix/remediations/yamledit"
)

// kustomizationFile returns the kustomization file of dir, or "".
func kustomizationFile(repo Repo, dir string) string {
	for _, k := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, ok := repo[path.Join(dir, k)]; ok {
			return path.Join(dir, k)
		}
	}
	return ""
}

// kustomizeSite is a document that contributes to a resource, with the name
// prefix and suffix the layers above add to it.
type kustomizeSite struct {
	located
	patch bool
}

// kustomizeSites lists, for the kustomization in dir, the documents that make
// up the resource: base resources first, then patches in the order they apply,
// so the last one that sets a field is where it is set.
func kustomizeSites(repo Repo, dir string, ref drift.Ref, prefix, suffix string, depth int) ([]kustomizeSite, error) {
	if depth > 10 {
		return nil, fmt.Errorf("kustomizations nest too deeply at %s", dir)
	}
	kf := kustomizationFile(repo, dir)
	if kf == "" {
		return nil, fmt.Errorf("%s has no kustomization", dir)
	}
	docs, err := yamledit.Documents(repo[kf])
	if err != nil || len(docs) == 0 {
		return nil, fmt.Errorf("read %s: %v", kf, err)
	}
	k, _ := docs[0].(map[string]any)
	prefix = drift.Str(k, "namePrefix") + prefix
	suffix = suffix + drift.Str(k, "nameSuffix")
	name := strings.TrimSuffix(strings.TrimPrefix(ref.Name, prefix), suffix)
	if !strings.HasPrefix(ref.Name, prefix) || !strings.HasSuffix(ref.Name, suffix) {
		return nil, nil
	}
	var sites []kustomizeSite
	for _, r := range append(drift.List(k, "resources"), drift.List(k, "bases")...) {
		rel, _ := r.(string)
		if rel == "" || strings.Contains(rel, "://") {
			continue
		}
		p := path.Clean(path.Join(dir, rel))
		if kustomizationFile(repo, p) != "" {
			sub, err := kustomizeSites(repo, p, ref, prefix, suffix, depth+1)
			if err != nil {
				return nil, err
			}
			sites = append(sites, sub...)
			continue
		}
		sites = append(sites, docsNamed(repo, p, ref, name, false)...)
	}
	var patchFiles []string
	for _, pf := range drift.List(k, "patchesStrategicMerge") {
		if s, ok := pf.(string); ok {
			patchFiles = append(patchFiles, s)
		}
	}
	for _, pe := range drift.List(k, "patches") {
		if s := drift.Str(pe, "path"); s != "" {
			patchFiles = append(patchFiles, s)
		}
	}
	for _, pf := range patchFiles {
		sites = append(sites, docsNamed(repo, path.Clean(path.Join(dir, pf)), ref, name, true)...)
	}
	return sites, nil
}

func docsNamed(repo Repo, file string, ref drift.Ref, name string, patch bool) []kustomizeSite {
	docs, err := yamledit.Documents(repo[file])
	if err != nil {
		return nil
	}
	var out []kustomizeSite
	for i, d := range docs {
		m, _ := d.(map[string]any)
		g, _ := drift.SplitAPIVersion(drift.Str(m, "apiVersion"))
		if drift.Str(m, "kind") == ref.Kind && drift.Str(m, "metadata", "name") == name && g == ref.Group {
			out = append(out, kustomizeSite{located: located{file: file, doc: i}, patch: patch})
		}
	}
	return out
}

// mapPath turns a path in the rendered target into the same place in a source
// document, matching list items by name where the source lists only some.
func mapPath(target, doc any, p drift.Pointer) (drift.Pointer, bool) {
	out := make(drift.Pointer, 0, len(p))
	t, d := target, doc
	for _, tok := range p {
		tl, isList := t.([]any)
		if !isList {
			tm, _ := t.(map[string]any)
			dm, ok := d.(map[string]any)
			if !ok {
				return nil, false
			}
			out = append(out, tok)
			t, d = tm[tok], dm[tok]
			if _, present := dm[tok]; !present {
				d = nil
			}
			continue
		}
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(tl) {
			return nil, false
		}
		dl, ok := d.([]any)
		if !ok {
			return nil, false
		}
		name, hasName := drift.Map(tl[i])["name"].(string)
		j := -1
		for k, item := range dl {
			if hasName {
				if n, _ := drift.Map(item)["name"].(string); n == name {
					j = k
				}
			} else if len(dl) == len(tl) {
				j = i
			}
		}
		if j < 0 {
			return nil, false
		}
		out = append(out, strconv.Itoa(j))
		t, d = tl[i], dl[j]
	}
	return out, d != nil
}

// locateKustomize finds where a field of a Kustomize-built resource is
// written: every base and patch that sets it, in the order they apply (the
// last one wins a value; all must go for a removal).
func (c *Context) locateKustomize(ref drift.Ref, target drift.Object, gitPath drift.Pointer) ([]located, []drift.Pointer, string) {
	var lastErr string
	for _, src := range drift.Sources(c.Snapshot.Application) {
		if kustomizationFile(c.Repo, src.Path) == "" {
			continue
		}
		sites, err := kustomizeSites(c.Repo, src.Path, ref, "", "", 0)
		if err != nil {
			lastErr = err.Error()
			continue
		}
		var locs []located
		var paths []drift.Pointer
		for _, s := range sites {
			docs, err := yamledit.Documents(c.Repo[s.file])
			if err != nil {
				continue
			}
			if mp, ok := mapPath(target, docs[s.doc], gitPath); ok {
				locs = append(locs, s.located)
				paths = append(paths, mp)
			}
		}
		if len(locs) > 0 {
			return locs, paths, ""
		}
		lastErr = fmt.Sprintf("no base or patch of %s under %s sets %s", ref, src.Path, gitPath)
	}
	if lastErr == "" {
		lastErr = "no kustomization found for the Application's sources"
	}
	return nil, nil, "cannot locate the source with certainty: " + lastErr
}

// rebuild re-renders the application from the edited repository and returns
// the snapshot with the new desired state, Argo CD's tracking metadata kept.
func (c *Context) rebuild(edited Repo) (*drift.Snapshot, error) {
	files := map[string][]byte{}
	for k, v := range edited {
		files[k] = v
	}
	ns := drift.Str(c.Snapshot.Application, "spec", "destination", "namespace")
	var objs []drift.Object
	switch sourceType(c.Snapshot, c.Repo) {
	case "kustomize":
		for _, src := range drift.Sources(c.Snapshot.Application) {
			if kustomizationFile(edited, src.Path) == "" {
				continue
			}
			opts, err := diff.KustomizeBuildOptions(c.Snapshot.Cluster, c.Snapshot.Application, src.Path)
			if err != nil {
				return nil, fmt.Errorf("kustomize build %s: %w", src.Path, err)
			}
			o, err := render.KustomizeWithOptions(files, src.Path, render.KustomizeOptions{BuildOptions: opts, Limits: c.Render})
			if err != nil {
				return nil, err
			}
			objs = append(objs, o...)
		}
	case "helm":
		src, _ := helmSource(c.Snapshot, c.Repo)
		opts := render.HelmOptionsFor(c.Snapshot.Application, src)
		opts.Limits = c.Render
		o, err := render.Helm(files, opts)
		if err != nil {
			return nil, err
		}
		objs = o
	default:
		return nil, fmt.Errorf("not a rendered source")
	}
	known := map[drift.Ref]bool{}
	for i := range c.Snapshot.Resources {
		known[c.Snapshot.Resources[i].Ref()] = true
	}
	for _, o := range objs {
		r := drift.RefOf(o)
		if r.Namespace == "" && !known[r] {
			r.Namespace = ns
		}
		if !known[r] {
			return nil, fmt.Errorf("the change adds %s to the application", r)
		}
	}
	out := c.Snapshot
	for i := range c.Snapshot.Resources {
		res := c.Snapshot.Resources[i]
		if res.Target == nil {
			continue
		}
		o := findObject(objs, res.Ref(), ns)
		if o == nil {
			return nil, fmt.Errorf("%s no longer renders", res.Ref())
		}
		out = withTarget(out, i, withArgoMetadata(drift.DeepCopy(o).(map[string]any), res.Target, c.instanceLabel()))
	}
	return out, nil
}

// instanceLabel is the label Argo CD tracks resources by, when it does.
func (c *Context) instanceLabel() string {
	st, _, err := diff.ReadSettings(c.Snapshot.Cluster)
	if err != nil || !st.LabelTracking() {
		return ""
	}
	return st.InstanceLabelKey
}

// withArgoMetadata gives a rendered object what Argo CD adds to the target:
// the namespace, the tracking annotation and the instance label (labelKey,
// empty when Argo CD tracks by annotation only) it had.
func withArgoMetadata(o, old drift.Object, labelKey string) drift.Object {
	md, _ := o["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		o["metadata"] = md
	}
	if ns := drift.Str(old, "metadata", "namespace"); ns != "" {
		md["namespace"] = ns
	}
	if id, ok := drift.Annotations(old)["argocd.argoproj.io/tracking-id"]; ok {
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		ann["argocd.argoproj.io/tracking-id"] = id
	}
	if v, ok := drift.Labels(old)[labelKey]; ok && labelKey != "" {
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels[labelKey] = v
	}
	return o
}
