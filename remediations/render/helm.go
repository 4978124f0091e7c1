// Package render produces an application's desired manifests from its
// repository files in memory, as Argo CD's repo-server would: a Helm chart
// with the Application's values. It does no I/O and no network call (a
// template's lookup finds nothing, as under `helm template`).
package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
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

// Helm renders the chart under opts.ChartDir from the given files.
func Helm(files map[string][]byte, opts HelmOptions) ([]drift.Object, error) {
	dir := strings.Trim(opts.ChartDir, "/")
	var buf []*loader.BufferedFile
	for name, data := range files {
		rel := name
		if dir != "" {
			if !strings.HasPrefix(name, dir+"/") {
				continue
			}
			rel = strings.TrimPrefix(name, dir+"/")
		}
		buf = append(buf, &loader.BufferedFile{Name: rel, Data: data})
	}
	sort.Slice(buf, func(i, j int) bool { return buf[i].Name < buf[j].Name })
	chart, err := loader.LoadFiles(buf)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	vals := map[string]any{}
	for _, vf := range opts.ValueFiles {
		data, ok := files[path.Join(dir, vf)]
		if !ok {
			return nil, fmt.Errorf("values file %s is not in the repository", path.Join(dir, vf))
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("read values file %s: %w", path.Join(dir, vf), err)
		}
		vals = chartutil.MergeTables(m, vals)
	}
	if opts.Values != "" {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(opts.Values), &m); err != nil {
			return nil, fmt.Errorf("read helm.values of the Application: %w", err)
		}
		vals = chartutil.MergeTables(m, vals)
	}
	if opts.ValuesObject != nil {
		vals = chartutil.MergeTables(copyMap(opts.ValuesObject), vals)
	}
	for _, p := range opts.Parameters {
		parse := strvals.ParseInto
		if p.ForceString {
			parse = strvals.ParseIntoString
		}
		if err := parse(p.Name+"="+p.Value, vals); err != nil {
			return nil, fmt.Errorf("helm parameter %s: %w", p.Name, err)
		}
	}
	rv, err := chartutil.ToRenderValues(chart, vals, chartutil.ReleaseOptions{Name: opts.ReleaseName, Namespace: opts.Namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values for chart %s: %w", dir, err)
	}
	out, err := engine.Render(chart, rv)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", dir, err)
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
