// Package render produces an application's desired manifests from its
// repository files in memory, as Argo CD's repo-server would: a Helm chart
// with the Application's values, or a kustomization. It does no network call
// (a template's lookup finds nothing, as under `helm template`).
//
// Each render runs in a child process: the running binary started again for
// one render, with the files and options on its stdin and the manifests or
// the error on its stdout. The child has no network (every HTTP transport
// and DNS lookup it would make refuses, PATH is empty so no git or helm can
// be run, no proxy is set), its address space and CPU time are bounded by
// the operating system (RLIMIT_AS and RLIMIT_CPU on Linux), and it is killed
// with its process group at the render's deadline. Any binary linking this
// package serves as the child: the package's init runs the render when the
// process was started as one, before main or a test runs.
package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/driftfix/driftfix/bot/drift"
)

// HelmOptions are the parts of an Application's Helm source that change a
// render, as Argo CD's repo-server passes them to `helm template`.
type HelmOptions struct {
	ChartDir string // chart path in the repository
	// ValueFiles are helm.valueFiles as the Application writes them, in
	// order: relative to ChartDir, from the repository root with a leading
	// slash, $ref/... from a ref source (see Refs), or a glob of those.
	ValueFiles []string
	// IgnoreMissingValueFiles skips a value file (or a glob) that names no
	// file, instead of failing.
	IgnoreMissingValueFiles bool
	// ValuesObject is helm.valuesObject; when set, Values is not read (as
	// Argo CD, which writes one of the two as the last values file).
	ValuesObject map[string]any
	Values       string // helm.values
	// Parameters are helm.parameters (--set, or --set-string with
	// forceString), after the value files.
	Parameters []Parameter
	// FileParameters are helm.fileParameters (--set-file), paths resolved
	// as value files are.
	FileParameters []FileParameter
	// ReleaseName is .Release.Name (the Application's name by default).
	ReleaseName string
	// Namespace is .Release.Namespace: helm.namespace, else the
	// destination's; "" is "default", as `helm template` without one.
	Namespace string
	// KubeVersion and APIVersions set .Capabilities.KubeVersion and add to
	// .Capabilities.APIVersions, as --kube-version and --api-versions do.
	KubeVersion string
	APIVersions []string
	// SkipCrds leaves out the crds/ directories (--include-crds otherwise),
	// SkipSchemaValidation does not check values against
	// values.schema.json, SkipTests leaves out test hooks.
	SkipCrds, SkipSchemaValidation, SkipTests bool
	// Refs are the application's ref sources by name (without $).
	Refs map[string]HelmRef
	// Env is the build environment value files and parameters may name
	// ($ARGOCD_APP_NAME, ...), as Argo CD sets it.
	Env map[string]string
	// Dependencies are the archives of the remote dependencies `helm
	// dependency build` downloads (see RemoteDependencies), fetched by the
	// caller, by DependencyKey; a remote dependency the build needs that
	// is not here is a *RemoteError.
	Dependencies map[string][]byte
	// Limits bound the render; zero fields take DefaultLimits.
	Limits Limits
}

// Parameter is one spec.source.helm.parameters entry.
type Parameter struct {
	Name, Value string
	ForceString bool
}

// HelmOptionsFor reads the Helm options of one source of an Application:
// src.Spec, the source object itself (for a Source without it, the first
// source at src.Path). A ref source is taken as local when it has the
// same repoURL as src and is no chart; a caller that knows more (the
// repository's other URLs) sets Refs[name].Local itself.
func HelmOptionsFor(app drift.Object, src drift.Source) HelmOptions {
	spec := src.Spec
	if spec == nil {
		for _, s := range append([]any{drift.Map(app, "spec", "source")}, drift.List(app, "spec", "sources")...) {
			if m, _ := s.(map[string]any); m != nil && drift.CleanSourcePath(drift.Str(m, "path")) == src.Path {
				spec = m
				break
			}
		}
	}
	o := HelmOptions{ChartDir: src.Path, ReleaseName: drift.Str(app, "metadata", "name"),
		Namespace: drift.Str(app, "spec", "destination", "namespace"),
		Env: map[string]string{
			"ARGOCD_APP_NAME":                   drift.Str(app, "metadata", "name"),
			"ARGOCD_APP_NAMESPACE":              drift.Str(app, "spec", "destination", "namespace"),
			"ARGOCD_APP_PROJECT_NAME":           drift.Str(app, "spec", "project"),
			"ARGOCD_APP_SOURCE_REPO_URL":        src.RepoURL,
			"ARGOCD_APP_SOURCE_PATH":            drift.Str(spec, "path"),
			"ARGOCD_APP_SOURCE_TARGET_REVISION": src.TargetRevision,
		}}
	for _, s := range drift.Sources(app) {
		if s.Ref == "" {
			continue
		}
		if _, dup := o.Refs[s.Ref]; dup {
			continue // Argo CD refuses the application; the first is kept here
		}
		if o.Refs == nil {
			o.Refs = map[string]HelmRef{}
		}
		o.Refs[s.Ref] = HelmRef{Repository: s.RepoURL, TargetRevision: s.TargetRevision, Chart: s.Chart,
			Local: s.Chart == "" && s.RepoURL == src.RepoURL}
	}
	h := drift.Map(spec, "helm")
	if ns := drift.Str(h, "namespace"); ns != "" {
		o.Namespace = ns
	}
	if rn := drift.Str(h, "releaseName"); rn != "" {
		o.ReleaseName = rn
	}
	for _, v := range drift.List(h, "valueFiles") {
		if f, ok := v.(string); ok {
			o.ValueFiles = append(o.ValueFiles, f)
		}
	}
	o.IgnoreMissingValueFiles, _ = drift.Lookup(h, "ignoreMissingValueFiles").(bool)
	o.ValuesObject = drift.Map(h, "valuesObject")
	o.Values = drift.Str(h, "values")
	for _, e := range drift.List(h, "parameters") {
		fs, _ := drift.Lookup(e, "forceString").(bool)
		o.Parameters = append(o.Parameters, Parameter{Name: drift.Str(e, "name"), Value: drift.Str(e, "value"), ForceString: fs})
	}
	for _, e := range drift.List(h, "fileParameters") {
		o.FileParameters = append(o.FileParameters, FileParameter{Name: drift.Str(e, "name"), Path: drift.Str(e, "path")})
	}
	o.KubeVersion = drift.Str(h, "kubeVersion")
	for _, v := range drift.List(h, "apiVersions") {
		if s, ok := v.(string); ok {
			o.APIVersions = append(o.APIVersions, s)
		}
	}
	o.SkipCrds, _ = drift.Lookup(h, "skipCrds").(bool)
	o.SkipSchemaValidation, _ = drift.Lookup(h, "skipSchemaValidation").(bool)
	o.SkipTests, _ = drift.Lookup(h, "skipTests").(bool)
	return o
}

// Helm renders the chart under opts.ChartDir from the given files (the
// repository at one revision: path -> content, archives as their bytes) as
// Argo CD's repo-server renders it with `helm template`, with no network:
// value files and file parameters resolved as Argo CD resolves them (a ref
// source in another repository is a *NotLocalError, a values URL a
// *RemoteError, a path that leaves the repository an error); dependencies
// as `helm dependency build` leaves them (charts/ archives and directories,
// file:// dependencies from the repository; one from a chart repository or
// an OCI registry that charts/ lacks is a *RemoteError); a
// values.schema.json may only refer within itself (anything else is a
// RemoteError naming the schema and the reference) and lookup finds
// nothing. The chart, its values and the render are bounded by
// opts.Limits; going over one is a *LimitError naming the limit.
//
// The render runs in a process of its own (see the package doc), bounded in
// memory and CPU by the operating system and killed at opts.Limits.Timeout.
func Helm(files map[string][]byte, opts HelmOptions) ([]drift.Object, error) {
	opts.Limits = opts.Limits.withDefaults()
	what := "chart " + strings.Trim(opts.ChartDir, "/")
	// What the options name is checked here, before a process is started:
	// a value file elsewhere is known without rendering.
	if _, err := resolveValueFiles(files, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if _, err := resolveFileParameters(files, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return inChild(what, childRequest{Kind: "helm", Files: renderFiles(files, opts), Helm: opts, Limits: opts.Limits})
}

// renderFiles are the files a render of opts can read, the only ones sent
// to its process: the chart directory's, its value files and file
// parameters, and its file:// dependencies' directories (see HelmReads).
func renderFiles(files map[string][]byte, opts HelmOptions) map[string][]byte {
	dirs := []string{strings.Trim(opts.ChartDir, "/")}
	exact := map[string]bool{}
	for _, r := range HelmReads(files, opts) {
		if d, ok := strings.CutSuffix(r, "/"); ok {
			dirs = append(dirs, d)
		} else {
			exact[r] = true
		}
	}
	out := map[string][]byte{}
	for name, data := range files {
		if exact[name] {
			out[name] = data
			continue
		}
		for _, d := range dirs {
			if d == "" || strings.HasPrefix(name, d+"/") {
				out[name] = data
				break
			}
		}
	}
	return out
}

// resolveFileParameters resolves helm.fileParameters to repository paths,
// by name (the last entry of a name wins, as in Argo CD's map).
func resolveFileParameters(files map[string][]byte, opts HelmOptions) (map[string]string, error) {
	out := map[string]string{}
	dir := strings.Trim(opts.ChartDir, "/")
	for _, p := range opts.FileParameters {
		in, err := resolveValuePath(dir, p.Path, "file parameter "+p.Name, opts.Refs, opts.Env)
		if err != nil {
			return nil, err
		}
		if _, ok := files[in.path]; !ok {
			return nil, fmt.Errorf("file parameter %s: %s (%s) is not in the repository", p.Name, in.path, p.Path)
		}
		out[p.Name] = in.path
	}
	return out, nil
}

// helm renders in this process: the body of Helm, run in a render process.
func helm(files map[string][]byte, opts HelmOptions) ([]drift.Object, error) {
	lim := opts.Limits.withDefaults()
	dir := strings.Trim(opts.ChartDir, "/")
	what := "chart " + dir
	if err := checkChartFiles(files, dir, what, lim); err != nil {
		return nil, err
	}
	// Archives are unpacked within the chart's bounds (a render has a
	// process of its own, so Helm's package-wide bounds are its own).
	if lim.MaxChartBytes >= 0 {
		loader.MaxDecompressedChartSize = min(loader.MaxDecompressedChartSize, lim.MaxChartBytes)
		loader.MaxDecompressedFileSize = min(loader.MaxDecompressedFileSize, lim.MaxChartBytes)
	}
	chart, err := loadChartWith(files, dir, opts.Dependencies)
	if err != nil {
		return nil, err
	}
	// Archives and file:// dependencies are only known loaded: the chart
	// as it renders is bounded again, every subchart's files counted.
	if err := checkLoaded(chart, dir, what, lim); err != nil {
		return nil, err
	}
	switch chart.Metadata.Type {
	case "", "application":
	default:
		return nil, fmt.Errorf("chart %s: %s charts are not installable", dir, chart.Metadata.Type)
	}
	hv := &helmValues{vals: map[string]any{}, lim: lim}
	for _, f := range chart.Raw {
		if f.Name == "values.yaml" {
			hv.bytes += int64(len(f.Data))
		}
	}
	if err := hv.gather(files, opts); err != nil {
		return nil, err
	}
	vals := hv.vals
	// Conditions, tags, aliases and import-values of the dependencies.
	if err := chartutil.ProcessDependenciesWithMerge(chart, vals); err != nil {
		return nil, fmt.Errorf("dependencies of chart %s: %w", dir, err)
	}
	if !opts.SkipSchemaValidation {
		if err := checkSchemas(chart, path.Join(dir, "Chart.yaml")); err != nil {
			return nil, err
		}
	}
	caps, err := capabilities(opts)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	if kv := chart.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart %s requires kubeVersion: %s which is incompatible with Kubernetes %s", dir, kv, caps.KubeVersion.String())
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	rv, err := chartutil.ToRenderValuesWithSchemaValidation(chart, vals,
		chartutil.ReleaseOptions{Name: opts.ReleaseName, Namespace: ns, Revision: 1, IsInstall: true}, caps, opts.SkipSchemaValidation)
	if err != nil {
		return nil, fmt.Errorf("values for chart %s: %w", dir, err)
	}
	out, err := renderBounded(chart, rv, hv.bytes, dir, what, lim)
	if err != nil {
		return nil, err
	}
	return manifests(chart, out, opts)
}

// checkChartFiles bounds the chart's files under dir as the repository
// holds them (each template, their number, their size) and checks that
// its Chart.yaml is there.
func checkChartFiles(files map[string][]byte, dir, what string, lim Limits) error {
	var n int
	var total int64
	for name, data := range files {
		rel := name
		if dir != "" {
			if !strings.HasPrefix(name, dir+"/") {
				continue
			}
			rel = strings.TrimPrefix(name, dir+"/")
		}
		if strings.Contains("/"+rel, "/templates/") && over(int64(len(data)), lim.MaxTemplateBytes) {
			return &LimitError{Limit: "MaxTemplateBytes", What: what + ": " + rel, Got: humanBytes(float64(len(data))), Max: humanBytes(float64(lim.MaxTemplateBytes))}
		}
		total += int64(len(data))
		n++
	}
	if over(n, lim.MaxFiles) {
		return &LimitError{Limit: "MaxFiles", What: what, Got: fmt.Sprintf("%d files", n), Max: fmt.Sprint(lim.MaxFiles)}
	}
	if over(total, lim.MaxChartBytes) {
		return &LimitError{Limit: "MaxChartBytes", What: what, Got: humanBytes(float64(total)), Max: humanBytes(float64(lim.MaxChartBytes))}
	}
	if _, ok := files[path.Join(dir, "Chart.yaml")]; !ok {
		return fmt.Errorf("load chart %s: %s is not in the repository", dir, path.Join(dir, "Chart.yaml"))
	}
	return nil
}

// helmValues are the values given to a chart, merged in Helm's order, and
// how many bytes of values went into them (the chart's own included).
type helmValues struct {
	vals  map[string]any
	bytes int64
	lim   Limits
}

// gather merges the Application's values over the chart's: `helm template
// --values` for each value file, then its values or valuesObject, each
// merged over the last; then --set, --set-string and --set-file.
func (hv *helmValues) gather(files map[string][]byte, opts HelmOptions) error {
	valueFiles, err := resolveValueFiles(files, opts)
	if err != nil {
		return err
	}
	fileParams, err := resolveFileParameters(files, opts)
	if err != nil {
		return err
	}
	for _, vf := range valueFiles {
		if err := hv.read("values file "+vf, files[vf]); err != nil {
			return err
		}
	}
	switch {
	case opts.ValuesObject != nil:
		b, err := json.Marshal(opts.ValuesObject)
		if err != nil {
			return fmt.Errorf("read helm.valuesObject of the Application: %w", err)
		}
		if err := hv.read("helm.valuesObject of the Application", b); err != nil {
			return err
		}
	case opts.Values != "":
		if err := hv.read("helm.values of the Application", []byte(opts.Values)); err != nil {
			return err
		}
	}
	if err := hv.setParameters(opts); err != nil {
		return err
	}
	return hv.setFiles(files, fileParams)
}

// read merges the values document data (what names it) over the values.
func (hv *helmValues) read(what string, data []byte) error {
	if over(int64(len(data)), hv.lim.MaxValuesBytes) {
		return &LimitError{Limit: "MaxValuesBytes", What: what, Got: humanBytes(float64(len(data))), Max: humanBytes(float64(hv.lim.MaxValuesBytes))}
	}
	hv.bytes += int64(len(data))
	m, err := chartutil.ReadValues(data)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	hv.vals = mergeValues(hv.vals, m)
	return nil
}

// setParameters applies --set, then --set-string, each by name as Argo CD
// keeps them (the last entry of a name wins), in name order.
func (hv *helmValues) setParameters(opts HelmOptions) error {
	set, setString := map[string]string{}, map[string]string{}
	for _, p := range opts.Parameters {
		v, err := envsubst(p.Value, "helm parameter "+p.Name, opts.Env)
		if err != nil {
			return err
		}
		if p.ForceString {
			setString[p.Name] = v
		} else {
			set[p.Name] = v
		}
	}
	for _, group := range []struct {
		params map[string]string
		parse  func(string, map[string]any) error
	}{{set, strvals.ParseInto}, {setString, strvals.ParseIntoString}} {
		for _, name := range sortedKeys(group.params) {
			v := group.params[name]
			hv.bytes += int64(len(name) + len(v))
			if err := group.parse(name+"="+cleanSetValue(v), hv.vals); err != nil {
				return fmt.Errorf("helm parameter %s: %w", name, err)
			}
		}
	}
	return nil
}

// setFiles applies --set-file for each file parameter, in name order.
func (hv *helmValues) setFiles(files map[string][]byte, fileParams map[string]string) error {
	for _, name := range sortedKeys(fileParams) {
		p := fileParams[name]
		data := files[p]
		if over(int64(len(data)), hv.lim.MaxValuesBytes) {
			return &LimitError{Limit: "MaxValuesBytes", What: "file parameter " + name + ": " + p, Got: humanBytes(float64(len(data))), Max: humanBytes(float64(hv.lim.MaxValuesBytes))}
		}
		hv.bytes += int64(len(data))
		read := func([]rune) (any, error) { return string(data), nil }
		if err := strvals.ParseIntoFile(name+"="+cleanSetValue(p), hv.vals, read); err != nil {
			return fmt.Errorf("helm file parameter %s: %w", name, err)
		}
	}
	return nil
}

// renderBounded renders the chart with the render values rv within the
// limits: refused before rendering where the estimate (from valuesBytes of
// values) is over MaxRenderedBytes, stopped at the Timeout, and refused
// after where the output is over MaxRenderedBytes.
func renderBounded(chart *chart.Chart, rv chartutil.Values, valuesBytes int64, dir, what string, lim Limits) (map[string]string, error) {
	root, _ := asMap(rv["Values"])
	est, biggest, err := estimate(chart, root, valuesBytes)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", dir, err)
	}
	if over(est, float64(lim.MaxRenderedBytes)) {
		return nil, &LimitError{Limit: "MaxRenderedBytes", What: what + ": " + strings.TrimPrefix(biggest, chart.Name()+"/") + " can expand",
			Got: "up to " + humanBytes(est) + " estimated before rendering", Max: humanBytes(float64(lim.MaxRenderedBytes))}
	}
	out, err := withTimeout(lim.Timeout, "render "+what, func() (map[string]string, error) {
		return engine.Render(chart, rv)
	})
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, fmt.Errorf("render chart %s: %w", dir, err)
	}
	var size int64
	for _, s := range out {
		size += int64(len(s))
	}
	if over(size, lim.MaxRenderedBytes) {
		return nil, &LimitError{Limit: "MaxRenderedBytes", What: what, Got: humanBytes(float64(size)), Max: humanBytes(float64(lim.MaxRenderedBytes))}
	}
	return out, nil
}

// manifests are the objects `helm template` prints of a render: the
// crds/ files (unless SkipCrds), the manifests, then the hooks (without
// test hooks when SkipTests); notes and partials are not printed.
func manifests(c *chart.Chart, out map[string]string, opts HelmOptions) ([]drift.Object, error) {
	for n := range out {
		if strings.HasSuffix(n, "NOTES.txt") {
			delete(out, n)
		}
	}
	hooks, ms, err := releaseutil.SortManifests(out, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", strings.Trim(opts.ChartDir, "/"), err)
	}
	type doc struct{ name, content string }
	var docs []doc
	if !opts.SkipCrds {
		for _, crd := range c.CRDObjects() {
			docs = append(docs, doc{crd.Filename, string(crd.File.Data)})
		}
	}
	for _, m := range ms {
		docs = append(docs, doc{m.Name, m.Content})
	}
	for _, h := range hooks {
		if opts.SkipTests && slices.Contains(h.Events, release.HookTest) {
			continue
		}
		docs = append(docs, doc{h.Path, h.Manifest})
	}
	var objs []drift.Object
	for _, d := range docs {
		// As helm template prints it: the document and a newline (a block
		// scalar that ends the document keeps its final line break).
		dec := yaml.NewDecoder(strings.NewReader(d.content + "\n"))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if errors.Is(err, io.EOF) {
				break
			}
			var o map[string]any
			if err == nil {
				lastKeyWins(&n, 0)
				err = n.Decode(&o)
			}
			if err != nil {
				return nil, fmt.Errorf("parse rendered %s: %w", d.name, err)
			}
			if o == nil {
				continue
			}
			more, err := argoObjects(o)
			if err != nil {
				return nil, fmt.Errorf("rendered %s: %w", d.name, err)
			}
			objs = append(objs, more...)
		}
	}
	return objs, nil
}

// lastKeyWins drops every key of a mapping that the same mapping repeats
// later, as Argo CD reads a render (sigs.k8s.io/yaml's Unmarshal, whose
// YAML reader is not strict: the last value of a repeated key is kept, as
// kubectl keeps it), where a strict reader refuses the document. Charts
// render repeated labels often (a common label also set per resource).
func lastKeyWins(n *yaml.Node, depth int) {
	if n == nil || depth > 10_000 {
		return
	}
	if n.Kind == yaml.MappingNode && len(n.Content) >= 4 {
		last := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag != "!!merge" {
				last[k.Value] = i
			}
		}
		kept := n.Content[:0:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Tag != "!!merge" && last[k.Value] != i {
				continue
			}
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
		n.Content = kept
	}
	for _, c := range n.Content {
		lastKeyWins(c, depth+1)
	}
}

// argoObjects are the objects Argo CD takes from one rendered document: a
// list (an object with items) is its items, a list whose items are null
// is nothing, and an object without a kind is refused, as Argo CD reads a
// manifest into an unstructured object.
func argoObjects(o map[string]any) ([]drift.Object, error) {
	if k, _ := o["kind"].(string); k == "" {
		return nil, errors.New("Object 'Kind' is missing, which Argo CD refuses")
	}
	items, list := o["items"]
	if l, ok := items.([]any); ok {
		var out []drift.Object
		for _, it := range l {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("items member is not an object: %T", it)
			}
			out = append(out, drift.NormalizeNumbers(m).(map[string]any))
		}
		return out, nil
	}
	_, spec := o["spec"]
	_, status := o["status"]
	if list && items == nil && !spec && !status {
		return nil, nil
	}
	return []drift.Object{drift.NormalizeNumbers(o).(map[string]any)}, nil
}

// DefaultKubeVersion is .Capabilities.KubeVersion when the Application sets
// no kubeVersion. Argo CD passes the destination cluster's version, which a
// render from Git alone does not know; the default is the Kubernetes
// version of the client libraries this module is built with (v1.N.0 for
// k8s.io/client-go v0.N, which a test keeps), as a helm binary built with
// them reports it.
var DefaultKubeVersion = "v1.37.0"

// capabilities are `helm template`'s: Helm's defaults, with the
// Application's kubeVersion (read as Argo CD reads it, dropping what is not
// a version, as in v1.29.3-eks-1) and its apiVersions added.
func capabilities(opts HelmOptions) (*chartutil.Capabilities, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	kube := opts.KubeVersion
	if kube == "" {
		kube = DefaultKubeVersion
	}
	if kube != "" {
		g, err := genericVersion(kube)
		if err != nil {
			return nil, fmt.Errorf("could not parse kubernetes version %s: %w", kube, err)
		}
		kv, err := chartutil.ParseKubeVersion(g)
		if err != nil {
			return nil, fmt.Errorf("invalid kube version '%s': %w", kube, err)
		}
		caps.KubeVersion = *kv
	}
	caps.APIVersions = append(caps.APIVersions, opts.APIVersions...)
	return caps, nil
}

// kubeVersionForm is a Kubernetes version as Argo CD reads one before it
// passes it to helm: numbers, and whatever follows (a provider's suffix).
var kubeVersionForm = regexp.MustCompile(`^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`)

// genericVersion is the version Argo CD gives helm for a kubeVersion: its
// numeric components (at least two, the first not zero-padded) joined by
// dots, the rest dropped, as in v1.29.3-eks-1 -> 1.29.3.
func genericVersion(s string) (string, error) {
	m := kubeVersionForm.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("could not parse %q as version", s)
	}
	comps := strings.Split(m[1], ".")
	if len(comps) < 2 {
		return "", fmt.Errorf("illegal version string %q", s)
	}
	out := make([]string, len(comps))
	for i, c := range comps {
		if i == 0 && strings.HasPrefix(c, "0") && c != "0" {
			return "", fmt.Errorf("illegal zero-prefixed version component %q in %q", c, s)
		}
		n, err := strconv.ParseUint(c, 10, 0)
		if err != nil {
			return "", fmt.Errorf("illegal non-numeric version component %q in %q: %w", c, s, err)
		}
		out[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(out, "."), nil
}

// mergeValues merges src over dst as `helm template` merges its values
// files: maps key by key, anything else replaced.
func mergeValues(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(dv, sv)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// checkLoaded bounds the loaded chart, its subcharts included.
func checkLoaded(c *chart.Chart, dir, what string, lim Limits) error {
	var files int
	var total int64
	var walk func(c *chart.Chart, prefix string) error
	walk = func(c *chart.Chart, prefix string) error {
		for _, f := range c.Raw {
			files++
			total += int64(len(f.Data))
			if f.Name == "values.yaml" && over(int64(len(f.Data)), lim.MaxValuesBytes) {
				return &LimitError{Limit: "MaxValuesBytes", What: "values file " + path.Join(dir, prefix+f.Name), Got: humanBytes(float64(len(f.Data))), Max: humanBytes(float64(lim.MaxValuesBytes))}
			}
		}
		for _, t := range c.Templates {
			if over(int64(len(t.Data)), lim.MaxTemplateBytes) {
				return &LimitError{Limit: "MaxTemplateBytes", What: what + ": " + prefix + t.Name, Got: humanBytes(float64(len(t.Data))), Max: humanBytes(float64(lim.MaxTemplateBytes))}
			}
		}
		for _, d := range c.Dependencies() {
			if err := walk(d, prefix+"charts/"+d.Name()+"/"); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(c, ""); err != nil {
		return err
	}
	if over(files, lim.MaxFiles) {
		return &LimitError{Limit: "MaxFiles", What: what + " with its dependencies", Got: fmt.Sprintf("%d files", files), Max: fmt.Sprint(lim.MaxFiles)}
	}
	if over(total, lim.MaxChartBytes) {
		return &LimitError{Limit: "MaxChartBytes", What: what + " with its dependencies", Got: humanBytes(float64(total)), Max: humanBytes(float64(lim.MaxChartBytes))}
	}
	return nil
}
