package classifiers_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// snap describes a small snapshot; every object is YAML text.
type snap struct {
	app     string // the Application; a default one deploying to namespace shop when empty
	target  string // the one resource's desired state ("" = not in Git)
	live    string // its live state ("" = not in the cluster)
	dryRun  string // optional: a server-side dry-run apply of target
	cluster []string
	// inGit are more resources of the application, each in Git and live
	// alike (an HPA of the same chart, a KEDA ScaledObject).
	inGit   []string
	renders [][]string
	files   map[string]string
	writers []drift.Writer // the policy's writers
}

const defaultApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  source: {repoURL: https://git.example.com/shop.git, path: apps/web, targetRevision: main}
status: {sync: {status: OutOfSync}}
`

func parseYAML(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("test object does not parse: %v\n%s", err, s)
	}
	return v
}

// build turns the description into a snapshot through the snapshot reader,
// so the objects take the same shape as a file's.
func (s snap) build(t *testing.T) *drift.Snapshot {
	t.Helper()
	app := s.app
	if app == "" {
		app = defaultApp
	}
	res := map[string]any{}
	if s.target != "" {
		res["target"] = parseYAML(t, s.target)
	}
	if s.live != "" {
		res["live"] = parseYAML(t, s.live)
	}
	if s.dryRun != "" {
		res["dryRun"] = parseYAML(t, s.dryRun)
	}
	resources := []any{res}
	for _, o := range s.inGit {
		resources = append(resources, map[string]any{"target": parseYAML(t, o), "live": parseYAML(t, o)})
	}
	doc := map[string]any{"apiVersion": "driftfix/v1", "kind": "Snapshot", "application": parseYAML(t, app), "resources": resources}
	if len(s.cluster) > 0 {
		var cl []any
		for _, o := range s.cluster {
			cl = append(cl, parseYAML(t, o))
		}
		doc["cluster"] = cl
	}
	if len(s.renders) > 0 {
		var rs []any
		for _, r := range s.renders {
			var objs []any
			for _, o := range r {
				objs = append(objs, parseYAML(t, o))
			}
			rs = append(rs, objs)
		}
		doc["renders"] = rs
	}
	if len(s.files) > 0 {
		doc["repo"] = map[string]any{"files": s.files}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := drift.ParseSnapshot(data)
	if err != nil {
		t.Fatalf("snapshot does not parse: %v", err)
	}
	return out
}

// want is what a row expects of one classifier at one path.
type want struct {
	claims   bool
	fix      drift.FixKind
	evidence []string    // substrings, each in some evidence line
	absent   []string    // substrings no evidence line may hold
	cause    drift.Cause // what Run names for the path with the whole registry; "" = not checked
}

// diagnose builds the Input the way a diagnosis does.
func diagnose(t *testing.T, s *drift.Snapshot) *classifiers.Input {
	t.Helper()
	cmp, settings, err := diff.Compare(s)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	return classifiers.NewInput(s, settings, cmp)
}

// checkDiff asks cl about the difference at path and Run about the same path.
func checkDiff(t *testing.T, cl classifiers.Classifier, s snap, path string, w want) {
	t.Helper()
	in := diagnose(t, s.build(t))
	in.Sensitivity = drift.Sensitivity{Writers: s.writers}
	var d *drift.Difference
	var paths []string
	for i := range in.Comparison.Diffs {
		paths = append(paths, in.Comparison.Diffs[i].Path.String())
		if in.Comparison.Diffs[i].Path.String() == path {
			d = &in.Comparison.Diffs[i]
		}
	}
	if d == nil {
		t.Fatalf("the diff finds no difference at %q (it finds %q)", path, paths)
	}
	v, ok := cl.Classify(&classifiers.Case{Input: in, Diff: d})
	checkVerdict(t, cl, v, ok, w)
	if w.cause != "" {
		var got []drift.Cause
		for _, f := range classifiers.Run(in, classifiers.Registry) {
			if f.Path.String() == path && f.Resource == d.Resource {
				got = append(got, f.Cause)
			}
		}
		if len(got) != 1 || got[0] != w.cause {
			t.Errorf("Run names %v for %s, want %s", got, path, w.cause)
		}
	}
}

func checkVerdict(t *testing.T, cl classifiers.Classifier, v classifiers.Verdict, ok bool, w want) {
	t.Helper()
	if ok != w.claims {
		t.Fatalf("%s claims = %v, want %v (evidence %q)", cl.Name, ok, w.claims, v.Evidence)
	}
	if !ok {
		return
	}
	if v.Fix != w.fix {
		t.Errorf("fix = %q, want %q (evidence %q)", v.Fix, w.fix, v.Evidence)
	}
	if v.Fix == drift.FixNone && v.Reason == "" {
		t.Errorf("fix none without a reason")
	}
	handOver := v.Fix == drift.FixRemoveField || v.Fix == drift.FixIgnoreDifference
	if cl.Name != drift.CauseNormalized && handOver != (v.Grant != "") {
		t.Errorf("fix %s with grant %q: a hand-over needs a grant, and only a hand-over has one", v.Fix, v.Grant)
	}
	checkEvidenceFields(t, cl.Name, v.Evidence)
	all := drift.EvidenceText(v.Evidence, "\n")
	for _, s := range w.evidence {
		if !strings.Contains(all, s) {
			t.Errorf("evidence lacks %q:\n%s", s, all)
		}
	}
	for _, s := range w.absent {
		if strings.Contains(all, s) {
			t.Errorf("evidence holds %q:\n%s", s, all)
		}
	}
}

// checkEvidenceFields checks what later stages read of a verdict's
// evidence: every piece has a listed kind and a sentence, and each cause
// carries the fields that group and judge it (the webhook a fleet shares,
// the autoscaler, the writer, the rule's scope).
func checkEvidenceFields(t *testing.T, cause drift.Cause, ev []drift.Evidence) {
	t.Helper()
	for _, e := range ev {
		if !slices.Contains(drift.EvidenceKinds, e.Kind) || e.Text == "" {
			t.Errorf("evidence %+v: a kind of drift.EvidenceKinds and a sentence needed", e)
		}
	}
	has := func(ok func(e drift.Evidence) bool) bool { return slices.ContainsFunc(ev, ok) }
	switch cause {
	case drift.CauseWebhookMutation:
		inProcess := len(ev) > 0 && ev[0].Kind == drift.EvidenceAdmission && ev[0].Detail != "" // no webhook object: its annotation
		if !inProcess && (len(ev) == 0 || ev[0].Kind != drift.EvidenceWebhook || ev[0].Object == nil || ev[0].Object.Kind != "MutatingWebhookConfiguration" || ev[0].Webhook == "") {
			t.Errorf("webhook-mutation evidence does not start with the webhook as fields: %+v", ev)
		}
	case drift.CauseHPAReplicas:
		if !has(func(e drift.Evidence) bool {
			return e.Kind == drift.EvidenceHPA && e.Object != nil && e.Object.Kind == "HorizontalPodAutoscaler"
		}) {
			t.Errorf("hpa-replicas evidence names no autoscaler as a field: %+v", ev)
		}
	case drift.CauseControllerWrite, drift.CauseManualChange:
		// A write names its field manager; a deletion what deleted the
		// object, or what was ruled out; a removal the label of the
		// component that manages the object.
		if !has(func(e drift.Evidence) bool {
			return e.Kind == drift.EvidenceManager && e.Manager != "" || e.Kind == drift.EvidenceDeletion ||
				e.Kind == drift.EvidenceRuledOut && e.Detail != "" || e.Kind == drift.EvidenceOwner && e.Path != ""
		}) {
			t.Errorf("%s evidence names no field manager, deletion or ruled-out cause as a field: %+v", cause, ev)
		}
	case drift.CauseBroadIgnore:
		if !has(func(e drift.Evidence) bool {
			return (e.Kind == drift.EvidenceBroadRule || e.Kind == drift.EvidenceSensitiveRule) && e.Detail != ""
		}) {
			t.Errorf("broad-ignore evidence says the rule's scope in no field: %+v", ev)
		}
	}
}

func replaceOnce(s, old, new string) string { return strings.Replace(s, old, new, 1) }
