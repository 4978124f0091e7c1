package plan

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
)

// TestCheckNeverShowsSecretValues: the driftfix/verify check's table shows
// a Secret's path and status, never its value on either side, whether the
// path is fixed, still differs or is a new difference; other kinds' values
// are shown.
func TestCheckNeverShowsSecretValues(t *testing.T) {
	secret := drift.Ref{Kind: "Secret", Namespace: "shop", Name: "db"}
	c := pipeline.Check{Rows: []pipeline.CheckRow{
		{Resource: secret, Path: drift.Pointer{"data", "password"}, Cause: drift.CauseManualChange, Status: pipeline.CheckRemains,
			Git: "Z2l0LXNlY3JldA==", Live: "bGl2ZS1zZWNyZXQ=", InGit: true, InLive: true},
		{Resource: secret, Path: drift.Pointer{"stringData", "token"}, Cause: drift.CauseUnknown, Status: pipeline.CheckNew,
			Git: "plain-token-in-git", InGit: true},
		{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Path: drift.Pointer{"spec", "replicas"},
			Cause: drift.CauseHPAReplicas, Status: pipeline.CheckFixed, Git: 2, Live: 4, InGit: true, InLive: true},
	}}
	pl := planning{in: Instance{URL: "https://argocd.example.com"}}
	hc, err := pl.headCheck(collect.ScanResult{App: argocd.AppSummary{Name: "shop", Namespace: "argocd"}}, c, "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	all := hc.Title + "\n" + hc.Summary + "\n" + hc.Text
	for _, v := range []string{"Z2l0LXNlY3JldA==", "bGl2ZS1zZWNyZXQ=", "plain-token-in-git", "git-secret", "live-secret"} {
		if strings.Contains(all, v) {
			t.Errorf("the check shows the Secret value %q:\n%s", v, all)
		}
	}
	if n := strings.Count(hc.Text, "(Secret value not shown)"); n != 3 {
		t.Errorf("the Secret rows must say their values are not shown (%d times, want 3):\n%s", n, hc.Text)
	}
	if !strings.Contains(hc.Text, "`/data/password`") || !strings.Contains(hc.Text, "| `2` | `4` | fixed |") || hc.Success {
		t.Errorf("the paths, other kinds' values and the conclusion must still be shown:\n%s", hc.Text)
	}
}
