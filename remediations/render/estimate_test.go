package render

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

// estimateAndRender is a chart's estimate before rendering, as Helm
// measures it with its default values, and the bytes the render makes.
func estimateAndRender(t *testing.T, files map[string][]byte, dir string) (float64, int) {
	t.Helper()
	chart, err := loadChart(files, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(chart, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	caps, err := capabilities(HelmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValuesWithSchemaValidation(chart, map[string]any{}, chartutil.ReleaseOptions{Name: "r", Namespace: "n", Revision: 1, IsInstall: true}, caps, true)
	if err != nil {
		t.Fatal(err)
	}
	values, _ := asMap(rv["Values"])
	var valuesBytes int64
	for _, f := range chart.Raw {
		if f.Name == "values.yaml" {
			valuesBytes += int64(len(f.Data))
		}
	}
	est, _, err := estimate(chart, values, valuesBytes)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(chart, rv)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	size := 0
	for _, s := range out {
		size += len(s)
	}
	return est, size
}

// TestHelmEstimateOnRealCharts measures the estimate against the render of
// the chart folders DRIFTFIX_ESTIMATE_CHARTS names (separated by the path
// list separator), such as the official argo-cd chart: the estimate must
// not be below the render, and is logged beside it.
func TestHelmEstimateOnRealCharts(t *testing.T) {
	dirs := os.Getenv("DRIFTFIX_ESTIMATE_CHARTS")
	if dirs == "" {
		t.Skip("DRIFTFIX_ESTIMATE_CHARTS names no chart folders")
	}
	for _, root := range filepath.SplitList(dirs) {
		files := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(filepath.Dir(root), p)
			files[filepath.ToSlash(rel)] = b
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		est, size := estimateAndRender(t, files, filepath.Base(root))
		t.Logf("%s: estimate %s, render %s (%.2f×)", root, humanBytes(est), humanBytes(float64(size)), est/float64(size))
		if est < float64(size) {
			t.Errorf("%s: the estimate is below the render", root)
		}
	}
}

// genChart makes a chart of random values and templates built from the
// constructs charts use to copy their values: toYaml of a values path,
// of the dot a with or range sets, of a helper's dict argument, of default,
// merge and concat results, each indented.
func genChart(r *rand.Rand) map[string][]byte {
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(6); {
		case depth > 3 || k < 2:
			return strings.Repeat("v", 1+r.IntN(40))
		case k < 4:
			m := map[string]any{}
			for i := range 1 + r.IntN(5) {
				m[fmt.Sprintf("k%d", i)] = value(depth + 1)
			}
			return m
		default:
			var l []any
			for range r.IntN(6) {
				l = append(l, value(depth+1))
			}
			return l
		}
	}
	vals := map[string]any{}
	for i := range 4 {
		v := value(1)
		for {
			if _, ok := v.(string); !ok {
				break
			}
			v = value(1)
		}
		vals[fmt.Sprintf("v%d", i)] = v
	}
	vb, _ := yaml.Marshal(vals)
	path := func() string { return fmt.Sprintf(".Values.v%d", r.IntN(4)) }
	ind := func() int { return 2 * r.IntN(6) }
	var tmpl strings.Builder
	tmpl.WriteString("data:\n")
	for i := range 3 + r.IntN(6) {
		fmt.Fprintf(&tmpl, "  f%d: |\n", i)
		switch r.IntN(7) {
		case 0:
			fmt.Fprintf(&tmpl, "    {{- toYaml %s | nindent %d }}\n", path(), ind())
		case 1:
			fmt.Fprintf(&tmpl, "    {{- with %s }}{{ toYaml . | nindent %d }}{{ end }}\n", path(), ind())
		case 2:
			fmt.Fprintf(&tmpl, "    {{- range $k, $v := %s }}\n    {{ $k }}: {{ toYaml $v | nindent %d }}{{ end }}\n", path(), ind())
		case 3:
			fmt.Fprintf(&tmpl, "    {{- include \"c.block\" (dict \"ctx\" $ \"v\" %s) | nindent %d }}\n", path(), ind())
		case 4:
			fmt.Fprintf(&tmpl, "    {{- toYaml (default %s %s) | nindent %d }}\n", path(), path(), ind())
		case 5:
			fmt.Fprintf(&tmpl, "    {{- $m := mergeOverwrite (dict \"a\" %s) (dict \"b\" %s) }}{{ toYaml $m | nindent %d }}\n", path(), path(), ind())
		default:
			fmt.Fprintf(&tmpl, "    {{- range %s }}{{ range $.Values.v0 }}x{{ end }}{{ toYaml . | nindent %d }}{{ end }}\n", path(), ind())
		}
	}
	return map[string][]byte{
		"c/Chart.yaml":             []byte(chartYAML),
		"c/values.yaml":            vb,
		"c/templates/_helpers.tpl": []byte("{{- define \"c.block\" }}{{ toYaml .v }}{{- range .ctx.Values.v1 }} {{ . | toString | trunc 3 }}{{ end }}{{ end }}\n"),
		"c/templates/cm.yaml":      []byte(tmpl.String()),
	}
}

// TestHelmEstimateBoundsGeneratedCharts: on generated charts that copy
// their values into manifests, the estimate is never below the render and
// stays within a small factor of it (the factor is logged): charging a
// copied value its own size, not the whole values file's, keeps charts of
// large values admitted.
func TestHelmEstimateBoundsGeneratedCharts(t *testing.T) {
	const n = 300
	var ratios []float64
	for i := range n {
		r := rand.New(rand.NewPCG(42, uint64(i)))
		files := genChart(r)
		est, size := estimateAndRender(t, files, "c")
		if est < float64(size) {
			t.Errorf("chart %d: estimate %.0f below the render's %d bytes\n%s\n%s", i, est, size, files["c/templates/cm.yaml"], files["c/values.yaml"])
			continue
		}
		ratios = append(ratios, est/float64(size))
	}
	slices.Sort(ratios)
	if len(ratios) == 0 {
		return
	}
	med, p90, top := ratios[len(ratios)/2], ratios[len(ratios)*9/10], ratios[len(ratios)-1]
	t.Logf("estimate / render over %d generated charts: median %.2f, 90th percentile %.2f, largest %.2f", len(ratios), med, p90, top)
	if med > 8 {
		t.Errorf("the median estimate is %.1f times the render: too loose", med)
	}
}

// FuzzEstimate: the estimate reads any template and values a chart holds
// without failing other than with an error, and is never negative.
func FuzzEstimate(f *testing.F) {
	for i := range 4 {
		files := genChart(rand.New(rand.NewPCG(7, uint64(i))))
		f.Add(string(files["c/templates/cm.yaml"]), string(files["c/values.yaml"]))
	}
	for _, s := range []string{
		"{{ include }}{{ include \"x\" }}{{ include \"x\" . 1 }}",
		"{{ range $a, $b := dict }}{{ toYaml $b | nindent 2 }}{{ end }}",
		"{{ $x := default .Values.a .Values.b }}{{ with $x }}{{ tpl (toYaml .) $ }}{{ end }}",
		"{{ define \"h\" }}{{ toYaml .v.w }}{{ include \"h\" . }}{{ end }}{{ include \"h\" (dict \"v\" .Values) }}",
		"{{ toYaml (mergeOverwrite (deepCopy .Values.a) (dict) .Values.b) | indent 4 }}{{ concat list .Values.l | toJson }}",
	} {
		f.Add(s, "a: {x: 1}\nb: [1, 2]\nl: [a]\n")
	}
	f.Fuzz(func(t *testing.T, tmpl, values string) {
		files := map[string][]byte{"c/Chart.yaml": []byte(chartYAML), "c/values.yaml": []byte(values), "c/templates/t.yaml": []byte(tmpl)}
		chart, err := loadChart(files, "c")
		if err != nil {
			return
		}
		vals, _ := asMap(chart.Values)
		est, _, err := estimate(chart, vals, int64(len(values)))
		if err == nil && (est < 0 || est != est) {
			t.Fatalf("estimate %v", est)
		}
	})
}
