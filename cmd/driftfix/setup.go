package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/deploy"
)

// setupFiles are what `setup github-app` writes, each mode 0600: the names the
// chart's Secret takes (github-app.pem) and the values the install needs.
var setupFiles = []string{"github-app-id", "github-app.pem", "github-webhook-secret"}

func (c *cli) setupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup github-app",
		Short: "Create driftfix's GitHub App from its manifest",
		Args:  cobra.ArbitraryArgs,
		RunE: c.runE(func(cmd *cobra.Command, args []string) (int, error) {
			if len(args) > 0 {
				return exitUsage, fmt.Errorf("unknown command %q: want %s github-app", args[0], cmd.CommandPath())
			}
			return exitUsage, fmt.Errorf("name the command: %s github-app [--org ORG] [--dir DIR] [--listen 127.0.0.1:8765]", cmd.CommandPath())
		}),
	}
	app := &cobra.Command{
		Use:     "github-app",
		Short:   "Create the GitHub App from its manifest; writes its id, key and webhook secret (0600)",
		Example: "  driftfix setup github-app --org acme",
		Args:    noArgs,
	}
	fs := app.Flags()
	org := fs.String("org", "", "create the App in this organization (default: your own account)")
	name := fs.String("name", "", "the App's name (default: the manifest's, driftfix); GitHub names must be unique")
	web := fs.String("github-url", "https://github.com", "GitHub's web address (GitHub Enterprise Server: https://HOST)")
	api := fs.String("api-url", "", "GitHub's REST API (default: https://api.github.com, or GITHUB-URL/api/v3)")
	listen := fs.String("listen", "127.0.0.1:8765", "loopback address to serve the form and receive the redirect on (port 0: any free port)")
	dir := fs.String("dir", ".", "directory to write "+strings.Join(setupFiles, ", ")+" in")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the App to be created")
	webhook := fs.String("webhook-url", "", "driftfix's webhook receiver as GitHub reaches it (https://HOST/webhook): the App is subscribed to its events there, signed with the webhook secret written; without it the App is poll-only")
	_ = app.MarkFlagDirname("dir")
	app.RunE = c.runE(func(*cobra.Command, []string) (int, error) {
		return setupGitHubApp(c.ctx, c.stdout, c.stderr, setupOptions{org: *org, name: *name, web: *web, api: *api, listen: *listen, dir: *dir, timeout: *timeout, webhook: *webhook})
	})
	cmd.AddCommand(app)
	return cmd
}

// setupOptions are the flags of setup github-app.
type setupOptions struct {
	org, name, web, api, listen, dir string
	webhook                          string // the receiver's URL, "" for a poll-only App
	timeout                          time.Duration
}

func setupGitHubApp(ctx context.Context, stdout, stderr io.Writer, o setupOptions) (int, error) {
	org, name, web, api, listen, dir, timeout := &o.org, &o.name, &o.web, &o.api, &o.listen, &o.dir, &o.timeout
	host, _, err := net.SplitHostPort(*listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return exitUsage, fmt.Errorf("--listen %q: must be a loopback address such as 127.0.0.1:8765 (the page hands out a one-time code)", *listen)
	}
	webURL, err := url.Parse(strings.TrimSuffix(*web, "/"))
	if err != nil || (webURL.Scheme != "https" && webURL.Scheme != "http") || webURL.Host == "" {
		return exitUsage, fmt.Errorf("--github-url %q: must be an http(s) URL", *web)
	}
	apiURL := strings.TrimSuffix(*api, "/")
	if apiURL == "" {
		apiURL = webURL.String() + "/api/v3"
		if webURL.Host == "github.com" {
			apiURL = "https://api.github.com"
		}
	}
	if err := checkWebhookURL(o.webhook); err != nil {
		return exitUsage, err
	}
	for _, f := range setupFiles {
		if _, err := os.Stat(filepath.Join(*dir, f)); err == nil {
			return exitUsage, fmt.Errorf("%s exists: move it away or use --dir (an App's key is never overwritten)", filepath.Join(*dir, f))
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return exitFailed, fmt.Errorf("listen on %s: %w", *listen, err)
	}
	base := "http://" + ln.Addr().String()
	manifest, err := appManifest(deploy.GitHubAppManifest, base+"/callback", *name, o.webhook)
	if err != nil {
		ln.Close()
		return exitFailed, err
	}
	state := randomHex(16)
	action := webURL.String() + "/settings/apps/new?state=" + url.QueryEscape(state)
	if *org != "" {
		action = webURL.String() + "/organizations/" + url.PathEscape(*org) + "/settings/apps/new?state=" + url.QueryEscape(state)
	}

	done := make(chan setupResult, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		setupPage.Execute(w, map[string]string{"Action": action, "Manifest": manifest, "Org": *org, "Webhook": o.webhook})
	})
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 || q.Get("code") == "" {
			http.Error(w, "this is not the answer to the form driftfix served: start again from "+base+"/", http.StatusBadRequest)
			return
		}
		res := convertManifest(r.Context(), apiURL, q.Get("code"), *dir)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if res.err != nil {
			w.WriteHeader(http.StatusBadGateway)
		}
		donePage.Execute(w, res)
		select {
		case done <- res:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		// Let the browser have the done page before the listener goes.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()

	fmt.Fprintf(stdout, "Open %s/ in a browser and create the App on GitHub; waiting up to %s.\n", base, *timeout)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var res setupResult
	select {
	case <-ctx.Done():
		return exitFailed, fmt.Errorf("no App was created within %s: %w", *timeout, ctx.Err())
	case res = <-done:
	}
	if res.err != nil {
		return exitFailed, res.err
	}
	fmt.Fprintf(stdout, "Created the GitHub App %s (App ID %d).\nWrote %s in %s (mode 0600).\nInstall it on the repositories your Applications read: %s/installations/new\n",
		res.Slug, res.ID, strings.Join(setupFiles, ", "), *dir, res.HTMLURL)
	if o.webhook != "" {
		fmt.Fprintf(stdout, "GitHub sends the App's events to %s, signed with github-webhook-secret: run driftfix with --webhook-secret-file pointing at it (the chart: webhook.enabled=true).\n", o.webhook)
	} else {
		fmt.Fprintln(stdout, "The App has no webhook: driftfix acts on its schedule only. To answer events within seconds, create it with --webhook-url (docs/install.md).")
	}
	return exitClean, nil
}

// appManifest is the manifest file as the JSON GitHub's form takes, with
// this run's redirect URL and, when given, another name. With a webhook URL
// the hook is on and points there; without one it is off and the App
// subscribes to no event.
func appManifest(file []byte, redirect, name, webhook string) (string, error) {
	var m map[string]any
	if err := yaml.Unmarshal(file, &m); err != nil {
		return "", fmt.Errorf("read the App manifest: %w", err)
	}
	m["redirect_url"] = redirect
	if name != "" {
		m["name"] = name
	}
	if webhook != "" {
		m["hook_attributes"] = map[string]any{"url": webhook, "active": true}
	} else {
		m["default_events"] = []string{}
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// checkWebhookURL accepts the receiver's address: https, or http on a
// loopback host (a test, a tunnel's local end); "" is a poll-only App.
func checkWebhookURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("--webhook-url %q: must be an https URL such as https://driftfix.example.com/webhook", s)
	}
	if ip := net.ParseIP(u.Hostname()); u.Scheme == "http" && (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
		return fmt.Errorf("--webhook-url %q: must be https (GitHub sends the events there; http only on a loopback address)", s)
	}
	return nil
}

type setupResult struct {
	ID      int64
	Slug    string
	HTMLURL string
	err     error
}

// Err is the failure the done page shows, "" for none.
func (r setupResult) Err() string {
	if r.err == nil {
		return ""
	}
	return r.err.Error()
}

// convertManifest exchanges the one-time code for the App's credentials and
// writes them. The secrets go to the files only: never to the output.
func convertManifest(ctx context.Context, apiURL, code, dir string) setupResult {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/app-manifests/"+url.PathEscape(code)+"/conversions", nil)
	if err != nil {
		return setupResult{err: err}
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "driftfix/"+version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return setupResult{err: fmt.Errorf("exchange the code with GitHub: %w", err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return setupResult{err: fmt.Errorf("exchange the code with GitHub: %w", err)}
	}
	if resp.StatusCode != http.StatusCreated {
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal(raw, &e)
		return setupResult{err: fmt.Errorf("exchange the code with GitHub: %s %q (a code is good once and for an hour: start again)", resp.Status, e.Message)}
	}
	var app struct {
		ID            int64  `json:"id"`
		Slug          string `json:"slug"`
		HTMLURL       string `json:"html_url"`
		PEM           string `json:"pem"`
		WebhookSecret string `json:"webhook_secret"`
	}
	if err := json.Unmarshal(raw, &app); err != nil {
		return setupResult{err: fmt.Errorf("read GitHub's answer: %w", err)}
	}
	if app.ID <= 0 {
		return setupResult{err: errors.New("GitHub's answer has no App id")}
	}
	if err := checkAppKey([]byte(app.PEM)); err != nil {
		return setupResult{err: err}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return setupResult{err: err}
	}
	for _, f := range []struct{ name, content string }{
		{"github-app-id", strconv.FormatInt(app.ID, 10) + "\n"},
		{"github-app.pem", app.PEM},
		{"github-webhook-secret", app.WebhookSecret},
	} {
		if err := writeSecretFile(filepath.Join(dir, f.name), []byte(f.content)); err != nil {
			return setupResult{err: err}
		}
	}
	return setupResult{ID: app.ID, Slug: app.Slug, HTMLURL: app.HTMLURL}
}

// checkAppKey makes sure the private key is one driftfix can sign with.
func checkAppKey(b []byte) error {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return errors.New("GitHub's answer holds no PEM private key")
	}
	if _, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err == nil {
		return nil
	}
	if _, err := x509.ParsePKCS8PrivateKey(blk.Bytes); err != nil {
		return fmt.Errorf("GitHub's private key does not parse: %w", err)
	}
	return nil
}

// writeSecretFile creates a file readable by its owner only, never over an
// existing one.
func writeSecretFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var setupPage = template.Must(template.New("setup").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>driftfix: create the GitHub App</title></head>
<body>
<h1>Create the driftfix GitHub App{{if .Org}} in {{.Org}}{{end}}</h1>
<p>GitHub shows the App's name and permissions (contents, pull requests, checks and issues: write; metadata: read){{if .Webhook}} and its webhook, {{.Webhook}}{{else}}; no webhook{{end}} before it creates it.</p>
<form id="manifest" method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit">Create the App on GitHub</button>
</form>
</body></html>
`))

var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>driftfix: GitHub App</title></head>
<body>
{{if .Err}}<h1>The App's credentials could not be fetched</h1><p>{{.Err}}</p>
{{else}}<h1>Created the GitHub App {{.Slug}} (App ID {{.ID}})</h1>
<p>Its credentials are written; you can close this page. Next, <a href="{{.HTMLURL}}/installations/new">install the App</a> on the repositories your Applications read.</p>
{{end}}
</body></html>
`))
