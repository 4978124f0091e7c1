package deploy_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"github.com/expr-lang/expr"
	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/events"
)

// sampleApp is an Application as Argo CD hands it to notifications and deep
// links: the object as a map. finished is when its last sync finished.
func sampleApp(t *testing.T, repoURL, syncStatus, phase string, finished time.Time) map[string]any {
	t.Helper()
	op := ""
	if phase != "" {
		op = "\n  operationState: {phase: " + phase + ", finishedAt: '" + finished.UTC().Format(time.RFC3339) + "'}"
	}
	source := ""
	if repoURL != "" {
		source = "\n  source: {repoURL: '" + repoURL + "', path: apps/web, targetRevision: main}"
	}
	var app map[string]any
	doc := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default" + source +
		"\nstatus:\n  sync: {status: " + syncStatus + ", revision: 0123456789abcdef0123456789abcdef01234567}" + op + "\n"
	if err := yaml.Unmarshal([]byte(doc), &app); err != nil {
		t.Fatal(err)
	}
	return app
}

func configMapData(t *testing.T, file string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata["namespace"] != "argocd" {
		t.Fatalf("%s is not a ConfigMap in argocd", file)
	}
	return cm.Data
}

// repoURLToHTTPS stands in for Argo CD's repo.RepoURLToHTTPS on the URL
// forms the samples use (https and scp-like git@host:path).
func repoURLToHTTPS(u string) string {
	if rest, ok := strings.CutPrefix(u, "git@"); ok {
		host, path, _ := strings.Cut(rest, ":")
		return "https://" + host + "/" + path
	}
	return u
}

// TestArgoCDNotifications: the trigger's condition and oncePer compile as
// Argo CD's expressions (expr, with its time helpers) and fire for a stuck
// application only; the template's fields are Go templates with sprig, as
// notifications-engine renders them, and link the fix pull requests, the
// Drift Dashboard and the application.
func TestArgoCDNotifications(t *testing.T) {
	data := configMapData(t, "argocd/argocd-notifications-cm-patch.yaml")
	var triggers []struct {
		Description string   `json:"description"`
		Send        []string `json:"send"`
		When        string   `json:"when"`
		OncePer     string   `json:"oncePer"`
	}
	if err := yaml.UnmarshalStrict([]byte(data["trigger.on-driftfix-stuck"]), &triggers); err != nil || len(triggers) != 1 {
		t.Fatalf("trigger.on-driftfix-stuck: %v (%d conditions)", err, len(triggers))
	}
	tr := triggers[0]
	now := time.Now()
	env := func(app map[string]any) map[string]any {
		return map[string]any{"app": app, "time": map[string]any{
			"Now":   func() time.Time { return now },
			"Parse": func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v },
		}}
	}
	when, err := expr.Compile(tr.When, expr.AsBool())
	if err != nil {
		t.Fatalf("when: %v", err)
	}
	for _, c := range []struct {
		name string
		app  map[string]any
		want bool
	}{
		{"stuck 20m after a successful sync", sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "Succeeded", now.Add(-20*time.Minute)), true},
		{"OutOfSync 2m after a sync (a rollout)", sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "Succeeded", now.Add(-2*time.Minute)), false},
		{"Synced", sampleApp(t, "https://github.com/acme/apps.git", "Synced", "Succeeded", now.Add(-time.Hour)), false},
		{"the sync failed", sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "Failed", now.Add(-time.Hour)), false},
		{"never synced", sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "", now), false},
	} {
		got, err := expr.Run(when, env(c.app))
		if err != nil || got != c.want {
			t.Errorf("%s: when = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := expr.Compile(tr.OncePer); err != nil {
		t.Errorf("oncePer: %v", err)
	}

	for _, s := range tr.Send {
		if data["template."+s] == "" {
			t.Fatalf("the trigger sends template %s, which the ConfigMap lacks", s)
		}
	}
	var tmpl struct {
		Message string `json:"message"`
		Email   struct {
			Subject string `json:"subject"`
		} `json:"email"`
	}
	if err := yaml.UnmarshalStrict([]byte(data["template.driftfix-stuck"]), &tmpl); err != nil {
		t.Fatalf("template.driftfix-stuck: %v", err)
	}
	render := func(text string, app map[string]any) string {
		t.Helper()
		tp, err := template.New("").Funcs(sprig.TxtFuncMap()).Parse(text)
		if err != nil {
			t.Fatalf("template %q: %v", text, err)
		}
		var b bytes.Buffer
		vars := map[string]any{"app": app, "context": map[string]any{"argocdUrl": "https://argocd.example.com"},
			"repo": map[string]any{"RepoURLToHTTPS": repoURLToHTTPS}}
		if err := tp.Execute(&b, vars); err != nil {
			t.Fatalf("template %q: %v", text, err)
		}
		return b.String()
	}
	for _, repoURL := range []string{"https://github.com/acme/apps.git", "git@github.com:acme/apps.git"} {
		msg := render(tmpl.Message, sampleApp(t, repoURL, "OutOfSync", "Succeeded", now))
		for _, want := range []string{
			"Application web is OutOfSync again after a successful sync of 0123456.",
			"Fix pull requests: https://github.com/acme/apps/pulls?q=is%3Apr+is%3Aopen+head%3Adriftfix%2Fweb%2F\n",
			"Drift Dashboard: https://github.com/acme/apps/issues?q=is%3Aissue+is%3Aopen+in%3Atitle+%22Drift+Dashboard%22\n",
			"Argo CD: https://argocd.example.com/applications/argocd/web",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the message lacks %q:\n%s", repoURL, want, msg)
			}
		}
	}
	// Several sources: no one repository to link, the application still is.
	if msg := render(tmpl.Message, sampleApp(t, "", "OutOfSync", "Succeeded", now)); strings.Contains(msg, "pulls?") || !strings.Contains(msg, "Argo CD: https://argocd.example.com/applications/argocd/web") {
		t.Errorf("without spec.source:\n%s", msg)
	}
	if s := render(tmpl.Email.Subject, sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "Succeeded", now)); !strings.HasPrefix(s, "web is stuck OutOfSync") {
		t.Errorf("subject %q", s)
	}
}

// TestArgoCDDeepLinks: each application.links entry has what Argo CD's
// DeepLink takes; its condition is an expression and its URL a Go template
// with sprig's generic functions, evaluated on the object Argo CD builds
// (app and application), as argocd-server does.
func TestArgoCDDeepLinks(t *testing.T) {
	data := configMapData(t, "argocd/argocd-cm-links-patch.yaml")
	var links []struct {
		URL         string `json:"url"`
		Title       string `json:"title"`
		Description string `json:"description"`
		IconClass   string `json:"icon.class"`
		If          string `json:"if"`
	}
	if err := yaml.UnmarshalStrict([]byte(data["application.links"]), &links); err != nil || len(links) != 2 {
		t.Fatalf("application.links: %v (%d links)", err, len(links))
	}
	funcs := sprig.GenericFuncMap()
	for _, f := range []string{"env", "expandenv", "getHostByName"} { // argocd-server removes these
		delete(funcs, f)
	}
	want := map[string]string{
		"driftfix: fix pull requests": "https://github.com/acme/apps/pulls?q=is%3Apr+is%3Aopen+head%3Adriftfix%2Fweb%2F",
		"driftfix: Drift Dashboard":   "https://github.com/acme/apps/issues?q=is%3Aissue+is%3Aopen+in%3Atitle+%22Drift+Dashboard%22",
	}
	for _, l := range links {
		if want[l.Title] == "" || l.URL == "" || l.If == "" {
			t.Fatalf("link %+v", l)
		}
		tp, err := template.New("deep-link").Funcs(funcs).Parse(l.URL)
		if err != nil {
			t.Fatalf("%s: url: %v", l.Title, err)
		}
		for _, repoURL := range []string{"https://github.com/acme/apps.git", "git@github.com:acme/apps.git", "https://github.com/acme/apps", ""} {
			app := sampleApp(t, repoURL, "OutOfSync", "Succeeded", time.Now())
			obj := map[string]any{"app": app, "application": app}
			ok, err := expr.Eval(l.If, obj)
			if err != nil {
				t.Fatalf("%s: if: %v", l.Title, err)
			}
			if ok != (repoURL != "") {
				t.Errorf("%s with repoURL %q: shown %v", l.Title, repoURL, ok)
			}
			if repoURL == "" {
				continue
			}
			var b bytes.Buffer
			if err := tp.Execute(&b, obj); err != nil {
				t.Fatalf("%s: url: %v", l.Title, err)
			}
			if b.String() != want[l.Title] {
				t.Errorf("%s with repoURL %q: %s, want %s", l.Title, repoURL, b.String(), want[l.Title])
			}
		}
	}
}

// TestArgoCDNotificationsWebhook: the webhook service sends the shared
// secret from argocd-notifications-secret in driftfix's header; both
// triggers compile as Argo CD's expressions and fire as named; the body
// the template renders (Go templates with sprig, as notifications-engine
// renders them) is what driftfix's receiver reads, and asks it to re-check
// an OutOfSync application.
func TestArgoCDNotificationsWebhook(t *testing.T) {
	data := configMapData(t, "argocd/argocd-notifications-webhook-patch.yaml")
	var svc struct {
		URL     string `json:"url"`
		Headers []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
	}
	if err := yaml.UnmarshalStrict([]byte(data["service.webhook.driftfix"]), &svc); err != nil {
		t.Fatalf("service.webhook.driftfix: %v", err)
	}
	secretHeader := false
	for _, h := range svc.Headers {
		secretHeader = secretHeader || h.Name == events.NotifyHeader && h.Value == "$driftfix-notify-secret"
	}
	if !strings.HasSuffix(svc.URL, "/argocd") || !secretHeader {
		t.Fatalf("the service posts to %q with headers %+v: want .../argocd and %s from the secret", svc.URL, svc.Headers, events.NotifyHeader)
	}
	now := time.Now()
	fires := map[string][]bool{
		"trigger.on-driftfix-sync-succeeded": {true, true, false},
		"trigger.on-driftfix-out-of-sync":    {true, false, true},
	}
	apps := []map[string]any{
		sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "Succeeded", now),
		sampleApp(t, "https://github.com/acme/apps.git", "Synced", "Succeeded", now),
		sampleApp(t, "https://github.com/acme/apps.git", "OutOfSync", "", now),
	}
	for key, want := range fires {
		var triggers []struct {
			Description string   `json:"description"`
			Send        []string `json:"send"`
			When        string   `json:"when"`
		}
		if err := yaml.UnmarshalStrict([]byte(data[key]), &triggers); err != nil || len(triggers) != 1 {
			t.Fatalf("%s: %v", key, err)
		}
		when, err := expr.Compile(triggers[0].When, expr.AsBool())
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		for i, app := range apps {
			if got, err := expr.Run(when, map[string]any{"app": app}); err != nil || got != want[i] {
				t.Errorf("%s on sample %d: %v, %v; want %v", key, i, got, err, want[i])
			}
		}
		if len(triggers[0].Send) != 1 || data["template."+triggers[0].Send[0]] == "" {
			t.Fatalf("%s sends %v, which the ConfigMap lacks", key, triggers[0].Send)
		}
	}
	var tmpl struct {
		Webhook map[string]struct {
			Method string `json:"method"`
			Body   string `json:"body"`
		} `json:"webhook"`
	}
	if err := yaml.UnmarshalStrict([]byte(data["template.driftfix-app-changed"]), &tmpl); err != nil {
		t.Fatal(err)
	}
	hook := tmpl.Webhook["driftfix"]
	body, err := template.New("body").Funcs(sprig.TxtFuncMap()).Parse(hook.Body)
	if err != nil || hook.Method != "POST" {
		t.Fatalf("the template's body: %v (method %q)", err, hook.Method)
	}
	rec := &queued{}
	q := &events.Queue{Handler: rec}
	n := &events.Notifications{Secret: func() string { return "s" }, Instances: func() []string { return []string{"main"} }, Queue: q}
	for i, app := range apps {
		var out bytes.Buffer
		if err := body.Execute(&out, map[string]any{"app": app}); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/argocd", &out)
		req.Header.Set(events.NotifyHeader, "s")
		w := httptest.NewRecorder()
		n.ServeHTTP(w, req)
		if w.Code != http.StatusAccepted {
			t.Fatalf("sample %d: the receiver answered %d %q to %s", i, w.Code, w.Body, out.String())
		}
	}
	// The queue runs after the notifications came: both OutOfSync ones are
	// one unit.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !q.Idle(); time.Sleep(5 * time.Millisecond) {
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.work) != 1 || rec.work[0].App != "main/argocd/web" {
		t.Errorf("work %+v, want the OutOfSync samples' application once (coalesced)", rec.work)
	}
}

type queued struct {
	mu   sync.Mutex
	work []events.Work
}

func (q *queued) Do(_ context.Context, w events.Work) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.work = append(q.work, w)
	return nil
}
