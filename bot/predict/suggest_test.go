package predict

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestSuggestionsAndReview: the engine's verified fix of a prediction
// becomes a suggestion only when it is one line's edit that writes nothing
// but Git's own value, and a review comment only on a line of the change's
// diff (where GitHub takes one).
func TestSuggestionsAndReview(t *testing.T) {
	hpaInCluster := "- " + strings.ReplaceAll(strings.Replace(strings.TrimSpace(webHPA), "name: web\n", "name: web\n  namespace: shop\n", 1), "\n", "\n  ") + "\n"
	tests := []struct {
		name        string
		base, head  map[string]string
		cluster     string
		suggestions []Suggestion // of the predictions, in order, those with one
		comments    []string     // the review's comments: file:line and the suggestion block's content
	}{
		{
			name:        "replicas the change adds under the application's own HPA: the line removed",
			base:        map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m"), "apps/web/hpa.yaml": webHPA},
			head:        map[string]string{"apps/web/deploy.yaml": deployment("  replicas: 3\n", "500m")},
			suggestions: []Suggestion{{File: "apps/web/deploy.yaml", Line: 6, Old: "  replicas: 3", Remove: true}},
			comments:    []string{"apps/web/deploy.yaml:6 ```suggestion\n```"},
		},
		{
			name:    "replicas the change adds under an HPA only the cluster holds: no suggestion (the HPA proves nothing)",
			base:    map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head:    map[string]string{"apps/web/deploy.yaml": deployment("  replicas: 3\n", "500m")},
			cluster: hpaInCluster,
		},
		{
			name:        "an HPA added beside replicas the change leaves alone: a suggestion off the diff, no comment",
			base:        map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("  replicas: 2\n", "500m")},
			head:        map[string]string{"apps/web/hpa.yaml": webHPA},
			suggestions: []Suggestion{{File: "apps/web/deploy.yaml", Line: 6, Old: "  replicas: 2", Remove: true}},
		},
		{
			name: "a quantity shown by an unknown field: Git's value in the stored form, and the field removed",
			base: map[string]string{"apps/web.yaml": webApp, "apps/web/deploy.yaml": deployment("", "500m")},
			head: map[string]string{"apps/web/deploy.yaml": deployment("  strategy2: {}\n", "1000m")},
			suggestions: []Suggestion{
				{File: "apps/web/deploy.yaml", Line: 6, Old: "  strategy2: {}", Remove: true},
				{File: "apps/web/deploy.yaml", Line: 18, Old: "            cpu: 1000m", New: `            cpu: "1"`},
			},
			comments: []string{"apps/web/deploy.yaml:6 ```suggestion\n```", "apps/web/deploy.yaml:18 ```suggestion\n            cpu: \"1\"\n```"},
		},
		{
			name: "a random value pinned in a chart: no suggestion (the value is not Git's)",
			base: map[string]string{"apps/db.yaml": dbApp, "charts/db/Chart.yaml": dbChart, "charts/db/values.yaml": "replicas: 1\n"},
			head: map[string]string{"charts/db/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-pw\nstringData:\n  password: {{ randAlphaNum 16 | quote }}\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, head := gitRepo(t, tc.base, tc.head)
			var cluster []drift.Object
			if tc.cluster != "" {
				var err error
				if cluster, err = ParseCluster([]byte(tc.cluster)); err != nil {
					t.Fatal(err)
				}
			}
			res, err := Run(context.Background(), base, head, Options{Cluster: cluster, Suggest: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Predictions) == 0 {
				t.Fatal("nothing predicted")
			}
			var got []Suggestion
			for _, p := range res.Predictions {
				if p.Suggestion != nil {
					got = append(got, *p.Suggestion)
				}
			}
			if len(got) != len(tc.suggestions) {
				t.Fatalf("suggestions %+v, want %+v", got, tc.suggestions)
			}
			for i := range got {
				if got[i] != tc.suggestions[i] {
					t.Errorf("suggestion %d: %+v, want %+v", i, got[i], tc.suggestions[i])
				}
			}
			rv := Review(res, base, head, "0123456789abcdef0123456789abcdef01234567")
			var comments []string
			if rv != nil {
				if rv.CommitID != "0123456789abcdef0123456789abcdef01234567" || !strings.Contains(rv.Body, CheckName) {
					t.Errorf("review: %+v", rv)
				}
				for _, c := range rv.Comments {
					_, block, _ := strings.Cut(c.Body, "\n\n")
					comments = append(comments, c.Path+":"+strconv.Itoa(c.Line)+" "+strings.TrimSpace(block))
				}
			}
			if strings.Join(comments, "|") != strings.Join(tc.comments, "|") {
				t.Errorf("review comments:\n%q\nwant\n%q", comments, tc.comments)
			}
		})
	}
}
