package bot

import (
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/publish"
)

// counted is a client that made some calls and had some fail.
type counted struct{}

func (counted) Calls() map[string]int  { return map[string]int{"list": 3} }
func (counted) Errors() map[string]int { return map[string]int{"list": 1} }

// exported returns the names of the samples driftfix's metrics serve once
// every one has a value: a histogram's _bucket, _sum and _count included.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	m := NewMetrics()
	m.SetBuild("1.2.3", "abc")
	m.SetLeader(true)
	m.Watch("argocd", "main", counted{})
	o := Outcome{Result: plan.CycleResult{Scanned: 2, Stuck: []plan.Stuck{{Findings: []drift.Kept{{Cause: drift.Cause("hpa-replicas")}}}}}, Duration: time.Second,
		Published: publish.Published{Opened: []string{"acme/web#1"}, Errors: []error{errors.New("publish failed")}}}
	m.observe(o, time.Now(), true)
	m.Delivery("pull_request", "queued")
	m.work(events.Work{Kind: events.Predict}, nil, time.Second)
	m.PolicyReload(true)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	names := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(strings.Fields(line)[0], "{")
		names[name] = true
	}
	return names
}

var metricName = regexp.MustCompile(`\bdriftfix_[a-z0-9_]+`)

// unknownMetrics returns the driftfix metrics an expression names that are
// not exported.
func unknownMetrics(expr string, names map[string]bool) []string {
	var out []string
	for _, n := range metricName.FindAllString(expr, -1) {
		if !names[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// TestMetricsExported: the metrics the README and the alerts rely on are
// served.
func TestMetricsExported(t *testing.T) {
	names := exported(t)
	for _, want := range []string{"driftfix_build_info", "driftfix_leader", "driftfix_last_successful_cycle_timestamp_seconds",
		"driftfix_last_cycle_timestamp_seconds", "driftfix_apps_scanned_total", "driftfix_apps_stuck", "driftfix_apps_reused", "driftfix_findings",
		"driftfix_pull_requests_total", "driftfix_api_calls_total", "driftfix_api_errors_total", "driftfix_errors_total",
		"driftfix_cycle_duration_seconds_bucket"} {
		if !names[want] {
			t.Errorf("%s is not served", want)
		}
	}
	// The check below finds a name that is not served.
	if got := unknownMetrics(`rate(driftfix_api_calls_total[5m]) / driftfix_nope_total`, names); len(got) != 1 || got[0] != "driftfix_nope_total" {
		t.Errorf("unknownMetrics found %v", got)
	}
}

// TestMonitoringUsesExportedMetrics: every expression of the PrometheusRule
// and of the Grafana dashboard in deploy/monitoring names only metrics
// driftfix serves, and every alert says how bad it is and what happened.
func TestMonitoringUsesExportedMetrics(t *testing.T) {
	names := exported(t)
	raw, err := os.ReadFile("../deploy/monitoring/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		APIVersion string         `yaml:"apiVersion"`
		Kind       string         `yaml:"kind"`
		Metadata   map[string]any `yaml:"metadata"`
		Spec       struct {
			Groups []struct {
				Name  string `yaml:"name"`
				Rules []struct {
					Alert       string            `yaml:"alert"`
					Expr        string            `yaml:"expr"`
					For         string            `yaml:"for"`
					Labels      map[string]string `yaml:"labels"`
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&rule); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" || len(rule.Spec.Groups) == 0 {
		t.Fatalf("not a PrometheusRule: %s %s", rule.APIVersion, rule.Kind)
	}
	var used []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if bad := unknownMetrics(r.Expr, names); len(bad) > 0 {
				t.Errorf("alert %s names metrics driftfix does not serve: %v", r.Alert, bad)
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") || strings.Count(r.Expr, "[") != strings.Count(r.Expr, "]") {
				t.Errorf("alert %s: unbalanced brackets in %q", r.Alert, r.Expr)
			}
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" || !slices.Contains([]string{"info", "warning", "critical"}, r.Labels["severity"]) {
				t.Errorf("rule %q lacks an alert name, expression, summary or severity", r.Alert)
			}
			used = append(used, metricName.FindAllString(r.Expr, -1)...)
		}
	}
	for _, want := range []string{"driftfix_last_successful_cycle_timestamp_seconds", "driftfix_leader", "driftfix_build_info"} {
		if !slices.Contains(used, want) {
			t.Errorf("no alert uses %s", want)
		}
	}

	raw, err = os.ReadFile("../deploy/monitoring/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	var shown []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, q := range p.Targets {
			if bad := unknownMetrics(q.Expr, names); len(bad) > 0 {
				t.Errorf("panel %q names metrics driftfix does not serve: %v", p.Title, bad)
			}
			shown = append(shown, metricName.FindAllString(q.Expr, -1)...)
		}
	}
	// Every driftfix metric is on the dashboard.
	var missing []string
	for n := range names {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if strings.HasPrefix(n, "driftfix_") && !slices.ContainsFunc(shown, func(s string) bool { return strings.HasPrefix(s, base) }) {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard shows nothing of %v", missing)
	}
}
