package classifiers_test

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// child is Application argocd/guestbook as the parent app-of-apps "shop"
// renders it (targetRevision main) or as it is live, with extra metadata
// (a flow-map body) and managedFields (a flow-list body).
func child(revision, metadata, managedFields string) string {
	return `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: guestbook, namespace: argocd` + metadata + `, managedFields: [` + managedFields + `]},
  spec: {project: default, destination: {server: https://kubernetes.default.svc, namespace: guestbook},
    source: {repoURL: https://git.example.com/guestbook.git, path: deploy, targetRevision: ` + revision + `}}}`
}

const (
	parentApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  source: {repoURL: https://git.example.com/platform.git, path: apps, targetRevision: main}
status: {sync: {status: OutOfSync}}
`
	appsetOwner   = `, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: ApplicationSet, name: guestbooks, uid: 5e2a, controller: true, blockOwnerDeletion: true}]`
	shopTracks    = `, annotations: {argocd.argoproj.io/tracking-id: "shop:argoproj.io/Application:argocd/guestbook"}`
	teamTracks    = `, annotations: {argocd.argoproj.io/tracking-id: "team-apps:argoproj.io/Application:argocd/guestbook"}`
	argoOwnsChild = `{manager: argocd-controller, operation: Update, apiVersion: argoproj.io/v1alpha1, time: "2026-09-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:source": {"f:targetRevision": {}}}}}`
	appsetWrites  = `{manager: argocd-applicationset-controller, operation: Update, apiVersion: argoproj.io/v1alpha1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:source": {"f:targetRevision": {}}}}}`
	personWrites  = `{manager: kubectl-edit, operation: Update, apiVersion: argoproj.io/v1alpha1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:source": {"f:targetRevision": {}}}}}`
)

// TestDefinedTwice: an Application an app-of-apps parent renders from Git
// while an ApplicationSet (or another parent) defines the live one is a
// conflict naming both definitions, never a controller write with a writers
// hint, an ignore rule or a field removal.
func TestDefinedTwice(t *testing.T) {
	const rev = "/spec/source/targetRevision"
	files := map[string]string{
		"apps/guestbook.yaml":     child("main", "", ""),
		"appsets/guestbooks.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: guestbooks, namespace: argocd}\nspec: {generators: [{list: {elements: [{name: guestbook}]}}], template: {metadata: {name: '{{name}}'}, spec: {project: default}}}\n",
	}
	tests := []struct {
		name string
		s    snap
		want want
	}{
		{"an app-of-apps list and an ApplicationSet both define it", snap{app: parentApp, files: files,
			target: child("main", shopTracks, ""), live: child("v2", shopTracks+appsetOwner, argoOwnsChild+", "+appsetWrites)},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
				"Application guestbook has two definitions", "Application shop renders it from Git (apps/guestbook.yaml)",
				"ApplicationSet guestbooks owns the live one (its ownerReferences), defined in appsets/guestbooks.yaml",
				"written by argocd-controller", "argocd-applicationset-controller"},
				absent: []string{"writers:", "ignoreDifferences"}}},
		{"the same without the files: the parent's source is named", snap{app: parentApp,
			target: child("main", shopTracks, ""), live: child("v2", shopTracks+appsetOwner, argoOwnsChild+", "+appsetWrites)},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
				"renders it from Git (https://git.example.com/platform.git path apps)", "ApplicationSet guestbooks owns the live one (its ownerReferences)"}}},
		{"another parent's tracking id", snap{app: parentApp, files: files,
			target: child("main", shopTracks, ""), live: child("v2", teamTracks, argoOwnsChild)},
			want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
				"Application shop renders it from Git (apps/guestbook.yaml)", "parent Application team-apps applied the live one (its tracking id team-apps:argoproj.io/Application:argocd/guestbook)"}}},
		{"only this parent defines it: no conflict", snap{app: parentApp, files: files,
			target: child("main", shopTracks, ""), live: child("v2", shopTracks, argoOwnsChild+", "+appsetWrites)},
			want{claims: false}},
		{"a person's edit of an ApplicationSet's Application is the person's", snap{app: parentApp, files: files,
			target: child("main", shopTracks, ""), live: child("v2", shopTracks+appsetOwner, argoOwnsChild+", "+personWrites)},
			want{claims: false, cause: drift.CauseManualChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.writers = []drift.Writer{{Manager: "kubectl-edit", Is: drift.WriterPerson}}
			checkDiff(t, classifiers.TrackingClash, tt.s, rev, tt.want)
			if !tt.want.claims {
				return
			}
			// what the whole registry makes of it: no fix, no writer to place,
			// and a reason that names both definitions
			in := diagnose(t, tt.s.build(t))
			in.Sensitivity = drift.Sensitivity{Writers: tt.s.writers}
			for _, f := range classifiers.Run(in, classifiers.Registry) {
				if f.Path.String() != rev {
					continue
				}
				if f.Remediation.Kind != drift.FixNone || len(f.Unplaced) > 0 || f.Remediation.Grant != "" {
					t.Errorf("fix %s, unplaced %q, grant %q: a conflict gets no fix and no writer to place", f.Remediation.Kind, f.Unplaced, f.Remediation.Grant)
				}
				r := f.Remediation.Reason
				if !strings.HasPrefix(r, "conflict: ") || !strings.Contains(r, "Application shop's Git") || strings.Contains(r, "writers") {
					t.Errorf("reason %q does not name both definitions as a conflict", r)
				}
			}
		})
	}
}

// TestTwoApplicationsManageIt: a write on an object whose live tracking id
// names another application is that conflict too, whoever wrote it but a
// person: both applications are named, and no writer is left to place.
func TestTwoApplicationsManageIt(t *testing.T) {
	operator := `{manager: flag-operator, operation: Update, apiVersion: v1, time: "2026-09-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:BETA": {}}}}`
	s := snap{target: flags("", shopID, `BETA: "false"`, ""), live: flags("", billingID, `BETA: "true"`, argoOwnsFlags+", "+operator)}
	checkDiff(t, classifiers.TrackingClash, s, "/data/BETA", want{claims: true, fix: drift.FixNone, cause: drift.CauseTrackingClash, evidence: []string{
		`belongs to Application "billing", not to "shop"`, "written by argocd-controller", "flag-operator", "two applications claim"}})
	in := diagnose(t, s.build(t))
	for _, f := range classifiers.Run(in, classifiers.Registry) {
		if f.Path.String() == "/data/BETA" && (len(f.Unplaced) > 0 || f.Remediation.Kind != drift.FixNone) {
			t.Errorf("fix %s, unplaced %q: a conflict gets no fix and no writer to place", f.Remediation.Kind, f.Unplaced)
		}
	}
}
