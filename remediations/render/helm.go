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
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/driftfix/driftfix/bot/drift"
)

// HelmOptions are the parts of an Application's Helm source that change a render.
type HelmOptions struct {
	ChartDir     string         // chart path in the repository
	ValueFiles   []string       // relative to ChartDir, in order
	ValuesObject map[string]any // spec.source.helm.valuesObject
	Values       string         // spec.source.helm.values
	Parameters   []Parameter    // spec.source.helm.parameters (--set)
	ReleaseName  string
	Namespace    string
	// Limits bound the render; zero fields take DefaultLimits.
	Limits Limits
}

// Parameter is one spec.source.helm.parameters entry.
type Parameter struct {
	Name, Value string
	ForceString bool
}

// HelmOptionsFor reads the Helm options of an Application's first Helm source.
func HelmOptionsFor(app drift.Object, src drift.Source) HelmOptions {
	o := HelmOptions{ChartDir: src.Path, ValueFiles: src.ValueFiles,
		ReleaseName: drift.Str(app, "metadata", "name"),
		Namespace:   drift.Str(app, "spec", "destination", "namespace")}
	for _, s := range append([]any{drift.Map(app, "spec", "source")}, drift.List(app, "spec", "sources")...) {
		m, _ := s.(map[string]any)
		if strings.Trim(drift.Str(m, "path"), "/") != src.Path {
			continue
		}
		h := drift.Map(m, "helm")
		if rn := drift.Str(h, "releaseName"); rn != "" {
			o.ReleaseName = rn
		}
		o.ValuesObject = drift.Map(h, "valuesObject")
		o.Values = drift.Str(h, "values")
		for _, e := range drift.List(h, "parameters") {
			fs, _ := drift.Lookup(e, "forceString").(bool)
			o.Parameters = append(o.Parameters, Parameter{Name: drift.Str(e, "name"), Value: drift.Str(e, "value"), ForceString: fs})
		}
	}
	return o
}

// Helm renders the chart under opts.ChartDir from the given files, with no
// network: dependencies are never fetched (a dependency that is not vendored
// under charts/ is a RemoteError naming its repository), a values.schema.json
// may only refer within itself (anything else is a RemoteError naming the
// schema and the reference) and lookup finds nothing. The chart, its values and the render are bounded by opts.Limits;
// going over one is a *LimitError naming the limit.
//
// The render runs in a process of its own (see the package doc), bounded in
// memory and CPU by the operating system and killed at opts.Limits.Timeout.
func Helm(files map[string][]byte, opts HelmOptions) ([]drift.Object, error) {
	opts.Limits = opts.Limits.withDefaults()
	return inChild("chart "+strings.Trim(opts.ChartDir, "/"), childRequest{Kind: "helm", Files: files, Helm: opts, Limits: opts.Limits})
}

// helm renders in this process: the body of Helm, run in a render process.
func helm(files map[string][]byte, opts HelmOptions) ([]drift.Object, error) {
	lim := opts.Limits.withDefaults()
	dir := strings.Trim(opts.ChartDir, "/")
	what := "chart " + dir
	var buf []*loader.BufferedFile
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
			return nil, &LimitError{Limit: "MaxTemplateBytes", What: what + ": " + rel, Got: humanBytes(float64(len(data))), Max: humanBytes(float64(lim.MaxTemplateBytes))}
		}
		total += int64(len(data))
		buf = append(buf, &loader.BufferedFile{Name: rel, Data: data})
	}
	if over(len(buf), lim.MaxFiles) {
		return nil, &LimitError{Limit: "MaxFiles", What: what, Got: fmt.Sprintf("%d files", len(buf)), Max: fmt.Sprint(lim.MaxFiles)}
	}
	if over(total, lim.MaxChartBytes) {
		return nil, &LimitError{Limit: "MaxChartBytes", What: what, Got: humanBytes(float64(total)), Max: humanBytes(float64(lim.MaxChartBytes))}
	}
	sort.Slice(buf, func(i, j int) bool { return buf[i].Name < buf[j].Name })
	for _, f := range buf {
		if path.Base(f.Name) == "values.yaml" && over(int64(len(f.Data)), lim.MaxValuesBytes) {
			return nil, &LimitError{Limit: "MaxValuesBytes", What: "values file " + path.Join(dir, f.Name), Got: humanBytes(float64(len(f.Data))), Max: humanBytes(float64(lim.MaxValuesBytes))}
		}
	}
	chart, err := loader.LoadFiles(buf)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	if err := checkVendored(chart, path.Join(dir, "Chart.yaml")); err != nil {
		return nil, err
	}
	if err := checkSchemas(chart, path.Join(dir, "Chart.yaml")); err != nil {
		return nil, err
	}
	var valuesBytes int64
	for _, f := range chart.Raw {
		if f.Name == "values.yaml" {
			valuesBytes += int64(len(f.Data))
		}
	}
	vals := map[string]any{}
	for _, vf := range opts.ValueFiles {
		data, ok := files[path.Join(dir, vf)]
		if !ok {
			return nil, fmt.Errorf("values file %s is not in the repository", path.Join(dir, vf))
		}
		if over(int64(len(data)), lim.MaxValuesBytes) {
			return nil, &LimitError{Limit: "MaxValuesBytes", What: "values file " + path.Join(dir, vf), Got: humanBytes(float64(len(data))), Max: humanBytes(float64(lim.MaxValuesBytes))}
		}
		valuesBytes += int64(len(data))
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("read values file %s: %w", path.Join(dir, vf), err)
		}
		vals = chartutil.MergeTables(m, vals)
	}
	if opts.Values != "" {
		if over(int64(len(opts.Values)), lim.MaxValuesBytes) {
			return nil, &LimitError{Limit: "MaxValuesBytes", What: "helm.values of the Application", Got: humanBytes(float64(len(opts.Values))), Max: humanBytes(float64(lim.MaxValuesBytes))}
		}
		valuesBytes += int64(len(opts.Values))
		var m map[string]any
		if err := yaml.Unmarshal([]byte(opts.Values), &m); err != nil {
			return nil, fmt.Errorf("read helm.values of the Application: %w", err)
		}
		vals = chartutil.MergeTables(m, vals)
	}
	if opts.ValuesObject != nil {
		b, _ := yaml.Marshal(opts.ValuesObject)
		if over(int64(len(b)), lim.MaxValuesBytes) {
			return nil, &LimitError{Limit: "MaxValuesBytes", What: "helm.valuesObject of the Application", Got: humanBytes(float64(len(b))), Max: humanBytes(float64(lim.MaxValuesBytes))}
		}
		valuesBytes += int64(len(b))
		vals = chartutil.MergeTables(copyMap(opts.ValuesObject), vals)
	}
	for _, p := range opts.Parameters {
		parse := strvals.ParseInto
		if p.ForceString {
			parse = strvals.ParseIntoString
		}
		valuesBytes += int64(len(p.Name) + len(p.Value))
		if err := parse(p.Name+"="+p.Value, vals); err != nil {
			return nil, fmt.Errorf("helm parameter %s: %w", p.Name, err)
		}
	}
	rv, err := chartutil.ToRenderValues(chart, vals, chartutil.ReleaseOptions{Name: opts.ReleaseName, Namespace: opts.Namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values for chart %s: %w", dir, err)
	}
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
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	var objs []drift.Object
	for _, n := range names {
		if strings.HasSuffix(n, "NOTES.txt") || path.Base(n)[0] == '_' {
			continue
		}
		dec := yaml.NewDecoder(bytes.NewReader([]byte(out[n])))
		for {
			var o map[string]any
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("parse rendered %s: %w", n, err)
			}
			if o == nil {
				continue
			}
			objs = append(objs, drift.NormalizeNumbers(o).(map[string]any))
		}
	}
	return objs, nil
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out[k] = copyMap(sub)
		} else {
			out[k] = v
		}
	}
	return out
}

// checkVendored refuses a chart whose Chart.yaml lists a dependency that is
// not under charts/: Argo CD would fetch it from its repository, and a render
// here never does.
func checkVendored(c *chart.Chart, file string) error {
	have := map[string]bool{}
	for _, d := range c.Dependencies() {
		have[d.Name()] = true
	}
	for _, d := range c.Metadata.Dependencies {
		if d == nil || have[d.Name] {
			continue
		}
		repo := d.Repository
		if repo == "" {
			repo = d.Name
		}
		return &RemoteError{File: file, URL: repo, Why: "dependency " + d.Name + " is not vendored under charts/, and dependencies are not fetched"}
	}
	for _, d := range c.Dependencies() {
		if err := checkVendored(d, path.Join(path.Dir(file), "charts", d.Name(), "Chart.yaml")); err != nil {
			return err
		}
	}
	return nil
}
