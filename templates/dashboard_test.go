package templates

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

var since = time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)

func dashboardApp(name string) DashboardApp {
	return DashboardApp{App: name, Namespace: "argocd", Instance: "main", ArgoCDURL: "https://argocd.example.com", Stuck: true, Since: since,
		Causes: []drift.Cause{drift.CauseHPAReplicas, drift.CauseManualChange}, Note: "OutOfSync 1h after a successful sync",
		PRs: []DashboardPR{{Number: 7, Key: "0a1b2c3d4e5f", Title: "driftfix(" + name + "): Stop declaring /spec/replicas of Deployment shop/web"}},
		StillDiffers: []DashboardMerged{{Number: 5, Title: "driftfix(" + name + "): Stop declaring /spec/paused of Deployment shop/web", Revision: "9f8e7d6c5b4a",
			Findings: []DashboardFinding{{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Path: "/spec/paused", Cause: drift.CauseUnknown}}}},
		Waiting: []DashboardFix{{Key: "aa11bb22cc33", Title: "driftfix(" + name + "): Write /spec/cpu of Deployment shop/api as the cluster stores it", Why: "quiet hours"}},
		ForPeople: []DashboardFinding{{Resource: drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, Path: "/data/LOG_LEVEL", Cause: drift.CauseManualChange,
			Why: "a manual change is real drift", Evidence: []string{"kubectl-edit changed it at 2026-12-02T10:40:00Z"}}},
		BroadIgnores: []DashboardFinding{{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Path: "/spec/template/spec/containers",
			Cause: drift.CauseBroadIgnore, Evidence: []string{"the Application's ignoreDifferences /spec/template/spec/containers hides a change to the image"}}},
		Rejected: []DashboardRejection{{Key: "ffeeddccbbaa", Reason: "pull request acme/shop#3 was closed unmerged", At: since}},
	}
}

// TestDashboardGolden renders one repository's dashboard: a section per
// application, expanded, with its boxes; rendering is deterministic.
func TestDashboardGolden(t *testing.T) {
	v := DashboardView{Marker: "<!-- driftfix:dashboard=all -->", Apps: []DashboardApp{dashboardApp("shop"), {App: "cart", Namespace: "argocd", Instance: "main",
		PRs: []DashboardPR{{Number: 9, Key: "123456789abc", Title: "driftfix(cart): Ignore /spec/x of Service cart/api only", Check: "success", RecheckAsked: true}}}},
		RunKey: "5e5e5e5e5e5e", PolicyFile: "deploy/driftfix.yaml in acme/platform", Writers: []DashboardWriter{
			{Manager: "replica-tuner", Key: "77aa77aa77aa", Fields: []DashboardFinding{{Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Path: "/spec/replicas"}}, More: 2},
			{Manager: "ops-script", Key: "88bb88bb88bb", Fields: []DashboardFinding{{Resource: drift.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}, Path: "/data/x"}}, Proposed: "acme/platform#4"}}}
	body, err := Dashboard(v)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dashboard.md", []byte(body))
	if again, _ := Dashboard(v); again != body {
		t.Error("the dashboard is not deterministic")
	}
	if !strings.HasPrefix(body, v.Marker+"\n") || strings.Count(body, "<details open>") != 2 {
		t.Errorf("marker first, every section expanded:\n%s", body)
	}
	want := []Tick{}
	if got := Ticks(body); len(got) != len(want) {
		t.Errorf("a fresh dashboard has no ticked box: %v", got)
	}
	ticked := body
	for _, box := range []string{"- [ ] run again now", "- [ ] a person", "- [ ] stop proposing this fix and close #7", "- [ ] open the fix PR now", "- [ ] propose this fix again"} {
		ticked = strings.Replace(ticked, box, strings.Replace(box, "[ ]", "[x]", 1), 1)
	}
	got := Ticks(ticked)
	if fmt.Sprint(got) != fmt.Sprint([]Tick{{ActionRunNow, "5e5e5e5e5e5e"}, {ActionPerson, "77aa77aa77aa"}, {"stop", "0a1b2c3d4e5f"}, {"open-now", "aa11bb22cc33"}, {ActionUnreject, "ffeeddccbbaa"}}) {
		t.Errorf("ticks %v", got)
	}
	if strings.Contains(body, "key=88bb88bb88bb") {
		t.Error("a writer whose entry is proposed already must show no boxes")
	}
}

// TestTicksOnlyFromBoxes: only a line exactly as the template writes a box
// counts; the words must say the marker's action.
func TestTicksOnlyFromBoxes(t *testing.T) {
	for _, line := range []string{
		"- `x` - [x] recheck <!-- driftfix:do=recheck key=abc -->",
		"| - [x] recheck <!-- driftfix:do=recheck key=abc --> |",
		"- [x] recheck <!-- driftfix:do=stop key=abc -->",
		"- [x] recheck please <!-- driftfix:do=recheck key=abc -->",
		"- [x] recheck <!-- driftfix:do=recheck key=ABC -->",
		"- [x] a person <!-- driftfix:do=writer-controller key=abc -->",
		"- [x] a controller <!-- driftfix:do=writer-person key=abc -->",
		"- [x] run again now <!-- driftfix:do=unreject key=abc -->",
		"- [x] propose this fix again <!-- driftfix:do=run-now key=abc -->",
		"- [x] a controller <!-- driftfix:do=writer key=abc -->",
		"- [x] a controller, really <!-- driftfix:do=writer-controller key=abc -->",
	} {
		if got := Ticks(line); len(got) != 0 {
			t.Errorf("%q read as %v", line, got)
		}
	}
	if got := Ticks("  - [x] recheck <!-- driftfix:do=recheck key=abc -->\r\n"); len(got) != 1 {
		t.Errorf("a ticked box was missed: %v", got)
	}
}

// TestHostileValuesInertInDashboard: values from the cluster in every field
// of an application's section neither mention, link, add HTML, close their
// code span, add a box, nor forge a marker; the boxes are the template's.
func TestHostileValuesInertInDashboard(t *testing.T) {
	for _, h := range append(hostile, "- [x] stop proposing this fix <!-- driftfix:do=stop key=0a1b2c3d4e5f -->", "x\n- [x] recheck <!-- driftfix:do=recheck key=0a1b2c3d4e5f -->") {
		a := dashboardApp(h)
		a.Namespace, a.Note = h, h
		a.PRs[0].Title, a.PRs[0].Check = h, h
		a.Waiting[0].Title, a.Waiting[0].Why = h, h
		a.ForPeople[0] = DashboardFinding{Resource: drift.Ref{Kind: "ConfigMap", Namespace: h, Name: h}, Path: "/data/" + h, Cause: drift.CauseManualChange, Why: h, Evidence: []string{h}}
		a.BroadIgnores[0].Evidence = []string{h}
		a.Rejected[0].Reason = h
		ig := []IgnoreLine{{Holder: "Application argocd/" + h, Key: h, Where: h + ":3", Sensitive: "Secret " + h + " /data/" + h, Stale: true, Broad: h, PR: h}}
		a.StillDiffers[0].Title, a.StillDiffers[0].Revision = h, h
		a.StillDiffers[0].Findings[0] = DashboardFinding{Resource: drift.Ref{Kind: "ConfigMap", Namespace: h, Name: h}, Path: "/data/" + h, Cause: drift.CauseManualChange}
		writers := []DashboardWriter{{Manager: h, Key: "77aa77aa77aa", Fields: []DashboardFinding{{Resource: drift.Ref{Kind: "ConfigMap", Namespace: h, Name: h}, Path: "/data/" + h}}}}
		body, err := Dashboard(DashboardView{Marker: "<!-- driftfix:dashboard=all -->", Apps: []DashboardApp{a}, Ignores: ig, Writers: writers, PolicyFile: h, RunKey: "5e5e5e5e5e5e",
			RepoFile: []string{"line 3: " + h + ": unknown key", h}})
		if err != nil {
			t.Fatal(err)
		}
		checkUnlinked(t, h, body)
		if !strings.Contains(body, "**`.github/driftfix.yaml` is not used.**") {
			t.Errorf("%q: the repository file's problems are not shown", h)
		}
		if got := Ticks(body); len(got) != 0 {
			t.Errorf("%q forged a ticked box: %v", h, got)
		}
		if n := strings.Count(body, "- [ ] "); n != 8 {
			t.Errorf("%q: %d boxes, want the template's 8", h, n)
		}
		markers := 0
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "<summary>") { // raw HTML: Markdown escapes do not work here
				inner := strings.NewReplacer("<summary>", "", "</summary>", "", "<b>", "", "</b>", "", "<code>@</code>", "").Replace(line)
				if strings.ContainsAny(inner, "<>@`[") {
					t.Errorf("%q: live HTML in the summary: %q", h, line)
				}
				continue
			}
			outside := stripCode(line)
			for _, bad := range []string{"@acme", "<img", "](https://evil", "<!channel", "</details><"} {
				if strings.Contains(outside, bad) {
					t.Errorf("%q: live outside a code span: %q", h, line)
				}
			}
			markers += strings.Count(outside, "<!-- driftfix:")
		}
		if markers != 1+8 {
			t.Errorf("%q: %d markers outside code spans, want the dashboard's and its 8 boxes':\n%s", h, markers, body)
		}
	}
}

// TestDashboardSplitNeverCuts: a dashboard over the limit collapses its
// sections; those that do not fit are listed by name with a line saying how
// many; every section present is whole, and the body is within the limit.
func TestDashboardSplitNeverCuts(t *testing.T) {
	var apps []DashboardApp
	for i := 0; i < 400; i++ {
		apps = append(apps, dashboardApp(fmt.Sprintf("app-%03d", i)))
	}
	v := DashboardView{Marker: "<!-- driftfix:dashboard=all -->", Apps: apps}
	body, err := Dashboard(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > MaxIssueBody {
		t.Fatalf("%d bytes, over GitHub's %d", len(body), MaxIssueBody)
	}
	if strings.Contains(body, "<details open>") {
		t.Error("a long dashboard must collapse its sections")
	}
	whole := strings.Count(body, "</details>")
	if whole == 0 || whole == len(apps) || strings.Count(body, "<details>") != whole {
		t.Fatalf("%d whole sections of %d", whole, len(apps))
	}
	if !strings.Contains(body, fmt.Sprintf("%d of %d applications are shortened to their names", len(apps)-whole, len(apps))) {
		t.Errorf("the count of shortened applications is missing")
	}
	for i, a := range apps {
		one, _ := render("dashboard_app", a)
		switch {
		case i < whole && !strings.Contains(body, one):
			t.Fatalf("section %d is not whole", i)
		case i >= whole && !strings.Contains(body, "- `argocd/"+a.App+"` on main\n") && !strings.Contains(body, "more applications"):
			t.Fatalf("application %s is neither whole, named nor counted", a.App)
		}
	}
	for limit := 1000; limit < 3000; limit++ { // every limit is kept, to the byte
		if body, _ := Dashboard(DashboardView{Marker: v.Marker, Apps: apps[:3], Limit: limit}); len(body) > limit {
			t.Fatalf("limit %d: %d bytes", limit, len(body))
		}
	}
	small := DashboardView{Marker: v.Marker, Apps: apps[:3], Limit: 3000}
	if body, _ := Dashboard(small); len(body) > 3000 || strings.Count(body, "</details>") == 3 {
		t.Errorf("a small limit must shorten: %d bytes", len(body))
	}
}

// FuzzTicks: whatever a person writes into the dashboard, Ticks does not
// fail, and each tick it returns is a ticked box line of the body with the
// marker of that action and key.
func FuzzTicks(f *testing.F) {
	body, _ := Dashboard(DashboardView{Marker: "<!-- driftfix:dashboard=all -->", Apps: []DashboardApp{dashboardApp("shop")}})
	f.Add(body)
	f.Add(strings.ReplaceAll(body, "[ ]", "[x]"))
	f.Add("- [x] recheck <!-- driftfix:do=recheck key=abc -->\r\n  - [X] open the fix PR now <!-- driftfix:do=open-now key=0 -->")
	f.Fuzz(func(t *testing.T, body string) {
		for _, tk := range Ticks(body) {
			found := false
			for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
				trimmed := strings.TrimLeft(line, " ")
				if (strings.HasPrefix(trimmed, "- [x] ") || strings.HasPrefix(trimmed, "- [X] ")) && strings.HasSuffix(line, "<!-- driftfix:do="+tk.Action+" key="+tk.Key+" -->") {
					found = true
				}
			}
			if !found {
				t.Fatalf("tick %+v is not a ticked box of %q", tk, body)
			}
		}
	})
}
