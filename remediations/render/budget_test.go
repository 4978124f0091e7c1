package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const chartYAML = "apiVersion: v2\nname: c\nversion: 0.1.0\n"

// hostileCharts are crafted charts that a render must refuse, each with the
// limit it must name. They are the shapes that exhausted the bot before
// renders were bounded: loops multiplied out, includes that double, huge
// strings, key generation in a loop, oversized inputs.
func hostileCharts() []struct {
	name  string
	files map[string]string
	lim   Limits
	limit string
} {
	doubling := "{{- define \"d0\" }}xxxxxxxxxxxxxxxx{{ end }}\n"
	for i := 1; i <= 40; i++ {
		doubling += fmt.Sprintf("{{- define \"d%d\" }}{{ include \"d%d\" . }}{{ include \"d%d\" . }}{{ end }}\n", i, i-1, i-1)
	}
	var list strings.Builder
	list.WriteString("l:\n")
	for i := 0; i < 2000; i++ {
		list.WriteString("- a\n")
	}
	return []struct {
		name  string
		files map[string]string
		lim   Limits
		limit string
	}{
		{name: "nested range until", limit: "MaxRenderedBytes", files: map[string]string{
			"templates/x.yaml": "{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}xxxxxxxx{{ end }}{{ end }}{{ end }}"}},
		{name: "include doubling", limit: "MaxRenderedBytes", files: map[string]string{
			"templates/_helpers.tpl": doubling, "templates/x.yaml": "data: {{ include \"d40\" . }}\n"}},
		{name: "repeat", limit: "MaxRenderedBytes", files: map[string]string{
			"templates/x.yaml": "data: {{ repeat 1000000000 \"x\" }}\n"}},
		{name: "nested range over values", limit: "MaxRenderedBytes", files: map[string]string{
			"values.yaml":      list.String(),
			"templates/x.yaml": "{{ range .Values.l }}{{ range $.Values.l }}{{ range $.Values.l }}x{{ end }}{{ end }}{{ end }}"}},
		{name: "a recursive include in an empty range beside a loop", limit: "MaxRenderedBytes", files: map[string]string{
			"values.yaml":            "none: []\n",
			"templates/_helpers.tpl": "{{- define \"rec\" }}{{ include \"rec\" . }}{{ end }}\n",
			"templates/a.yaml":       "{{ range .Values.none }}{{ include \"rec\" . }}{{ end }}",
			"templates/b.yaml":       "{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}xxxxxxxx{{ end }}{{ end }}{{ end }}"}},
		{name: "keys generated in a loop", limit: "MaxRenderedBytes", files: map[string]string{
			"templates/x.yaml": "{{ range until 20 }}{{ $k := genPrivateKey \"rsa\" }}{{ end }}"}},
		{name: "big values file", limit: "MaxValuesBytes", files: map[string]string{
			"values.yaml": "big: " + strings.Repeat("x", 3<<20) + "\n", "templates/x.yaml": "a: b\n"}},
		{name: "big template", limit: "MaxTemplateBytes", lim: Limits{MaxTemplateBytes: 1 << 10}, files: map[string]string{
			"templates/x.yaml": "# " + strings.Repeat("x", 2<<10) + "\n"}},
		{name: "many files", limit: "MaxFiles", lim: Limits{MaxFiles: 5}, files: func() map[string]string {
			m := map[string]string{}
			for i := 0; i < 10; i++ {
				m[fmt.Sprintf("templates/f%d.yaml", i)] = "# empty\n"
			}
			return m
		}()},
		{name: "big chart", limit: "MaxChartBytes", lim: Limits{MaxChartBytes: 4 << 10}, files: map[string]string{
			"files/blob.txt": strings.Repeat("x", 8<<10), "templates/x.yaml": "a: b\n"}},
		{name: "slow render", limit: "Timeout", lim: Limits{Timeout: 20 * time.Millisecond}, files: map[string]string{
			"templates/x.yaml": "{{ range until 5 }}{{ $ca := genCA \"x\" 365 }}{{ end }}"}},
	}
}

func chartFiles(m map[string]string) map[string][]byte {
	files := map[string][]byte{"c/Chart.yaml": []byte(chartYAML)}
	for k, v := range m {
		files["c/"+k] = []byte(v)
	}
	return files
}

func TestHelmRenderOverBudgetFailsCleanly(t *testing.T) {
	for _, c := range hostileCharts() {
		t.Run(c.name, func(t *testing.T) {
			_, err := Helm(chartFiles(c.files), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: c.lim})
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("err = %v, want the %s limit", err, c.limit)
			}
			if !strings.Contains(err.Error(), c.limit) || !strings.Contains(err.Error(), "chart c") && !strings.Contains(err.Error(), "c/values.yaml") {
				t.Errorf("err = %v: it must name the limit and the chart", err)
			}
		})
	}
}

func TestHelmEstimateAdmitsOrdinaryCharts(t *testing.T) {
	files := chartFiles(map[string]string{
		"values.yaml":            "containers:\n- {name: a, ports: [80, 443]}\n- {name: b, ports: [8080]}\nlabels: {x: y}\n",
		"templates/_helpers.tpl": "{{- define \"c.labels\" }}app: {{ .Release.Name }}\n{{- range $k, $v := .Values.labels }}\n{{ $k }}: {{ $v }}{{ end }}{{ end }}\n",
		"templates/d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include \"c.labels\" . | nindent 4 }}\nspec:\n  template:\n    spec:\n      containers:\n" +
			"      {{- range .Values.containers }}\n      - name: {{ .name }}\n        ports:\n        {{- range .ports }}\n        - containerPort: {{ . }}\n        {{- end }}\n      {{- end }}\n",
	})
	objs, err := Helm(files, HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: Limits{MaxRenderedBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("rendered %v", objs)
	}
}

// TestHelmEstimateValuesChangedInPlace: a template that sets a value in
// place makes the values file no measure of what is printed, so a loop
// printing that value is charged as unseen, not as the file says.
func TestHelmEstimateValuesChangedInPlace(t *testing.T) {
	files := chartFiles(map[string]string{
		"values.yaml":      "a: {}\n",
		"templates/x.yaml": "{{ $_ := set .Values \"big\" (repeat 100000 \"x\") }}{{ range until 1000 }}{{ toYaml $.Values.big }}{{ end }}",
	})
	chart, err := loadChart(files, "c")
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := asMap(chart.Values)
	est, _, err := estimate(chart, vals, 6)
	if err != nil {
		t.Fatal(err)
	}
	// unseen: the whole values file per print, with the loop's count
	if est < 1000*6 {
		t.Errorf("estimate %.0f: the value set in place is charged as the file says it is (absent)", est)
	}
	files["c/templates/x.yaml"] = []byte("{{ $d := dict }}{{ $_ := set $d \"k\" 1 }}{{ range until 1000 }}{{ toYaml $.Values.a }}{{ end }}")
	chart, err = loadChart(files, "c")
	if err != nil {
		t.Fatal(err)
	}
	if est, _, _ = estimate(chart, vals, 6); est > 1000*6 {
		t.Errorf("estimate %.0f: a dict the template made and set is not the values", est)
	}
}
