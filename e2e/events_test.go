//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/deploy"
)

// The events scenarios run `driftfix run` on the real stack with its
// schedule a year away: whatever it does within the test, an event made it
// do. Each checks the process ran one cycle only (the one at start).

// yearly is a schedule whose next cycle is months away.
const yearly = `"0 0 1 1 *"`

// startEventBot starts `driftfix run` on env's policy with the schedule a
// year away and no jitter, with args added; it returns the process and the
// address of its /metrics. The process is killed when the test ends.
func startEventBot(t *testing.T, env *botEnv, args ...string) (*replica, string) {
	t.Helper()
	raw, err := os.ReadFile(env.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(env.dir, "events.yaml")
	if err := os.WriteFile(cfg, append(raw, []byte("schedule: "+yearly+"\njitter: 0s\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	r := &replica{name: "events"}
	r.cmd = exec.Command(env.bin, append([]string{"run", "--config", cfg, "--listen", addr}, args...)...)
	r.cmd.Stdout, r.cmd.Stderr = r, r
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	})
	return r, addr
}

// logLines are the process's JSON log lines so far.
func logLines(r *replica) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(r.text(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// count is how many log lines have msg.
func count(r *replica, msg string) int {
	n := 0
	for _, l := range logLines(r) {
		if l["msg"] == msg {
			n++
		}
	}
	return n
}

// scheduledBefore is how many cycles the schedule (not an event) ran before
// the first log line until accepts: the cycles done less those an event
// asked for (an application re-checked before its stuckAfter asks for the
// cycle after it; a diagnosis with a fix asks for the one that publishes).
func scheduledBefore(r *replica, until func(map[string]any) bool) int {
	n := 0
	for _, l := range logLines(r) {
		if until(l) {
			break
		}
		switch l["msg"] {
		case "cycle done":
			n++
		case "cycle asked for by an event":
			n--
		}
	}
	return n
}

// waitLog waits up to within for a log line ok accepts, and returns it and
// when it was seen (polled every 50ms).
func waitLog(t *testing.T, r *replica, within time.Duration, what string, ok func(map[string]any) bool) (map[string]any, time.Time) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, l := range logLines(r) {
			if ok(l) {
				return l, time.Now()
			}
		}
	}
	t.Fatalf("no log line %s within %s:\n%s", what, within, r.text())
	return nil, time.Time{}
}

// metric returns the value of the metric line that starts with series
// ("name{labels}"), or "" when /metrics at addr has none.
func metric(t *testing.T, addr, series string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

// randomSecret is a shared secret, written to a 0600 file in dir.
func randomSecret(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	b := make([]byte, 20)
	rand.Read(b)
	sec := hex.EncodeToString(b)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(sec+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return sec, p
}

// diagnosedBy is the "application diagnosed" line of app that came through via.
func diagnosedBy(app, via string) func(map[string]any) bool {
	return func(l map[string]any) bool {
		return l["msg"] == "application diagnosed" && l["app"] == app && l["delivery"] == via
	}
}

// TestEventPullRequestCheck: a pull request opened on the emulated GitHub,
// its pull_request delivery signed with the App's webhook secret and sent
// to the running bot's receiver, gets its driftfix/predict check within
// the bound (10 s), predicted against the real Argo CD: failed,
// annotated at the replicas line an HPA would take. The delivery is
// acknowledged at once, and no scheduled cycle ran meanwhile.
func TestEventPullRequestCheck(t *testing.T) {
	s := newStack(t)
	const name = "e2e-events-pr"
	env := newBotEnv(t, s, name, "events-pr.db")
	gh := env.gh
	s.application(t, name, env.repo, "app", name, "")
	secret, secretFile := randomSecret(t, env.dir, "github-webhook-secret")
	hook := freeAddr(t)
	bot, _ := startEventBot(t, env, "--webhook-secret-file", secretFile, "--webhook-listen", hook, "--argocd-watch=false")
	cycleDone(t, bot) // a check needs what a cycle read (the applications, Argo CD's settings)

	for path, content := range map[string]string{
		"app/deployment.yaml": strings.Replace(deployment, "replicas: 2", "replicas: 3", 1),
		"app/hpa.yaml":        predictHPA,
	} {
		if err := gh.CommitFile("acme", name, "autoscale", path, content, "person"); err != nil {
			t.Fatal(err)
		}
	}
	head := gh.Head("acme", name, "autoscale")
	// The App's webhook: GitHub sends pull_request events from now on.
	gh.SetWebhook("http://"+hook+"/webhook", secret, "pull_request")
	start := time.Now()
	number, err := gh.AddPR("acme", name, githubtest.PullRequest{Title: "autoscale", Head: "autoscale", Base: "main", Author: "person"})
	if err != nil {
		t.Fatal(err)
	}
	var runs []githubtest.CheckRun
	for deadline := start.Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if runs = predictRuns(gh, name, head); len(runs) == 1 && runs[0].Status == "completed" {
			break
		}
	}
	took := time.Since(start)
	if len(runs) != 1 || runs[0].Status != "completed" {
		t.Fatalf("no completed driftfix/predict check on %s within 60 s: %+v\n%s", short(head), runs, bot.text())
	}
	gh.WaitDeliveries()
	var opened githubtest.Delivery
	for _, d := range gh.Deliveries() {
		if d.Event == "pull_request" && d.Action == "opened" {
			opened = d
		}
	}
	t.Logf("pull request #%d opened -> driftfix/predict %s in %s; the delivery %s answered %v in %s: %q",
		number, runs[0].Conclusion, took.Round(time.Millisecond), opened.ID, opened.Statuses, opened.Took.Round(time.Millisecond), strings.TrimSpace(opened.Answer))
	if opened.ID == "" || opened.Status() != http.StatusAccepted || opened.Took > time.Second {
		t.Errorf("the pull_request delivery: %+v; want 202 within 1 s", opened)
	}
	if took > 10*time.Second {
		t.Errorf("the check came %s after the pull request was opened, more than 10 s", took.Round(time.Millisecond))
	}
	if runs[0].Conclusion != "failure" || len(runs[0].Annotations) != 1 || runs[0].Annotations[0].Path != "app/deployment.yaml" || runs[0].Annotations[0].StartLine != 6 {
		t.Errorf("the check: %s with annotations %+v; want a failure at app/deployment.yaml:6 (replicas)", runs[0].Conclusion, runs[0].Annotations)
	}
	// The delivery did it: the log names it, and only the cycle at start ran.
	predicted := func(l map[string]any) bool { return l["msg"] == "pull request predicted" && l["delivery"] == opened.ID }
	waitLog(t, bot, 5*time.Second, "naming the delivery", predicted)
	if n := scheduledBefore(bot, predicted); n != 1 {
		t.Errorf("%d scheduled cycles ran, want only the one at start:\n%s", n, bot.text())
	}

	// The same delivery again (GitHub's Redeliver, or a replay by whoever
	// captured it): answered 200, not acted on, no second check.
	updates := predictRuns(gh, name, head)[0].Updates
	again, err := gh.Redeliver(opened.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status() != http.StatusOK || !strings.Contains(again.Answer, "already received") {
		t.Errorf("the delivery sent again: %d %q, want 200 already received", again.Status(), again.Answer)
	}
	time.Sleep(2 * time.Second)
	if runs := predictRuns(gh, name, head); len(runs) != 1 || runs[0].Updates != updates {
		t.Errorf("after the replay, the checks on %s: %+v; want the one, not updated again (%d updates before)", short(head), runs, updates)
	}
}

// hpaTakesReplicas lets an HPA take the replicas of the application's
// Deployment and waits until Argo CD reports it OutOfSync; it returns when
// the HPA was applied.
func (s *stack) hpaTakesReplicas(t *testing.T, name string) time.Time {
	t.Helper()
	applied := time.Now()
	s.kubectl(t, predictHPA, "-n", name, "apply", "-f", "-")
	s.waitFor(t, name, outOfSync, "OutOfSync after an HPA took its replicas")
	return applied
}

// logTime is when the process logged l.
func logTime(t *testing.T, l map[string]any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(l["time"]))
	if err != nil {
		t.Fatalf("log line %v: %v", l, err)
	}
	return at
}

// TestEventArgoCDNotification runs Argo CD's own notifications controller
// (the stack's argocd binary as argocd-notifications) with
// deploy/argocd/argocd-notifications-webhook-patch.yaml applied as shipped,
// but for the service's url (the test's receiver instead of the in-cluster
// Service), and the shared secret in argocd-notifications-secret. driftfix
// runs without the watch stream, as where none can stay open: when the
// application turns OutOfSync after its sync, the controller's POST
// /argocd, authenticated by the X-Driftfix-Secret header the template
// renders, gets it diagnosed within a minute, with no cycle.
func TestEventArgoCDNotification(t *testing.T) {
	s := newStack(t)
	const name = "e2e-events-notify"
	env := newBotEnv(t, s, name, "events-notify.db")
	s.application(t, name, env.repo, "app", name, "")
	secret, secretFile := randomSecret(t, env.dir, "argocd-notify-secret")
	hook := freeAddr(t)
	bot, metrics := startEventBot(t, env, "--argocd-notify-secret-file", secretFile, "--webhook-listen", hook, "--argocd-watch=false")
	cycleDone(t, bot) // the application is Synced: nothing to diagnose

	patch, err := os.ReadFile("../deploy/argocd/argocd-notifications-webhook-patch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const shippedURL = "url: http://driftfix.driftfix.svc:8081/argocd"
	if strings.Count(string(patch), shippedURL) != 1 {
		t.Fatalf("the shipped patch no longer has %q", shippedURL)
	}
	s.kubectl(t, strings.Replace(string(patch), shippedURL, "url: http://"+hook+"/argocd", 1), "apply", "-f", "-")
	s.kubectl(t, "", "-n", "argocd", "create", "secret", "generic", "argocd-notifications-secret", "--from-literal=driftfix-notify-secret="+secret)
	t.Cleanup(func() {
		s.kubectl(t, "", "-n", "argocd", "delete", "configmap", "argocd-notifications-cm", "--ignore-not-found")
		s.kubectl(t, "", "-n", "argocd", "delete", "secret", "argocd-notifications-secret", "--ignore-not-found")
	})
	_, port, _ := net.SplitHostPort(freeAddr(t))
	ctrl := &replica{name: "argocd-notifications"}
	ctrl.cmd = exec.Command(filepath.Join(s.root, "bin", "argocd"), "--kubeconfig", s.kubeconfig, "--namespace", "argocd",
		"--metrics-port", port, "--argocd-repo-server", "127.0.0.1:8081", "--loglevel", "debug")
	ctrl.cmd.Env = append(os.Environ(), "ARGOCD_BINARY_NAME=argocd-notifications")
	ctrl.cmd.Stdout, ctrl.cmd.Stderr = ctrl, ctrl
	if err := ctrl.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctrl.cmd.Process.Kill()
		ctrl.cmd.Wait()
		if t.Failed() {
			t.Logf("argocd-notifications log:\n%s", ctrl.text())
		}
	})
	// The controller sends the successful sync it finds at start: the
	// application is Synced, so driftfix answers it is ignored.
	for deadline := time.Now().Add(60 * time.Second); metric(t, metrics, `driftfix_webhook_deliveries_total{event="argocd",outcome="ignored"}`) == ""; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no notification of the successful sync reached driftfix within 60 s\ndriftfix:\n%s\nargocd-notifications:\n%s", bot.text(), ctrl.text())
		}
	}

	// Anyone else who reaches the port: no header, or another secret, is
	// refused before the body is read, and does nothing.
	forged := `{"app": "` + name + `", "namespace": "argocd", "syncStatus": "OutOfSync", "finishedAt": "", "trigger": "forged"}`
	for _, header := range []string{"", "not-" + secret} {
		req, err := http.NewRequest(http.MethodPost, "http://"+hook+"/argocd", strings.NewReader(forged))
		if err != nil {
			t.Fatal(err)
		}
		if header != "" {
			req.Header.Set("X-Driftfix-Secret", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a notification with secret header %q: %d, want 401", header, resp.StatusCode)
		}
	}

	applied := s.hpaTakesReplicas(t, name)
	diagnosed := diagnosedBy("e2e/argocd/"+name, "argocd notification argocd-notifications")
	l, _ := waitLog(t, bot, time.Minute, "diagnosing the application from the notification", diagnosed)
	t.Logf("HPA applied -> OutOfSync -> notified -> diagnosed in %s (the HPA's scale and Argo CD's comparison included)", logTime(t, l).Sub(applied).Round(time.Millisecond))
	if v := metric(t, metrics, `driftfix_webhook_deliveries_total{event="argocd",outcome="queued"}`); v == "" {
		t.Errorf("driftfix counted no queued notification")
	}
	if n := scheduledBefore(bot, diagnosed); n != 1 {
		t.Errorf("%d scheduled cycles ran before the diagnosis, want only the one at start:\n%s", n, bot.text())
	}
	for _, l := range logLines(bot) {
		if d, _ := l["delivery"].(string); strings.Contains(d, "forged") {
			t.Errorf("a forged notification was acted on: %v", l)
		}
	}
}

// TestEventWatchStream: with the watch stream on (the default) and the
// schedule a year away, an application that Argo CD syncs to a new commit
// while driftfix runs, and that then turns OutOfSync (an HPA takes its
// replicas), is diagnosed from the stream within a minute, with no cycle.
func TestEventWatchStream(t *testing.T) {
	s := newStack(t)
	const name = "e2e-events-watch"
	env := newBotEnv(t, s, name, "events-watch.db")
	s.application(t, name, env.repo, "app", name, "")
	bot, metrics := startEventBot(t, env)
	cycleDone(t, bot)
	for deadline := time.Now().Add(30 * time.Second); metric(t, metrics, `driftfix_argocd_watch{instance="e2e",state="streaming"}`) != "1"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the watch stream is not streaming after 30 s:\n%s", bot.text())
		}
	}

	// A sync while driftfix watches: a new image in Git.
	if err := env.gh.CommitFile("acme", name, "main", "app/deployment.yaml", strings.Replace(deployment, "web:1.0.0", "web:1.0.1", 1), "person"); err != nil {
		t.Fatal(err)
	}
	headSHA := env.gh.Head("acme", name, "main")
	s.kubectl(t, "", "-n", "argocd", "annotate", "application", name, "argocd.argoproj.io/refresh=normal", "--overwrite")
	s.waitFor(t, name, func(a argocd.AppSummary) bool {
		return a.Revision == headSHA && a.SyncStatus == "Synced" && a.OperationPhase == "Succeeded"
	}, "Synced at "+short(headSHA))
	time.Sleep(2 * time.Second) // past stuckAfter: the stream's event itself finds it stuck

	applied := s.hpaTakesReplicas(t, name)
	diagnosed := diagnosedBy("e2e/argocd/"+name, "argocd watch")
	l, _ := waitLog(t, bot, time.Minute, "diagnosing the application from the stream", diagnosed)
	t.Logf("HPA applied -> OutOfSync -> streamed -> diagnosed in %s (the HPA's scale and Argo CD's comparison included)", logTime(t, l).Sub(applied).Round(time.Millisecond))
	if n := scheduledBefore(bot, diagnosed); n != 1 {
		t.Errorf("%d scheduled cycles ran before the diagnosis, want only the one at start:\n%s", n, bot.text())
	}
}

// TestPolicyReloadGoesLive: the README's install (a dry run) with Helm on
// the stack, its Deployment's container run as the kubelet would, its
// ConfigMap mounted as a kubelet mounts one (the file a symbolic link into
// a ..data directory that is swapped whole). The dry run proposes the fix
// and opens nothing. Then the README's go-live line, `helm upgrade ...
// --set dryRun=false`, as written: the kubelet's swap of the changed
// ConfigMap reaches the running process, which takes the new policy without
// a restart and opens the fix at its next cycle. The upgrade also changes
// the pod template's checksum/config, so on a cluster the Deployment rolls
// the pod as well (this stack has no kubelet to show that part).
func TestPolicyReloadGoesLive(t *testing.T) {
	s := newStack(t)
	const name = "e2e-reload"
	env := newBotEnv(t, s, name, "unused.db")
	// The HPA is the application's own, in Git with the replicas it takes:
	// what makes removing them a fix driftfix proposes.
	if err := env.gh.CommitFile("acme", name, "main", "app/hpa.yaml", predictHPA, "person"); err != nil {
		t.Fatal(err)
	}
	s.kubectl(t, "", "-n", "argocd", "delete", "application", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "delete", "namespace", name, "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", name)
	s.applicationIn(t, name, env.repo, "app", name, "", false)
	s.waitFor(t, name, func(a argocd.AppSummary) bool { return outOfSync(a) && a.OperationPhase == "Succeeded" }, "OutOfSync after a successful sync (its HPA took the replicas)")
	time.Sleep(2 * time.Second) // past stuckAfter
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	line := func(prefix string) []string {
		t.Helper()
		words, err := deploy.READMECommand(readme, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return words
	}
	repoRoot, _ := filepath.Abs("..")
	run := func(dir string, words []string, extra ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(s.root, "bin", words[0]), append(append([]string{"--kubeconfig", s.kubeconfig}, words[1:]...), extra...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	work := t.TempDir()
	token, _ := os.ReadFile(filepath.Join(s.root, "run", "argocd-token"))
	for file, content := range map[string][]byte{"argocd-token": token, "github-app.pem": env.gh.PrivateKeyPEM} {
		if err := os.WriteFile(filepath.Join(work, file), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.kubectl(t, "", "delete", "namespace", "driftfix", "--ignore-not-found", "--timeout=60s")
	run(work, line("kubectl create namespace driftfix"))
	t.Cleanup(func() { s.kubectl(t, "", "delete", "namespace", "driftfix", "--ignore-not-found", "--timeout=60s") })
	run(work, line("kubectl -n driftfix create secret generic driftfix "))
	// The README's install, with this stack's addresses, a stuck threshold
	// a test can wait for, and a cycle every minute.
	run(repoRoot, line("helm install driftfix deploy/chart "),
		"--set", "argocd.server="+argoURL, "--set", "argocd.insecurePlaintext=true",
		"--set", "github.appID="+strconv.FormatInt(env.gh.AppID, 10), "--set", "github.baseURL="+env.gh.API,
		"--set", "policy.stuckAfter=1s", "--set", "policy.minStuckFor=0s", "--set", "schedule=* * * * *", "--set", "jitter=0s")
	t.Cleanup(func() {
		exec.Command(filepath.Join(s.root, "bin", "helm"), "--kubeconfig", s.kubeconfig, "uninstall", "driftfix", "-n", "driftfix").Run()
	})
	sum := func() string {
		return s.kubectl(t, "", "-n", "driftfix", "get", "deployment", "driftfix", "-o", `jsonpath={.spec.template.metadata.annotations.checksum/config}`)
	}
	before := sum()

	pod, project := s.runMounted(t, env)
	first := cycleDone(t, pod)
	if proposed, _ := first["proposed"].(float64); proposed < 1 || first["opened"] != 0.0 {
		t.Fatalf("the README's dry run: %v\n%s", first, pod.text())
	}
	if prs := env.gh.PullRequests("acme", name); len(prs) != 0 {
		t.Fatalf("the dry run opened pull requests: %+v", prs)
	}

	// First a hand edit of the ConfigMap that breaks the policy: refused,
	// logged with its line, counted, and the dry run goes on.
	cm := s.kubectl(t, "", "-n", "driftfix", "get", "configmap", "driftfix", "-o", `jsonpath={.data.driftfix\.yaml}`)
	if !strings.Contains(cm, "dryRun: true\n") {
		t.Fatalf("the chart's policy has no dryRun: true line:\n%s", cm)
	}
	bad, _ := json.Marshal(map[string]any{"data": map[string]string{"driftfix.yaml": strings.Replace(cm, "dryRun: true\n", "dryRun: sometimes\n", 1)}})
	s.kubectl(t, "", "-n", "driftfix", "patch", "configmap", "driftfix", "--type", "merge", "-p", string(bad))
	project()
	waitLog(t, pod, 30*time.Second, "refusing the broken policy", func(l map[string]any) bool {
		return l["msg"] == "changed policy refused: the policy in use stays" && l["key"] == "dryRun"
	})
	if v := metric(t, podAddr(t, pod), "driftfix_policy_invalid"); v != "1" {
		t.Errorf("driftfix_policy_invalid is %q after a refused policy, want 1", v)
	}

	// Then the README's go-live line: Helm writes its ConfigMap over the edit.
	run(repoRoot, line("helm upgrade driftfix deploy/chart -n driftfix --reuse-values --set dryRun=false"))
	if after := sum(); after == before || len(after) != 64 {
		t.Errorf("checksum/config %q before the upgrade, %q after: want a new sum, so a cluster rolls the pod too", before, after)
	}
	changed := time.Now()
	project()
	_, took := waitLog(t, pod, 30*time.Second, "taking the changed policy", func(l map[string]any) bool {
		return l["msg"] == "policy changed: the new one is used from now on" && l["dry_run"] == false
	})
	t.Logf("the changed ConfigMap was taken %s after the kubelet's swap", took.Sub(changed).Round(time.Millisecond))
	if v := metric(t, podAddr(t, pod), "driftfix_policy_invalid"); v != "0" {
		t.Errorf("driftfix_policy_invalid is %q once a valid policy is taken, want 0", v)
	}
	for _, l := range logLines(pod) {
		if l["msg"] == "cycle done" && l["opened"] != 0.0 && logTime(t, l).Before(took) {
			t.Errorf("a cycle published before the valid policy was taken: %v", l)
		}
	}
	// The next cycle (within a minute) opens the fix.
	live, _ := waitLog(t, pod, 150*time.Second, "of a cycle that opened the fix", func(l map[string]any) bool {
		opened, _ := l["opened"].(float64)
		return l["msg"] == "cycle done" && opened >= 1
	})
	t.Logf("the fix opened %s after the swap, by the next scheduled cycle (every minute here)", logTime(t, live).Sub(changed).Round(time.Millisecond))
	prs := env.gh.PullRequests("acme", name)
	if len(prs) != 1 || !strings.HasPrefix(prs[0].Head, "driftfix/"+name+"/hpa-replicas-") {
		t.Fatalf("after going live, the pull requests: %+v\n%s", prs, pod.text())
	}
	if n := count(pod, "driftfix running"); n != 1 || pod.cmd.ProcessState != nil {
		t.Errorf("the process was restarted (%d starts) or stopped", n)
	}
	pod.stop(t)
}

// podAddr is the address a pod serves /metrics on (its --listen).
func podAddr(t *testing.T, pod *replica) string {
	t.Helper()
	for _, a := range pod.cmd.Args {
		if v, ok := strings.CutPrefix(a, "--listen="); ok {
			return v
		}
	}
	t.Fatalf("the pod has no --listen: %q", pod.cmd.Args)
	return ""
}

// runMounted runs the installed Deployment's container as the kubelet
// would: its args, its service account's identity, its Secret as files, and
// its ConfigMap mounted as the kubelet's atomic writer does (driftfix.yaml
// a link to ..data/driftfix.yaml, ..data a link to a timestamped directory
// swapped by a rename). It returns the pod and project, which writes the
// ConfigMap's current content into the mount as the kubelet's sync does.
func (s *stack) runMounted(t *testing.T, env *botEnv) (*replica, func()) {
	t.Helper()
	root := t.TempDir()
	mount := filepath.Join(root, "config")
	for _, d := range []string{mount, filepath.Join(root, "secrets"), filepath.Join(root, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	project := func() {
		t.Helper()
		cfg := s.kubectl(t, "", "-n", "driftfix", "get", "configmap", "driftfix", "-o", `jsonpath={.data.driftfix\.yaml}`)
		cfg = strings.NewReplacer("/var/run/secrets/driftfix/", root+"/secrets/", "/var/lib/driftfix/", root+"/state/").Replace(cfg)
		n++
		ts := fmt.Sprintf("..%s_%d", time.Now().UTC().Format("2006_01_02_15_04_05"), n)
		if err := os.Mkdir(filepath.Join(mount, ts), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mount, ts, "driftfix.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(ts, filepath.Join(mount, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(mount, "..data_tmp"), filepath.Join(mount, "..data")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(mount, "driftfix.yaml")); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", "driftfix.yaml"), filepath.Join(mount, "driftfix.yaml")); err != nil {
				t.Fatal(err)
			}
		}
	}
	project()
	for _, key := range []string{"argocd-token", "github-app.pem"} {
		b64 := s.kubectl(t, "", "-n", "driftfix", "get", "secret", "driftfix", "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}")
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "secrets", key), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	if err := json.Unmarshal([]byte(s.kubectl(t, "", "-n", "driftfix", "get", "deployment", "driftfix", "-o", "jsonpath={.spec.template.spec.containers[0].args}")), &args); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		switch {
		case a == "--config=/etc/driftfix/driftfix.yaml":
			args[i] = "--config=" + filepath.Join(mount, "driftfix.yaml")
		case strings.HasPrefix(a, "--listen="):
			args[i] = "--listen=" + freeAddr(t)
		}
	}
	kc, err := os.ReadFile(s.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var kcObj map[string]any
	if err := yaml.Unmarshal(kc, &kcObj); err != nil {
		t.Fatal(err)
	}
	for _, u := range kcObj["users"].([]any) {
		u.(map[string]any)["user"].(map[string]any)["as"] = "system:serviceaccount:driftfix:driftfix"
	}
	saKC, _ := yaml.Marshal(kcObj)
	saFile := filepath.Join(root, "sa-kubeconfig")
	if err := os.WriteFile(saFile, saKC, 0o600); err != nil {
		t.Fatal(err)
	}
	pod := &replica{name: "pod"}
	pod.cmd = exec.Command(env.bin, args...)
	pod.cmd.Env = append(os.Environ(), "KUBECONFIG="+saFile, "POD_NAMESPACE=driftfix")
	pod.cmd.Stdout, pod.cmd.Stderr = pod, pod
	if err := pod.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pod.cmd.ProcessState == nil {
			pod.cmd.Process.Kill()
			pod.cmd.Wait()
		}
	})
	return pod, project
}

// TestDeployReceiverOptions applies, as a server-side dry run, the chart
// with the receiver on for GitHub and Argo CD Notifications (the shared
// secret given as a value: the chart's own Secret, mounted alone) and an
// overlay of the Kustomize base with its receiver components, built by the
// real kubectl: the API server takes every object, the Secret's volume
// with its one key included.
func TestDeployReceiverOptions(t *testing.T) {
	s := newStack(t)
	chart, _ := filepath.Abs("../deploy/chart")
	kust, _ := filepath.Abs("../deploy/kustomize")
	overlay := t.TempDir()
	rel, err := filepath.Rel(overlay, kust)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte("resources: ["+rel+"]\ncomponents: ["+rel+"/components/receiver, "+rel+"/components/github-webhook, "+rel+"/components/argocd-notifications]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.kubectl(t, "", "delete", "namespace", "driftfix", "--ignore-not-found", "--timeout=60s")
	s.kubectl(t, "", "create", "namespace", "driftfix")
	t.Cleanup(func() { s.kubectl(t, "", "delete", "namespace", "driftfix", "--ignore-not-found", "--timeout=60s") })
	for name, manifests := range map[string]string{
		"chart": s.run(t, "helm", "template", "driftfix", chart, "-n", "driftfix", "--kube-version", s.serverVersion(t),
			"--set", "webhook.enabled=true", "--set", "argocd.notifications.enabled=true", "--set", "argocd.notifications.secretValue=e2e-shared-secret"),
		"kustomize overlay": s.kubectl(t, "", "kustomize", overlay),
	} {
		for _, want := range []string{"--webhook-listen=:8081", "--argocd-notify-secret-file=", "--webhook-secret-file="} {
			if !strings.Contains(manifests, want) {
				t.Errorf("%s: the Deployment lacks %s", name, want)
			}
		}
		out := s.kubectl(t, manifests, "apply", "--dry-run=server", "-f", "-")
		if !strings.Contains(out, "secret/driftfix-argocd-notify created (server dry run)") && name == "chart" {
			t.Errorf("%s: the chart's notification Secret was not taken: %s", name, out)
		}
		if !strings.Contains(out, "deployment.apps/driftfix created (server dry run)") || !strings.Contains(out, "service/driftfix created (server dry run)") {
			t.Errorf("%s: %s", name, out)
		}
	}
}
