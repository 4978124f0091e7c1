package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/remediations/render"
)

// withEdits is the repository with a plan's files written.
func withEdits(repo remediations.Repo, p remediations.Plan) remediations.Repo {
	out := remediations.Repo{}
	for k, v := range repo {
		out[k] = v
	}
	for _, e := range p.Edits {
		out[e.File] = e.After
	}
	return out
}

// TestCheckHeadAgreesWithVerification: for every plan with file edits in the
// fix corpora and the public fixtures, checking a head that holds exactly the
// plan's files succeeds, every targeted path fixed; the synced revision
// itself fails with every path still differing.
func TestCheckHeadAgreesWithVerification(t *testing.T) {
	files, _ := filepath.Glob(corpus.Path("remediations/testdata/*.yaml"))
	files = append(files, corpus.Snapshots(t, "testdata/realworld", ".yaml")...)
	files = append(files, corpus.SharedFixturesIfPresent(t)...)
	// The effect of these kinds is not all in the application's files: the
	// Secret a pinned value points at is created outside the chart, and the
	// tracking method is argocd-cm's. Their heads are checked by rendering
	// only when a person changed them (and then fail when a resource leaves).
	outside := map[drift.FixKind]string{drift.FixPinHelmValue: "the Secret leaves the chart", drift.FixTrackingMethod: "argocd-cm"}
	checked, rebuilt := 0, 0
	for _, in := range files {
		s := loadSnapshot(t, in)
		base := remediations.RepoFromSnapshot(s)
		opt := FixOptions{Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
		rep, plans, err := FixWith(s, base, opt)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		for _, p := range plans {
			if p.Dropped != "" || len(p.Edits) == 0 {
				continue
			}
			checked++
			name := filepath.Base(in) + " " + string(p.Kind) + " " + p.Resource.String()
			head := withEdits(base, p)
			if c := CheckHead(s, rep, base, head, p, opt); !c.Success || len(c.Rows) != len(p.Findings) {
				t.Errorf("%s: check of the plan's own files: success %v, error %q, rows %+v", name, c.Success, c.Error, c.Rows)
			}
			if outside[p.Kind] != "" {
				continue
			}
			rebuilt++
			if c := checkRebuilt(s, rep, base, head, p, opt); !c.Success || c.Error != "" || len(c.Rows) != len(p.Findings) {
				t.Errorf("%s: the plan's own files, rendered again: success %v, error %q, rows %+v", name, c.Success, c.Error, c.Rows)
			}
			unchanged := CheckHead(s, rep, base, base, p, opt)
			if unchanged.Success {
				t.Errorf("%s: the synced revision itself passed the check", name)
			}
		}
	}
	if checked < 10 || rebuilt < 10 {
		t.Fatalf("only %d plans checked (%d rendered again); the corpora should give many more", checked, rebuilt)
	}
	t.Logf("%d plans checked, %d rendered again", checked, rebuilt)
}

// TestCheckHeadPersonEdits: a person's commit on the fix's branch is judged
// on its own: a value other than the stored one still differs, a changed
// image is a new difference, a resource added or a broken manifest fails
// with why.
func TestCheckHeadPersonEdits(t *testing.T) {
	s := loadSnapshot(t, corpus.Path("remediations/testdata/plain-remove-hpa.yaml"))
	base := remediations.RepoFromSnapshot(s)
	rep, plans, err := Fix(s, base, drift.Sensitivity{}, time.Now(), render.Limits{})
	if err != nil || len(plans) != 1 || len(plans[0].Edits) != 1 {
		t.Fatalf("plan: %v %+v", err, plans)
	}
	p := plans[0]
	file := p.Edits[0].File
	fixed := string(p.Edits[0].After)
	orig := string(p.Edits[0].Before)
	if !strings.Contains(orig, "replicas: 2") || !strings.Contains(fixed, "registry.example.com/web:1.0.0") {
		t.Fatalf("%s is not the manifest this test edits:\n%s", file, orig)
	}
	cases := []struct {
		name    string
		content string
		status  string // of the targeted row
		extra   string // a row with this status must follow, on this path
		err     string
	}{
		{name: "the fix as planned", content: fixed, status: CheckFixed},
		{name: "replicas set to another number", content: strings.Replace(orig, "replicas: 2", "replicas: 7", 1), status: CheckRemains},
		{name: "the fix plus a new image", content: strings.Replace(fixed, "registry.example.com/web:1.0.0", "nginx:9.9.9", 1), status: CheckFixed, extra: "/spec/template/spec/containers/0/image"},
		{name: "the fix plus a new ConfigMap", content: fixed + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sneaky\ndata:\n  a: b\n", status: CheckRemains, err: "adds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			head := withEdits(base, p)
			head[file] = []byte(tc.content)
			c := CheckHead(s, rep, base, head, p, FixOptions{})
			if len(c.Rows) == 0 || c.Rows[0].Status != tc.status {
				t.Fatalf("rows %+v (error %q), want the targeted path %q", c.Rows, c.Error, tc.status)
			}
			if tc.err != "" && !strings.Contains(c.Error, tc.err) {
				t.Errorf("error %q, want it to say %q", c.Error, tc.err)
			}
			wantSuccess := tc.status == CheckFixed && tc.extra == "" && tc.err == ""
			if c.Success != wantSuccess {
				t.Errorf("success %v, want %v (rows %+v)", c.Success, wantSuccess, c.Rows)
			}
			if tc.extra != "" {
				found := false
				for _, r := range c.Rows[1:] {
					found = found || (r.Status == CheckNew && r.Path.String() == tc.extra)
				}
				if !found {
					t.Errorf("no new difference at %s in %+v", tc.extra, c.Rows)
				}
			}
			if len(c.Files) != 1 || c.Files[0] != file {
				t.Errorf("files %v, want [%s]", c.Files, file)
			}
		})
	}
}

// TestCheckPlannedNeedsAnEdit: the planned check passes only for a plan that
// edits a file and verified; a plan of instructions fails it, even one read
// back from the state store with a Verification an older build wrote.
func TestCheckPlannedNeedsAnEdit(t *testing.T) {
	f := drift.Finding{Resource: drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "flags"}, Path: drift.MustPointer("/data/BETA")}
	edit := remediations.Edit{File: "apps/flags.yaml", Before: []byte("a: 1\n"), After: []byte("a: 2\n")}
	const verified = "re-diagnosed the application with the change applied to its desired state: 1 finding gone, no new difference"
	tests := []struct {
		name  string
		plan  remediations.Plan
		pass  bool
		error string
	}{
		{"an edit, verified", remediations.Plan{Findings: []drift.Finding{f}, Edits: []remediations.Edit{edit}, Verification: verified}, true, ""},
		{"instructions only, with a stored verification", remediations.Plan{Findings: []drift.Finding{f}, Instructions: "add this entry", Verification: verified}, false, "edits no file"},
		{"instructions only", remediations.Plan{Findings: []drift.Finding{f}, Instructions: "add this entry"}, false, "edits no file"},
		{"an edit, dropped", remediations.Plan{Findings: []drift.Finding{f}, Edits: []remediations.Edit{edit}, Verification: verified, Dropped: "conflict: two definitions"}, false, "conflict: two definitions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CheckPlanned(tt.plan)
			if c.Success != tt.pass || tt.plan.Verified() != tt.pass {
				t.Errorf("check %v, Verified %v, want %v", c.Success, tt.plan.Verified(), tt.pass)
			}
			if !strings.Contains(c.Error, tt.error) || (tt.error == "") != (c.Error == "") {
				t.Errorf("error %q, want one with %q", c.Error, tt.error)
			}
			for _, r := range c.Rows {
				if (r.Status == CheckFixed) != tt.pass {
					t.Errorf("row %s %s: %s", r.Resource, r.Path, r.Status)
				}
			}
			if isPlan(remediations.Repo{}, withEdits(remediations.Repo{}, tt.plan), tt.plan) && !tt.pass {
				t.Errorf("an unverified plan's head is taken as the planned check")
			}
		})
	}
}

// TestCheckRowsTypeKeptPlans: a plan the memo kept carries no schema typing,
// so a check judges its rows as the current diagnosis types each path: the
// replicas an autoscaler wrote, an integer in the schema, are shown; a string
// a webhook wrote into a ConfigMap stays masked, whatever it looks like.
func TestCheckRowsTypeKeptPlans(t *testing.T) {
	dep := drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "api"}
	cm := drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "env"}
	replicas := drift.Finding{Resource: dep, Path: drift.Pointer{"spec", "replicas"}, Cause: drift.CauseHPAReplicas,
		Git: 2, InGit: true, Live: 5, InLive: true}
	pin := drift.Finding{Resource: cm, Path: drift.Pointer{"data", "PIN"}, Cause: drift.CauseWebhookMutation,
		Git: "vault:pin", InGit: true, Live: "48213907", InLive: true}
	fresh := replicas
	fresh.SchemaScalar = true
	before := &drift.Report{Findings: []drift.Finding{fresh, pin}}
	plan := remediations.Plan{Findings: []drift.Finding{replicas, pin}} // as the memo gives it back
	for name, c := range map[string]Check{
		"judged":      judge(Check{}, before, &drift.Report{}, plan),
		"not rebuilt": {Rows: []CheckRow{row(typedAs(before, plan.Findings)[0], CheckRemains), row(typedAs(before, plan.Findings)[1], CheckRemains)}},
	} {
		if len(c.Rows) != 2 {
			t.Fatalf("%s: %d rows, want 2", name, len(c.Rows))
		}
		if c.Rows[0].Live != 5 {
			t.Errorf("%s: replicas shown as %v, want 5", name, c.Rows[0].Live)
		}
		if s, _ := c.Rows[1].Live.(string); s != drift.MaskValue("48213907") {
			t.Errorf("%s: the webhook's string shown as %v, want it masked", name, c.Rows[1].Live)
		}
	}
	if typedAs(before, plan.Findings)[0].SchemaScalar != true || plan.Findings[0].SchemaScalar {
		t.Error("typedAs must type a copy, leaving the plan's findings as they are")
	}
}
