package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/templates"
)

const fightConfig = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack: {tokenEnv: S, channel: "#gitops"}
policy: {labels: [driftfix], dashboard: {enabled: true}}
`

// fightRound makes app serve one side of a fight at now: with out, the
// other writer holds /spec/replicas of the Deployment (6, as the HPA
// wants) and the application is OutOfSync; without, self-heal has just
// written Git's 2 back as argocd-controller and it is Synced. Self-heal
// is on, and its history holds syncs automated syncs of one revision
// in the last hour.
func (w *world) fightRound(name string, now time.Time, out bool, other string, syncs int) *drift.Snapshot {
	w.t.Helper()
	s := w.setAppAt(name, name, true, now, "a1b2c3")
	drift.Map(s.Application, "spec")["syncPolicy"] = map[string]any{"automated": map[string]any{"selfHeal": true}}
	st := drift.Map(s.Application, "status")
	var hist []any
	for i := syncs - 1; i >= 0; i-- {
		hist = append(hist, map[string]any{"revision": "a1b2c3", "deployedAt": now.Add(-time.Duration(i*50+2) * time.Minute / 10).Format(time.RFC3339),
			"initiatedBy": map[string]any{"automated": true}})
	}
	st["history"] = hist
	st["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Minute).Format(time.RFC3339)}
	replicas, by := int64(6), other
	if !out {
		replicas, by = 2, "argocd-controller"
		st["sync"] = map[string]any{"status": "Synced", "revision": "a1b2c3"}
	}
	for i := range s.Resources {
		live := s.Resources[i].Live
		if drift.Str(live, "kind") != "Deployment" {
			continue
		}
		drift.Map(live, "spec")["replicas"] = replicas
		for _, e := range drift.List(live, "metadata", "managedFields") {
			mf := e.(map[string]any)
			if _, ok := drift.Map(mf, "fieldsV1", "f:spec")["f:replicas"]; ok {
				mf["manager"], mf["time"] = by, now.Add(-30*time.Second).Format(time.RFC3339)
			}
		}
	}
	return s
}

// fightLines are the digest lines about fights in the posts from the given one on.
func fightLines(t *testing.T, w *world, from int) []string {
	t.Helper()
	var out []string
	for _, p := range w.slack.Posts()[from:] {
		for _, l := range strings.Split(digestText(t, p), "\n") {
			if strings.Contains(l, "take turns") {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestFightReportedOnce: the HPA's controller writes replicas 6 and
// self-heal writes Git's 2 back, cycle after cycle, so the application is
// Synced every other cycle and never stuck for long. After three changes of
// hands driftfix reports one fight naming both writers, the count, the cost
// and the fix for the other writer's cause, once in the digest however many
// cycles follow, and on the Drift Dashboard as long as it goes on.
func TestFightReportedOnce(t *testing.T) {
	w := newWorld(t, fightConfig)
	w.addRepo("shop")
	now := worldNow
	var lines []string
	for i := 0; i < 7; i++ {
		w.fightRound("shop", now, i%2 == 0, "kube-controller-manager", 3)
		posts := len(w.slack.Posts())
		out := w.cycle(&now)
		got := fightLines(t, w, posts)
		if i < 3 && len(got) > 0 {
			t.Fatalf("cycle %d: a fight after %d changes of hands: %q", i, i, got)
		}
		if i%2 == 1 && len(out.Result.Stuck) != 0 {
			t.Fatalf("cycle %d: a Synced application counted as stuck", i)
		}
		if len(out.Published.Closed) != 0 {
			t.Fatalf("cycle %d: a fight's Synced turn closed the fix PR %v", i, out.Published.Closed)
		}
		lines = append(lines, got...)
	}
	if len(lines) != 1 {
		t.Fatalf("the fight is told %d times in the digest, want once: %q", len(lines), lines)
	}
	l := lines[0]
	t.Logf("digest line: %s", l)
	for _, want := range []string{"`argocd-controller` and `kube-controller-manager` take turns at `/spec/replicas`", "3 changes of hands",
		"cost: 3 self-heal syncs of one revision", "Fix: `remove-field`, the one for the other writer's cause `hpa-replicas`", "`Deployment shop/web`"} {
		if !strings.Contains(l, want) {
			t.Errorf("the fight's line lacks %q:\n%s", want, l)
		}
	}
	d := w.dashboard("shop")
	t.Logf("dashboard:\n%s", d.Body)
	if !strings.Contains(d.Body, "**Writers fighting over a field**") || !strings.Contains(d.Body, "`argocd-controller` and `kube-controller-manager` take turns at `/spec/replicas`") {
		t.Errorf("the dashboard does not show the fight:\n%s", d.Body)
	}
}

// TestFightNotAScaleEvent: one scale event (the HPA's controller sets 6 and
// keeps it) is one writer, however many cycles see it: no fight.
func TestFightNotAScaleEvent(t *testing.T) {
	w := newWorld(t, fightConfig)
	w.addRepo("shop")
	now := worldNow
	w.fightRound("shop", now, false, "", 3)
	w.cycle(&now)
	for i := 0; i < 5; i++ {
		w.fightRound("shop", now, true, "kube-controller-manager", 3)
		w.cycle(&now)
	}
	if got := fightLines(t, w, 0); len(got) != 0 {
		t.Fatalf("a scale event reported as a fight: %q", got)
	}
	if d := w.dashboard("shop"); strings.Contains(d.Body, "fighting") {
		t.Errorf("the dashboard shows a fight:\n%s", d.Body)
	}
}

// TestFightFromSelfHealSyncs: self-heal syncing one revision more than
// maxSelfHealSyncsPerHour times is a fight even before the cycles saw the
// values change hands, against the writer the diagnosis named. The syncs are
// Argo CD's count in the last operation (self-heal syncs only the differing
// resources, which status.history does not record), and their rate is told
// from two cycles.
func TestFightFromSelfHealSyncs(t *testing.T) {
	w := newWorld(t, fightConfig)
	w.cfg.Policy.Fights.MaxSelfHealSyncsPerHour = 4
	w.addRepo("shop")
	now := worldNow
	streak := func(n int) {
		s := w.fightRound("shop", now, true, "kube-controller-manager", 0)
		drift.Map(s.Application, "status")["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Minute).Format(time.RFC3339),
			"operation":  map[string]any{"initiatedBy": map[string]any{"automated": true}, "sync": map[string]any{"revision": "a1b2c3", "autoHealAttemptsCount": int64(n)}},
			"syncResult": map[string]any{"revision": "a1b2c3"}}
	}
	streak(3)
	w.cycle(&now)
	if got := fightLines(t, w, 0); len(got) != 0 {
		t.Fatalf("3 self-heal syncs told as a fight: %q", got)
	}
	streak(6)
	w.cycle(&now)
	got := fightLines(t, w, 0)
	if len(got) != 1 || !strings.Contains(got[0], "cost: 6 self-heal syncs of one revision, about 12 an hour") || !strings.Contains(got[0], "`argocd-controller` and `kube-controller-manager`") {
		t.Fatalf("fight lines %q", got)
	}
}

// TestFightNotToldBeforeItsWriterIsNamed: the first cycle finds the
// application Synced with self-heal over its sync limit, before any cycle
// has caught it OutOfSync: nothing names the resource or the other writer,
// so no fight is told then; the cycles that catch the HPA's turns tell it
// once, naming both writers (as on the real stack, where a fight told from
// the syncs alone was told a second time once its writer was known).
func TestFightNotToldBeforeItsWriterIsNamed(t *testing.T) {
	w := newWorld(t, fightConfig)
	w.cfg.Policy.Fights.MaxSelfHealSyncsPerHour = 2
	w.addRepo("shop")
	now := worldNow
	for i := 0; i < 6; i++ {
		s := w.fightRound("shop", now, i%2 == 1, "kube-controller-manager", 0)
		drift.Map(s.Application, "status")["operationState"] = map[string]any{"phase": "Succeeded", "finishedAt": now.Add(-time.Minute).Format(time.RFC3339),
			"operation":  map[string]any{"initiatedBy": map[string]any{"automated": true}, "sync": map[string]any{"revision": "a1b2c3", "autoHealAttemptsCount": int64(3 + i)}},
			"syncResult": map[string]any{"revision": "a1b2c3"}}
		w.cycle(&now)
		if i == 0 {
			if got := fightLines(t, w, 0); len(got) != 0 {
				t.Fatalf("a fight told before anything named its writer: %q", got)
			}
		}
	}
	got := fightLines(t, w, 0)
	if len(got) != 1 || !strings.Contains(got[0], "`argocd-controller` and `kube-controller-manager`") || !strings.Contains(got[0], "/spec/replicas") {
		t.Fatalf("want the fight told once, naming both writers and the path: %q", got)
	}
}

// TestFightHostileManager: a field manager named to break out of Slack's
// markup (a mention, a link, a code span) is inert text in the digest, and
// on the Drift Dashboard.
func TestFightHostileManager(t *testing.T) {
	w := newWorld(t, fightConfig)
	w.addRepo("shop")
	now := worldNow
	const hostile = "op`<!channel> <https://evil.example|click>*x*"
	for i := 0; i < 5; i++ {
		w.fightRound("shop", now, i%2 == 0, hostile, 3)
		w.cycle(&now)
	}
	got := fightLines(t, w, 0)
	if len(got) != 1 {
		t.Fatalf("fight lines %q", got)
	}
	for _, bad := range []string{"<!channel>", "<https://evil.example", "`<"} {
		if strings.Contains(got[0], bad) {
			t.Errorf("the digest line carries %q unescaped:\n%s", bad, got[0])
		}
	}
	d := w.dashboard("shop").Body
	i := strings.Index(d, "**Writers fighting over a field**")
	if i < 0 {
		t.Fatalf("the dashboard does not show the fight:\n%s", d)
	}
	t.Logf("dashboard line: %s", strings.SplitN(d[i:], "\n", 4)[2])
	// Only inside a code span, where markdown renders it as it is.
	if rest := strings.ReplaceAll(d, templates.Code(hostile), ""); strings.Contains(rest, "evil.example") || !strings.Contains(d, templates.Code(hostile)) {
		t.Errorf("the dashboard carries the manager's name outside a code span:\n%s", d[i:])
	}
}
