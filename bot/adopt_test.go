package bot

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

// manualSnapshot is a Kustomize application an on-call engineer changed by
// hand with kubectl edit: a pod-template annotation and an env value
// (security-relevant: never adopted). Automated sync, no self-heal.
const manualSnapshot = "testdata/realworld/36-kubectl-edit-template-annotation-and-env-value.yaml"

// manualWorld serves the application changed by hand, reading acme/checkout.
func manualWorld(t *testing.T, cfg string) (*world, time.Time) {
	t.Helper()
	w := newWorld(t, cfg)
	w.base = corpus.Load(t, manualSnapshot)
	w.addRepo("checkout")
	s := corpus.Load(t, manualSnapshot)
	drift.Map(s.Application, "spec", "source")["repoURL"] = w.repoURL["checkout"]
	st := drift.Map(s.Application, "status")
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": worldNow.Add(-2 * time.Hour).Format(time.RFC3339)}
	st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
	w.argo.Add(s)
	return w, worldNow
}

// TestDashboardManualChangeAdoptOrReport: with manualChanges: adopt, a change made
// by hand becomes a draft PR labelled driftfix/adopt that writes the live
// value into Git and says who changed it and when (from managedFields); the
// security-relevant env value is never adopted and stays on the dashboard
// for people, saying Argo CD will not revert it without self-heal. With
// report (the default) no PR opens and both stay for people.
func TestDashboardManualChangeAdoptOrReport(t *testing.T) {
	for _, tc := range []struct {
		mode string
		prs  int
	}{{"adopt", 1}, {"report", 0}} {
		t.Run(tc.mode, func(t *testing.T) {
			cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, manualChanges: "+tc.mode+"}", 1)
			w, now := manualWorld(t, cfg)
			w.cycle(&now)
			prs := w.gh.PullRequests("acme", "checkout")
			if len(prs) != tc.prs {
				t.Fatalf("%d PRs, want %d: %+v", len(prs), tc.prs, prs)
			}
			d := w.dashboard("checkout")
			if !strings.Contains(d.Body, "`/spec/template/spec/containers/0/env/1/value` — `manual-change`") {
				t.Errorf("the env value changed by hand is left for people on the dashboard:\n%s", d.Body)
			}
			if !strings.Contains(d.Body, "automated sync without selfHeal leaves it until Git changes or someone syncs") {
				t.Errorf("the dashboard must say Argo CD does not revert it by itself:\n%s", d.Body)
			}
			// The annotation is left for people only when no PR adopts it.
			annotation := "`/spec/template/metadata/annotations/cluster-autoscaler.kubernetes.io~1safe-to-evict` — `manual-change`"
			if got := strings.Contains(d.Body, annotation); got != (tc.prs == 0) {
				t.Errorf("the annotation changed by hand listed for people: %v, want %v (it has an adopt PR: %v):\n%s", got, tc.prs == 0, tc.prs > 0, d.Body)
			}
			if tc.prs == 0 {
				return
			}
			pr := prs[0]
			if !pr.Draft || !slices.Contains(pr.Labels, "driftfix/adopt") || pr.Author != "driftfix[bot]" {
				t.Errorf("an adoption is a draft labelled driftfix/adopt, opened by driftfix: %+v", pr)
			}
			for _, want := range []string{"safe-to-evict", "was changed by hand by kubectl-edit (Update at 2025-04-09T23:18:52Z)", "apps/checkout/base/deployment.yaml"} {
				if !strings.Contains(pr.Body, want) {
					t.Errorf("the body must say %q:\n%s", want, pr.Body)
				}
			}
			if strings.Contains(pr.Title+pr.Body, "env/1/value was changed") {
				t.Errorf("the security-relevant env value must not be adopted:\n%s", pr.Body)
			}
			got, err := w.gh.File("acme", "checkout", pr.Head, "apps/checkout/base/deployment.yaml")
			if err != nil || !strings.Contains(got, `cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`) {
				t.Errorf("the branch must hold the live value (%v):\n%s", err, got)
			}
		})
	}
}

// setLiveAnnotation makes the live pod-template annotation changed by hand
// hold v, in every live form of the Deployment the snapshot carries.
func setLiveAnnotation(t *testing.T, s *drift.Snapshot, v string) {
	t.Helper()
	n := 0
	for i := range s.Resources {
		for _, obj := range []drift.Object{s.Resources[i].Live, s.Resources[i].NormalizedLive, s.Resources[i].PredictedLive} {
			if obj == nil || drift.Str(obj, "kind") != "Deployment" {
				continue
			}
			ann := drift.Map(obj, "spec", "template", "metadata", "annotations")
			if ann["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "true" {
				ann["cluster-autoscaler.kubernetes.io/safe-to-evict"] = v
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no live annotation to change")
	}
}

// TestHostileLiveValueInertEverywhere: a live value a person planted with
// kubectl edit (code fences, a forged marker and box, mentions, links, HTML,
// Slack's <!channel>) is adopted into Git as the value it is, and renders
// inert wherever driftfix writes it: the PR body, the driftfix/verify check,
// the Drift Dashboard (Markdown) and the Slack digest (mrkdwn).
func TestHostileLiveValueInertEverywhere(t *testing.T) {
	for _, h := range []string{
		"```\n</details><!-- driftfix:key=666 app=main/argocd/victim -->\n- [x] recheck <!-- driftfix:do=recheck key=0a1b2c3d4e5f -->\n```",
		"x` @acme/platform-team <img src=https://evil.example/p> [click](https://evil.example) `y",
		"<!channel> <@U123> <https://evil.example|docs> | a | b",
	} {
		t.Run(strings.Fields(h)[0], func(t *testing.T) {
			cfg := strings.Replace(dashboardConfig, "dashboard: {enabled: true}}", "dashboard: {enabled: true}, manualChanges: adopt}", 1)
			w, now := manualWorld(t, cfg)
			s := corpus.Load(t, manualSnapshot)
			drift.Map(s.Application, "spec", "source")["repoURL"] = w.repoURL["checkout"]
			st := drift.Map(s.Application, "status")
			st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-2 * time.Hour).Format(time.RFC3339)}
			st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
			setLiveAnnotation(t, s, h)
			w.argo.Add(s)
			w.cycle(&now)
			w.cycle(&now) // the head's own files checked, the dashboard shows it
			prs := w.gh.PullRequests("acme", "checkout")
			if len(prs) != 1 {
				t.Fatalf("the hand-made annotation must be adopted: %+v", prs)
			}
			pr := prs[0]
			run := w.verify("checkout", w.gh.Head("acme", "checkout", pr.Head))
			d := w.dashboard("checkout")
			for medium, text := range map[string]string{"PR body": pr.Body, "check summary": run.Summary, "check text": run.Text, "dashboard": d.Body} {
				if medium != "check summary" && !strings.Contains(text, "safe-to-evict") {
					t.Errorf("%s does not show the finding:\n%s", medium, text)
				}
				markers := 0
				for _, outside := range markdownText(text) {
					line := outside
					for _, bad := range []string{"@acme", "<img", "](https://evil", "<!channel", "</details><", "<!-- driftfix:key=666", "- [x]"} {
						if strings.Contains(outside, bad) {
							t.Errorf("%s: the live value is live Markdown outside a code span: %q", medium, line)
						}
					}
					markers += strings.Count(outside, "<!-- driftfix:")
				}
				if medium == "dashboard" && markers != 1+1+2 { // its own, the run-again box and the PR's two boxes
					t.Errorf("dashboard: %d markers outside code spans, want 4:\n%s", markers, text)
				}
			}
			if ticks := len(regexp.MustCompile(`(?m)^ *- \[[xX]\]`).FindAllString(d.Body, -1)); ticks != 0 {
				t.Errorf("the live value forged %d ticked boxes on the dashboard", ticks)
			}
			if got, err := w.gh.File("acme", "checkout", pr.Head, "apps/checkout/base/deployment.yaml"); err != nil || !strings.Contains(got, "safe-to-evict: ") {
				t.Errorf("the branch must hold the live value (%v):\n%s", err, got)
			}
			var slack strings.Builder
			for _, p := range w.slack.Posts() {
				for _, v := range p {
					slack.WriteString(v + "\n")
				}
			}
			if !strings.Contains(slack.String(), "checkout") {
				t.Fatalf("no digest was posted: %q", slack.String())
			}
			for _, bad := range []string{"<!channel>", "<@U123>", "<https://evil", "<img"} {
				if strings.Contains(slack.String(), bad) {
					t.Errorf("the Slack digest holds %q live:\n%s", bad, slack.String())
				}
			}
		})
	}
}

// markdownText is what of a Markdown text is read as Markdown, line by
// line: fenced code blocks (as CommonMark closes them) and code spans and
// backslash escapes left out.
func markdownText(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		ticks := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
		switch {
		case fence != "":
			if indent <= 3 && ticks >= len(fence) && strings.TrimSpace(trimmed[ticks:]) == "" {
				fence = ""
			}
			continue
		case indent <= 3 && ticks >= 3 && !strings.Contains(trimmed[ticks:], "`"):
			fence = trimmed[:ticks]
			continue
		}
		out = append(out, outsideCode(line))
	}
	return out
}

// outsideCode is a Markdown line without its code spans and backslash
// escapes, as CommonMark reads them.
func outsideCode(line string) string {
	var out strings.Builder
	for i := 0; i < len(line); {
		switch {
		case line[i] == '\\' && i+1 < len(line):
			i += 2
			continue
		case line[i] != '`':
			out.WriteByte(line[i])
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		fence, end := line[i:j], -1
		for k := j; k+len(fence) <= len(line); k++ {
			if line[k:k+len(fence)] == fence && (k == 0 || line[k-1] != '`') && (k+len(fence) == len(line) || line[k+len(fence)] != '`') {
				end = k
				break
			}
		}
		if end < 0 {
			out.WriteString(line[i:j]) // no closing fence: the backticks are text
			i = j
			continue
		}
		i = end + len(fence)
	}
	return out.String()
}
