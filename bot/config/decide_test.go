package config

import (
	"reflect"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
)

// TestDecide: the policy's allowed kinds are planned in its order, a cause it
// does not list keeps the classifier's kind, refused kinds are passed over with
// the reason, and nothing is planned when no allowed kind is left.
func TestDecide(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\n"
	hpa := drift.Finding{Cause: drift.CauseHPAReplicas, Path: drift.MustPointer("/spec/replicas"), Remediation: drift.Remediation{Kind: drift.FixRemoveField}}
	hook := drift.Finding{Cause: drift.CauseWebhookMutation, Path: drift.MustPointer("/spec/x"), Remediation: drift.Remediation{Kind: drift.FixSetValue}}
	manual := drift.Finding{Cause: drift.CauseManualChange, Remediation: drift.Remediation{Kind: drift.FixNone, Reason: "a manual change is real drift"}}
	type refused = map[drift.FixKind]string
	cases := []struct {
		name    string
		policy  string
		project string // the application's project, for overrides
		f       drift.Finding
		refused refused
		want    remediations.Decision
	}{
		{name: "no policy keeps the suggestion", f: hpa,
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixRemoveField}}},
		{name: "a cause the policy does not list keeps the suggestion", policy: "policy: {fixes: {normalized: [set-value]}}", f: hpa,
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixRemoveField}}},
		{name: "allowed kinds in the policy's order", policy: "policy: {fixes: {hpa-replicas: [remove-field, ignore-difference]}}", f: hpa,
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixRemoveField, drift.FixIgnoreDifference}}},
		{name: "the policy's order wins over the suggestion", policy: "policy: {fixes: {webhook-mutation: [ignore-difference, set-value]}}", f: hook,
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixIgnoreDifference, drift.FixSetValue}}},
		{name: "a suggestion the policy does not allow is passed over", policy: "policy: {fixes: {hpa-replicas: [ignore-difference]}}", f: hpa,
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixIgnoreDifference},
				Passed: []remediations.Attempt{{Kind: drift.FixRemoveField, Why: "the policy does not allow remove-field for hpa-replicas"}}}},
		{name: "report only", policy: "policy: {fixes: {hpa-replicas: []}}", f: hpa,
			want: remediations.Decision{ByPolicy: true, Why: "the policy does not allow remove-field for hpa-replicas",
				Passed: []remediations.Attempt{{Kind: drift.FixRemoveField, Why: "the policy does not allow remove-field for hpa-replicas"}}}},
		{name: "a refused kind is skipped for the next", policy: "policy: {fixes: {hpa-replicas: [remove-field, ignore-difference]}}", f: hpa,
			refused: refused{drift.FixRemoveField: "it is security-relevant"},
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixIgnoreDifference},
				Passed: []remediations.Attempt{{Kind: drift.FixRemoveField, Why: "it is security-relevant"}}}},
		{name: "every allowed kind refused, the suggestion among them", policy: "policy: {fixes: {hpa-replicas: [ignore-difference, remove-field]}}", f: hpa,
			refused: refused{drift.FixRemoveField: "it is security-relevant", drift.FixIgnoreDifference: "it would hide an image"},
			want: remediations.Decision{Why: "it is security-relevant; ignore-difference: it would hide an image",
				Passed: []remediations.Attempt{{Kind: drift.FixIgnoreDifference, Why: "it would hide an image"}, {Kind: drift.FixRemoveField, Why: "it is security-relevant"}}}},
		{name: "every allowed kind refused, the suggestion not allowed", policy: "policy: {fixes: {hpa-replicas: [tracking-method]}}", f: hpa,
			refused: refused{drift.FixTrackingMethod: "the tracking method ends only a tracking clash"},
			want: remediations.Decision{ByPolicy: true, Why: "the policy does not allow remove-field for hpa-replicas; tracking-method: the tracking method ends only a tracking clash",
				Passed: []remediations.Attempt{{Kind: drift.FixRemoveField, Why: "the policy does not allow remove-field for hpa-replicas"}, {Kind: drift.FixTrackingMethod, Why: "the tracking method ends only a tracking clash"}}}},
		{name: "no suggestion without a policy refused", f: hpa, refused: refused{drift.FixRemoveField: "it is security-relevant"},
			want: remediations.Decision{Why: "it is security-relevant", Passed: []remediations.Attempt{{Kind: drift.FixRemoveField, Why: "it is security-relevant"}}}},
		{name: "a finding with no fix is never planned", policy: "policy: {fixes: {unknown: [ignore-difference]}}",
			f:    drift.Finding{Cause: drift.CauseUnknown, Remediation: drift.Remediation{Kind: drift.FixNone, Reason: "the cause is not established"}},
			want: remediations.Decision{Why: "the cause is not established"}},
		{name: "a manual change is never planned", f: manual, want: remediations.Decision{Why: "a manual change is real drift"}},
		{name: "an override's kinds replace the global ones", project: "payments",
			policy: "policy: {fixes: {hpa-replicas: [remove-field]}}\noverrides: [{match: {project: payments}, policy: {fixes: {hpa-replicas: [ignore-difference, remove-field]}}}]", f: hpa,
			want: remediations.Decision{Kinds: []drift.FixKind{drift.FixIgnoreDifference, drift.FixRemoveField}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(head + tc.policy + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			var cands []remediations.Candidate
			for _, r := range remediations.Remedies {
				cands = append(cands, remediations.Candidate{Kind: r.Kind, Refused: tc.refused[r.Kind]})
			}
			got := cfg.For(tc.project, "web", "shop").Decide(tc.f, cands)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decision\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
