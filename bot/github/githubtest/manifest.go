package githubtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The App manifest flow (GitHub's "Registering a GitHub App from a
// manifest"): a browser posts a form with a manifest field to
// /settings/apps/new (or /organizations/ORG/settings/apps/new) with a state
// in the query; once the person confirms, GitHub sends the browser to the
// manifest's redirect_url with a one-time code and that state; the code is
// exchanged, unauthenticated and within an hour, at
// POST /app-manifests/{code}/conversions for the App's id, private key and
// secrets. The emulator skips the confirmation page and hands out its own
// App (AppID, PrivateKeyPEM), so credentials from the flow work against it.

// ManifestApp is an App registered through the manifest flow.
type ManifestApp struct {
	Manifest map[string]any // as the form posted it
	Org      string         // the organization, "" for the person's own account
	State    string         // the state the form carried
}

type manifestCode struct {
	app     ManifestApp
	expires time.Time
}

// Manifests returns the Apps registered through the manifest flow, in order.
func (s *Server) Manifests() []ManifestApp {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ManifestApp(nil), s.manifests...)
}

// serveManifest answers the manifest flow's two requests; false for any other.
func (s *Server) serveManifest(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && (p == "/settings/apps/new" || strings.HasPrefix(p, "/organizations/") && strings.HasSuffix(p, "/settings/apps/new")):
		s.newAppFromManifest(w, r)
		return true
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/api/v3/app-manifests/") && strings.HasSuffix(p, "/conversions"):
		s.convertManifestCode(w, strings.TrimSuffix(strings.TrimPrefix(p, "/api/v3/app-manifests/"), "/conversions"))
		return true
	}
	return false
}

func (s *Server) newAppFromManifest(w http.ResponseWriter, r *http.Request) {
	org := ""
	if strings.HasPrefix(r.URL.Path, "/organizations/") {
		org = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/organizations/"), "/settings/apps/new")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.PostFormValue("manifest")), &m); err != nil {
		http.Error(w, "Invalid GitHub App configuration: the manifest is not JSON", http.StatusUnprocessableEntity)
		return
	}
	// What GitHub requires of a manifest: a name, a homepage, and a hook URL
	// (hook_attributes.url, even when the hook is inactive).
	hook, _ := m["hook_attributes"].(map[string]any)
	redirect, _ := m["redirect_url"].(string)
	u, err := url.Parse(redirect)
	if m["name"] == nil || m["url"] == nil || hook == nil || hook["url"] == nil || err != nil || u.Scheme == "" || u.Host == "" {
		http.Error(w, "Invalid GitHub App configuration: name, url, hook_attributes.url and redirect_url are required", http.StatusUnprocessableEntity)
		return
	}
	code := randHex(10)
	app := ManifestApp{Manifest: m, Org: org, State: r.URL.Query().Get("state")}
	s.mu.Lock()
	if s.manifestCodes == nil {
		s.manifestCodes = map[string]manifestCode{}
	}
	s.manifestCodes[code] = manifestCode{app: app, expires: time.Now().Add(time.Hour)}
	s.manifests = append(s.manifests, app)
	s.mu.Unlock()
	q := u.Query()
	q.Set("code", code)
	if app.State != "" {
		q.Set("state", app.State)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) convertManifestCode(w http.ResponseWriter, code string) {
	s.mu.Lock()
	s.Calls["POST /app-manifests/{code}/conversions"]++
	c, ok := s.manifestCodes[code]
	delete(s.manifestCodes, code) // a code is good once
	s.mu.Unlock()
	if !ok || time.Now().After(c.expires) {
		s.writeErr(w, http.StatusNotFound, "Not Found")
		return
	}
	m := c.app.Manifest
	owner := map[string]any{"login": c.app.Org, "id": 1, "type": "Organization"}
	if c.app.Org == "" {
		owner = map[string]any{"login": s.UserLogin, "id": 2, "type": "User"}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	perms, _ := m["default_permissions"].(map[string]any)
	events, _ := m["default_events"].([]any)
	if events == nil {
		events = []any{}
	}
	body := map[string]any{
		"id": s.AppID, "slug": s.AppSlug, "node_id": "A_" + randHex(8), "owner": owner,
		"name": m["name"], "description": m["description"], "external_url": m["url"],
		"html_url":   strings.TrimSuffix(s.Server.URL, "/") + "/apps/" + s.AppSlug,
		"created_at": now, "updated_at": now, "permissions": perms, "events": events,
		"client_id": "Iv1." + randHex(8), "client_secret": randHex(20), "webhook_secret": randHex(20),
		"pem": string(s.PrivateKeyPEM),
	}
	if hook, _ := m["hook_attributes"].(map[string]any); hook["active"] != false {
		// An active hook: events go to its URL, signed with the secret handed out (webhooks.go).
		url, _ := hook["url"].(string)
		var subscribed []string
		for _, e := range events {
			if e, ok := e.(string); ok {
				subscribed = append(subscribed, e)
			}
		}
		s.SetWebhook(url, body["webhook_secret"].(string), subscribed...)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(body)
}
