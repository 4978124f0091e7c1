package drift

import (
	"path"
	"sort"
	"strings"
	"time"
)

// Source is one source of the Application (spec.source or spec.sources[i]).
type Source struct {
	RepoURL        string
	TargetRevision string
	// Path is the source's path as Argo CD resolves it in the repository:
	// cleaned, without a leading or trailing slash, "" for the root ("."
	// and "./x" as "" and "x").
	Path       string
	Chart      string
	Helm       bool
	ValueFiles []string
	// Ref is a multi-source application's ref: name for this source, whose
	// files other sources' value files name as $ref/...
	Ref string
	// Index is the source's position: 0 for spec.source, i for
	// spec.sources[i] (as Argo CD's sourcePositions count from 1, minus 1).
	Index int
	// Spec is the source object itself (helm, kustomize, directory,
	// plugin options), read, never written.
	Spec map[string]any
}

// String names the source as a person reads it: its repository, then its
// path or chart.
func (s Source) String() string {
	out := s.RepoURL
	if s.Path != "" {
		out += " path " + s.Path
	}
	if s.Chart != "" {
		out += " chart " + s.Chart
	}
	return out
}

// CleanSourcePath is a source path as Argo CD's repo-server resolves it
// against the repository root: "", ".", "/" and "./" are the root (""),
// "./x/" is "x". A path that leaves the root keeps its leading "../", so
// it names no file of the repository, as Argo CD refuses it.
func CleanSourcePath(p string) string {
	p = path.Clean(strings.Trim(strings.TrimSpace(p), "/"))
	if p == "." {
		return ""
	}
	return p
}

// Sources returns the Application's sources.
func Sources(app Object) []Source {
	// As Argo CD: spec.sources, when it has any, replaces spec.source.
	raw := List(app, "spec", "sources")
	if len(raw) == 0 {
		if s := Map(app, "spec", "source"); s != nil {
			raw = []any{s}
		}
	}
	var out []Source
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		s := Source{RepoURL: Str(m, "repoURL"), TargetRevision: Str(m, "targetRevision"), Path: CleanSourcePath(Str(m, "path")),
			Chart: Str(m, "chart"), Ref: Str(m, "ref"), Index: i, Spec: m}
		if h := Map(m, "helm"); h != nil || s.Chart != "" {
			s.Helm = true
			for _, v := range List(h, "valueFiles") {
				if f, ok := v.(string); ok {
					s.ValueFiles = append(s.ValueFiles, f)
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// HelmSource reports whether the application renders a Helm chart: a helm
// source, or a Chart.yaml at a source path in the repository files.
func (s *Snapshot) HelmSource() (Source, bool) {
	for _, src := range Sources(s.Application) {
		if src.Helm {
			return src, true
		}
		if _, ok := s.Repo.Files[path.Join(src.Path, "Chart.yaml")]; ok {
			return src, true
		}
	}
	return Source{}, false
}

// TemplateFiles returns the chart's template files (path → content), sorted by path.
func (s *Snapshot) TemplateFiles() []string {
	src, ok := s.HelmSource()
	if !ok {
		return nil
	}
	dir := path.Join(src.Path, "templates") + "/"
	if src.Path == "" {
		dir = "templates/"
	}
	var out []string
	for f := range s.Repo.Files {
		if strings.HasPrefix(f, dir) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// ArgoStatuses returns the sync status (Synced, OutOfSync) the Application's
// status.resources records for each resource: Argo CD's own verdict.
func ArgoStatuses(app Object) map[Ref]string {
	out := map[Ref]string{}
	for _, r := range List(app, "status", "resources") {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		out[Ref{Group: Str(m, "group"), Kind: Str(m, "kind"), Namespace: Str(m, "namespace"), Name: Str(m, "name")}] = Str(m, "status")
	}
	return out
}

// ArgoOutOfSync returns the resources the Application's status.resources marks
// OutOfSync: Argo CD's own verdict that something differs.
func ArgoOutOfSync(app Object) map[Ref]bool {
	out := map[Ref]bool{}
	for ref, st := range ArgoStatuses(app) {
		if st == "OutOfSync" {
			out[ref] = true
		}
	}
	return out
}

// WithoutArgoStates returns a copy of the snapshot without Argo CD's
// normalized and predicted live states, so a diff emulates them.
func (s *Snapshot) WithoutArgoStates() *Snapshot {
	c := *s
	c.Resources = make([]Resource, len(s.Resources))
	for i, r := range s.Resources {
		r.NormalizedLive, r.PredictedLive = nil, nil
		c.Resources[i] = r
	}
	return &c
}

// WithoutArgoVerdict returns a copy of the snapshot whose Application carries no
// per-resource sync status: a desired state changed by a fix has never been
// compared by Argo CD, so its old verdict says nothing about it.
func (s *Snapshot) WithoutArgoVerdict() *Snapshot {
	c := *s
	app := make(Object, len(s.Application))
	for k, v := range s.Application {
		app[k] = v
	}
	if st, ok := app["status"].(map[string]any); ok {
		cs := make(map[string]any, len(st))
		for k, v := range st {
			if k != "resources" {
				cs[k] = v
			}
		}
		app["status"] = cs
	}
	c.Application = app
	return &c
}

// SyncLoop reports whether the Application's history shows Argo CD syncing one
// revision again and again: at least three deployments of it within an hour
// of its newest one. It returns the revision and the count.
func SyncLoop(app Object) (revision string, count int, ok bool) {
	times := map[string][]time.Time{}
	for _, h := range List(app, "status", "history") {
		at, err := time.Parse(time.RFC3339, Str(h, "deployedAt"))
		rev := Str(h, "revision")
		if err != nil || rev == "" {
			continue
		}
		times[rev] = append(times[rev], at)
	}
	for _, rev := range SortedKeys(anyMap(times)) {
		ts := times[rev]
		newest := ts[0]
		for _, t := range ts {
			if t.After(newest) {
				newest = t
			}
		}
		n := 0
		for _, t := range ts {
			if newest.Sub(t) <= time.Hour {
				n++
			}
		}
		if n >= 3 && n > count {
			revision, count, ok = rev, n, true
		}
	}
	return revision, count, ok
}

func anyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
