package predict

import (
	"context"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestCRDOfASiblingApplication: a custom resource whose CRD another
// application of the repository installs in the same cluster (an
// operator's chart beside the application of its resources) is pruned by
// that CRD's schema, so a field the schema lacks is predicted to differ;
// the same CRD installed in another cluster is not that cluster's.
func TestCRDOfASiblingApplication(t *testing.T) {
	operator := func() string {
		return strings.ReplaceAll(strings.ReplaceAll(webApp, "name: web", "name: backup-operator"), "path: apps/web", "path: operator")
	}
	for _, tc := range []struct {
		name, server string
		want         bool
	}{
		{"same cluster", "https://kubernetes.default.svc", true},
		{"another cluster", "https://other.example.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := strings.ReplaceAll(operator(), "server: https://kubernetes.default.svc", "server: "+tc.server)
			base := map[string]string{"apps/web.yaml": webApp, "apps/operator.yaml": op, "operator/crd.yaml": backupCRD,
				"apps/web/schedule.yaml": "apiVersion: backup.example.com/v1\nkind: Schedule\nmetadata:\n  name: nightly\nspec:\n  cron: \"0 2 * * *\"\n"}
			head := map[string]string{"apps/web/schedule.yaml": "apiVersion: backup.example.com/v1\nkind: Schedule\nmetadata:\n  name: nightly\nspec:\n  cron: \"0 2 * * *\"\n  compress: true\n"}
			b, h := gitRepo(t, base, head)
			res, err := Run(context.Background(), b, h, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, p := range res.Predictions {
				if p.Application == "web" && p.Path.String() == "/spec/compress" && p.Cause == drift.CauseNormalized {
					got = true
					if p.File != "apps/web/schedule.yaml" || p.Line != 7 {
						t.Errorf("at %s:%d, want apps/web/schedule.yaml:7", p.File, p.Line)
					}
				}
			}
			if got != tc.want {
				t.Errorf("the pruned field predicted: %v, want %v (predictions %+v)", got, tc.want, res.Predictions)
			}
		})
	}
}
