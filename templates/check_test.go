package templates

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestHostileValuesInertInCheck: in the driftfix/verify check's summary and
// table, values from the cluster (resource names, paths, live and Git
// values, evidence, a render error quoting a file) neither mention anyone,
// link, add HTML, forge a marker nor close their code span, and each
// resource and path stays one row of the table.
func TestHostileValuesInertInCheck(t *testing.T) {
	for _, h := range append(hostile, "```\n| x | y | z | w | v | u |\n```") {
		v := CheckView{App: "shop", AppNamespace: "argocd", ArgoCDURL: "https://argocd.example.com", Head: "0123456789ab",
			Error: "apps/shop/" + h + ".yaml does not render: " + h, Files: []string{"apps/shop/" + h + ".yaml"},
			Rows: []CheckRow{
				{Resource: drift.Ref{Kind: "ConfigMap", Namespace: h, Name: h}, Path: "/data/" + h, Cause: drift.CauseManualChange, Status: "still differs",
					Git: Code(h), Live: Code(h), Evidence: []string{"changed by " + h}},
				{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Path: "/spec/replicas", Cause: drift.CauseHPAReplicas, Status: "fixed",
					Git: Code(2), Live: Code(4), Evidence: []string{"HorizontalPodAutoscaler shop/web scales it"}},
			}}
		summary, text, err := CheckOutput(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(summary+"\n"+text, "\n") {
			checkInert(t, h, line)
			if outside := stripCode(line); strings.Contains(outside, "<!channel") || strings.Contains(outside, "<@U123>") {
				t.Errorf("hostile value %q is live outside a code span: %q", h, line)
			}
		}
		rows := 0
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Resource ") {
				continue
			}
			rows++
			if cells := strings.Count(line, "|") - strings.Count(line, `\|`); cells != 7 {
				t.Errorf("hostile value %q split a table row into %d cells: %q", h, cells-1, line)
			}
		}
		if rows != 2 {
			t.Errorf("hostile value %q changed the table: %d rows, want 2\n%s", h, rows, text)
		}
		checkUnlinked(t, h, summary+text+"\n"+CheckTitle(v))
		if title := CheckTitle(v); strings.Contains(title, "\n") {
			t.Errorf("the title must stay one line: %q", title)
		}
	}
}

// TestPlannedCheckSaysVerifiedOnlyOnSuccess: a check taken from planning
// says the change was verified only when it passed; a plan that was not
// verified (one that edits no file) says so.
func TestPlannedCheckSaysVerifiedOnlyOnSuccess(t *testing.T) {
	for _, tc := range []struct {
		success   bool
		err, want string
		not       string
	}{
		{true, "", "driftfix verified this change while planning it", "did not verify"},
		{false, "the plan edits no file, so nothing was verified", "driftfix did not verify this change while planning it", "driftfix verified"},
	} {
		v := CheckView{App: "shop", AppNamespace: "argocd", ArgoCDURL: "https://argocd.example.com", Head: "0123456789ab", Planned: true, Success: tc.success, Error: tc.err}
		summary, _, err := CheckOutput(v)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(summary, tc.want) || strings.Contains(summary, tc.not) {
			t.Errorf("success %v: summary lacks %q or holds %q:\n%s", tc.success, tc.want, tc.not, summary)
		}
	}
}
