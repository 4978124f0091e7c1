package predict

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/predict/sariftest"
)

// validSARIF fails the test unless b is a SARIF 2.1.0 log by the schema.
func validSARIF(t *testing.T, b []byte) {
	t.Helper()
	sch, err := sariftest.Schema()
	if err != nil {
		t.Fatalf("load the SARIF schema: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("SARIF does not validate against the 2.1.0 schema: %v\n%s", err, b)
	}
}

// sarifDoc is the part of a SARIF log the tests read.
type sarifDoc struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful bool `json:"executionSuccessful"`
			ExitCode            *int `json:"exitCode"`
			Notifications       []struct {
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []sarifLocation `json:"locations"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations           []sarifLocation   `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Properties          resultProperties  `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

func parseSARIF(t *testing.T, b []byte) sarifDoc {
	t.Helper()
	validSARIF(t, b)
	var d sarifDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 1 || len(d.Runs[0].Invocations) != 1 {
		t.Fatalf("want one run with one invocation:\n%s", b)
	}
	// What code scanning needs of each result beyond the schema.
	for i, r := range d.Runs[0].Results {
		if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" || r.Locations[0].PhysicalLocation.Region == nil ||
			r.Locations[0].PhysicalLocation.Region.StartLine < 1 || r.PartialFingerprints[FingerprintKey] == "" {
			t.Fatalf("result %d lacks a file, a line or a fingerprint:\n%s", i, b)
		}
	}
	return d
}

func hpaPrediction(app, ns, file string, line int) Prediction {
	return Prediction{Application: app, File: file, Line: line, Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"},
		Path: drift.Pointer{"spec", "replicas"}, Cause: drift.CauseHPAReplicas, Fix: drift.FixRemoveField, FixFile: file,
		Evidence: []drift.Evidence{drift.Say(drift.EvidenceHPA, "HorizontalPodAutoscaler web scales it")}}
}

// TestSARIFOneResultPerDrift: a shared base reached by three applications
// (each its own namespace) is one result that lists them, at the base's
// file and line; a drift without a file is at its application's manifest;
// the fingerprint does not change with the applications, the namespaces or
// the line, and differs between drifts; every log validates against the
// SARIF 2.1.0 schema.
func TestSARIFOneResultPerDrift(t *testing.T) {
	ps := []Prediction{
		hpaPrediction("web-dev", "dev", "base/deploy.yaml", 6),
		hpaPrediction("web-prod", "prod", "base/deploy.yaml", 6),
		hpaPrediction("web-stage", "stage", "base/deploy.yaml", 6),
		{Application: "api", Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "api", Name: "api"}, Cause: drift.CauseWebhookMutation, Fix: drift.FixNone, Reason: "not known before it runs"},
	}
	manifests := map[string]string{"api": "apps/api.yaml", "web-dev": "apps/web-dev.yaml"}
	b, err := SARIFLog(SARIFRun{Result: &Result{Predictions: ps}, Manifests: manifests, ExitCode: 1, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d := parseSARIF(t, b)
	rs := d.Runs[0].Results
	if len(rs) != 2 {
		t.Fatalf("results %d, want 2 (one per drift):\n%s", len(rs), b)
	}
	web := rs[0]
	if web.RuleID != "hpa-replicas" || len(web.Locations) != 1 || web.Locations[0].PhysicalLocation.ArtifactLocation.URI != "base/deploy.yaml" ||
		web.Locations[0].PhysicalLocation.Region == nil || web.Locations[0].PhysicalLocation.Region.StartLine != 6 {
		t.Errorf("the shared base's result: %+v", web)
	}
	if got := strings.Join(web.Properties.Applications, ","); got != "web-dev,web-prod,web-stage" {
		t.Errorf("applications %q", got)
	}
	if !strings.Contains(web.Message.Text, "Applications web-dev, web-prod, web-stage:") || !strings.Contains(web.Message.Text, "in 3 namespaces") {
		t.Errorf("message %q", web.Message.Text)
	}
	api := rs[1]
	if len(api.Locations) != 1 || api.Locations[0].PhysicalLocation.ArtifactLocation.URI != "apps/api.yaml" || api.Locations[0].PhysicalLocation.Region == nil ||
		api.Locations[0].PhysicalLocation.Region.StartLine != 1 {
		t.Errorf("a drift without a file is at its Application's manifest, line 1: %+v", api.Locations)
	}
	fp := web.PartialFingerprints[FingerprintKey]
	if fp == "" || fp == api.PartialFingerprints[FingerprintKey] {
		t.Errorf("fingerprints %q and %q", fp, api.PartialFingerprints[FingerprintKey])
	}

	// Without any file to place it at, a drift is a notification: code
	// scanning refuses a whole log for one result without a location.
	b, err = SARIFLog(SARIFRun{Result: &Result{Predictions: ps[3:]}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if d := parseSARIF(t, b); len(d.Runs[0].Results) != 0 || len(d.Runs[0].Invocations[0].Notifications) != 1 ||
		!strings.Contains(d.Runs[0].Invocations[0].Notifications[0].Message.Text, "Application api: Deployment api/api fields will differ") {
		t.Errorf("an unlocated drift:\n%s", b)
	}

	// Another run: one application, another namespace, the line moved.
	alone, err := SARIFLog(SARIFRun{Result: &Result{Predictions: []Prediction{hpaPrediction("web-prod", "elsewhere", "base/deploy.yaml", 9)}}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := parseSARIF(t, alone).Runs[0].Results[0].PartialFingerprints[FingerprintKey]; got != fp {
		t.Errorf("the fingerprint changed with the applications, namespace or line: %s, was %s", got, fp)
	}
	// The same path in another file is another drift.
	other, _ := SARIFLog(SARIFRun{Result: &Result{Predictions: []Prediction{hpaPrediction("web-prod", "prod", "overlays/prod/deploy.yaml", 6)}}, Version: "test"})
	if got := parseSARIF(t, other).Runs[0].Results[0].PartialFingerprints[FingerprintKey]; got == fp {
		t.Errorf("another file's drift has the same fingerprint %s", got)
	}
}

// TestSARIFNotifications: the applications not predicted are warnings of
// the invocation at their manifest, with why and what would let them; a
// run that failed has no result, executionSuccessful false and the error;
// --strict's failure is an error notification. A file name that is not a
// URI as it stands is escaped.
func TestSARIFNotifications(t *testing.T) {
	res := &Result{
		Applications: []string{"web"},
		Predictions:  []Prediction{hpaPrediction("web", "shop", "apps/web app/deploy #1.yaml", 3)},
		NotPredicted: []NotPredicted{
			{Application: "charts", Kind: "Application", File: "apps/charts.yaml", Reason: "the chart comes from a Helm repository", Needs: "Argo CD at hand (--argocd-server)"},
			{Application: "known", Kind: "Application", Reason: "its source is another repository"},
		},
	}
	b, err := SARIFLog(SARIFRun{Result: res, Strict: "--strict: 2 applications were not predicted", ExitCode: 2, Manifests: map[string]string{"known": "apps/known.yaml"}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d := parseSARIF(t, b)
	inv := d.Runs[0].Invocations[0]
	if !inv.ExecutionSuccessful || inv.ExitCode == nil || *inv.ExitCode != 2 || len(inv.Notifications) != 3 {
		t.Fatalf("invocation: %+v", inv)
	}
	n := inv.Notifications[0]
	if n.Level != "warning" || !strings.Contains(n.Message.Text, "charts was not predicted: the chart comes from a Helm repository. To predict it: Argo CD at hand") ||
		len(n.Locations) != 1 || n.Locations[0].PhysicalLocation.ArtifactLocation.URI != "apps/charts.yaml" {
		t.Errorf("not predicted: %+v", n)
	}
	if l := inv.Notifications[1].Locations; len(l) != 1 || l[0].PhysicalLocation.ArtifactLocation.URI != "apps/known.yaml" {
		t.Errorf("an application without a file is at its manifest: %+v", l)
	}
	if s := inv.Notifications[2]; s.Level != "error" || !strings.Contains(s.Message.Text, "--strict") {
		t.Errorf("strict: %+v", s)
	}
	if u := d.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI; u != "apps/web%20app/deploy%20%231.yaml" {
		t.Errorf("uri %q", u)
	}

	failed, err := SARIFLog(SARIFRun{Err: errors.New("--base main: no such revision"), ExitCode: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d = parseSARIF(t, failed)
	inv = d.Runs[0].Invocations[0]
	if inv.ExecutionSuccessful || len(d.Runs[0].Results) != 0 || len(inv.Notifications) != 1 || inv.Notifications[0].Level != "error" ||
		inv.Notifications[0].Message.Text != "--base main: no such revision" {
		t.Errorf("failed run:\n%s", failed)
	}
}

// TestSARIFSchemaRefusesBrokenLogs: the schema test can fail: a log
// without version, or a result whose level is not SARIF's, is refused.
func TestSARIFSchemaRefusesBrokenLogs(t *testing.T) {
	sch, err := sariftest.Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"runs": []}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "invocations": [{}]}]}`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
