package githubtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/deploy"
)

// The App's permissions, enforced as GitHub enforces them on an installation
// token: each REST route the emulator serves needs one permission at a
// level (or any one of a few, where GitHub accepts several), taken from
// GitHub's REST reference ("Permissions required for GitHub Apps"). A token
// whose installation lacks it gets 403 "Resource not accessible by
// integration", with the X-Accepted-GitHub-Permissions header naming what
// would do. The installation's permissions are the App manifest's
// (deploy/github-app.yaml) unless SetPermissions says otherwise. A user
// token (token mode) is not checked: a person's access is another model.

// A Grant is one permission at a level, as GitHub writes it: pull_requests
// at write is "pull_requests=write".
type Grant struct{ Name, Access string }

func (g Grant) String() string { return g.Name + "=" + g.Access }

// levels orders access levels: a permission at write also reads.
var levels = map[string]int{"read": 1, "write": 2, "admin": 3}

// routeGrants is what an installation token needs for each route, as any one
// of the grants. A route with an empty list needs no permission (public
// data); userOnly routes refuse installation tokens whatever they hold.
var routeGrants = map[string][]Grant{
	"GET /repos/{owner}/{repo}":                                     {{"metadata", "read"}},
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission": {{"metadata", "read"}},
	"GET /users/{username}":                                         {},

	"GET /repos/{owner}/{repo}/commits/{sha}":                       {{"contents", "read"}},
	"GET /repos/{owner}/{repo}/commits":                             {{"contents", "read"}},
	"GET /repos/{owner}/{repo}/contents/{path...}":                  {{"contents", "read"}},
	"GET /repos/{owner}/{repo}/compare/{basehead}":                  {{"contents", "read"}},
	"GET /repos/{owner}/{repo}/git/ref/{ref...}":                    {{"contents", "read"}},
	"GET /repos/{owner}/{repo}/git/commits/{sha}":                   {{"contents", "read"}},
	"POST /repos/{owner}/{repo}/git/trees":                          {{"contents", "write"}},
	"POST /repos/{owner}/{repo}/git/commits":                        {{"contents", "write"}},
	"POST /repos/{owner}/{repo}/git/refs":                           {{"contents", "write"}},
	"PATCH /repos/{owner}/{repo}/git/refs/{ref...}":                 {{"contents", "write"}},
	"DELETE /repos/{owner}/{repo}/git/refs/{ref...}":                {{"contents", "write"}},
	"GET /{owner}/{repo}.git/git-upload-pack (git)":                 {{"contents", "read"}},
	"GET /repos/{owner}/{repo}/pulls":                               {{"pull_requests", "read"}},
	"POST /repos/{owner}/{repo}/pulls":                              {{"pull_requests", "write"}},
	"GET /repos/{owner}/{repo}/pulls/{number}":                      {{"pull_requests", "read"}},
	"PATCH /repos/{owner}/{repo}/pulls/{number}":                    {{"pull_requests", "write"}},
	"POST /repos/{owner}/{repo}/pulls/{number}/reviews":             {{"pull_requests", "write"}},
	"GET /repos/{owner}/{repo}/pulls/{number}/reviews":              {{"pull_requests", "read"}},
	"POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers": {{"pull_requests", "write"}},

	// An issue's routes serve pull requests too: on a pull request either
	// permission does, on an issue only issues (see needs).
	"POST /repos/{owner}/{repo}/issues/{number}/labels":         {{"pull_requests", "write"}, {"issues", "write"}},
	"POST /repos/{owner}/{repo}/issues/{number}/assignees":      {{"pull_requests", "write"}, {"issues", "write"}},
	"GET /repos/{owner}/{repo}/issues/{number}/comments":        {{"pull_requests", "read"}, {"issues", "read"}},
	"POST /repos/{owner}/{repo}/issues/{number}/comments":       {{"pull_requests", "write"}, {"issues", "write"}},
	"GET /repos/{owner}/{repo}/issues/{number}/events":          {{"pull_requests", "read"}, {"issues", "read"}},
	"GET /repos/{owner}/{repo}/issues/{number}":                 {{"pull_requests", "read"}, {"issues", "read"}},
	"PATCH /repos/{owner}/{repo}/issues/{number}":               {{"pull_requests", "write"}, {"issues", "write"}},
	"POST /repos/{owner}/{repo}/issues/comments/{id}/reactions": {{"pull_requests", "write"}, {"issues", "write"}},
	"GET /repos/{owner}/{repo}/issues/comments/{id}/reactions":  {{"pull_requests", "read"}, {"issues", "read"}},
	"GET /repos/{owner}/{repo}/issues":                          {{"issues", "read"}},
	"POST /repos/{owner}/{repo}/issues":                         {{"issues", "write"}},
	"POST /api/graphql":                                         {{"issues", "read"}}, // the one query driftfix sends reads an issue
	"POST /repos/{owner}/{repo}/check-runs":                     {{"checks", "write"}},
	"PATCH /repos/{owner}/{repo}/check-runs/{id}":               {{"checks", "write"}},
	"GET /repos/{owner}/{repo}/commits/{ref}/check-runs":        {{"checks", "read"}},
	"POST /repos/{owner}/{repo}/statuses/{sha}":                 {{"statuses", "write"}},
	"GET /user":                                  nil, // userOnly
	"GET /repos/{owner}/{repo}/installation":     {},  // the App's JWT, not a token
	"POST /app/installations/{id}/access_tokens": {},  // the App's JWT
	"GET /app": {}, // the App's JWT
}

// userOnly are the routes GitHub answers only for a person's token.
var userOnly = map[string]bool{"GET /user": true}

// A Use is a route an installation token called and the grant that let it
// through.
type Use struct {
	Route string
	Grant Grant
}

// permissions is the installation's permissions and what its tokens used.
type permissions struct {
	granted map[string]string // permission → level
	used    map[Use]bool
}

// ManifestPermissions returns the default_permissions of the App manifest
// driftfix ships (deploy/github-app.yaml).
func ManifestPermissions() (map[string]string, error) {
	var m struct {
		Permissions map[string]string `json:"default_permissions"`
	}
	if err := yaml.Unmarshal(deploy.GitHubAppManifest, &m); err != nil {
		return nil, fmt.Errorf("read the App manifest deploy/github-app.yaml: %w", err)
	}
	for name, level := range m.Permissions {
		if levels[level] == 0 {
			return nil, fmt.Errorf("read the App manifest deploy/github-app.yaml: permission %s has level %q, not read, write or admin", name, level)
		}
	}
	return m.Permissions, nil
}

// perm returns the installation's permissions, the manifest's until
// SetPermissions; s.mu is held.
func (s *Server) perm() *permissions {
	if s.perms == nil {
		granted, err := ManifestPermissions()
		if err != nil {
			panic(err) // the embedded manifest is part of the build
		}
		s.perms = &permissions{granted: granted, used: map[Use]bool{}}
	}
	return s.perms
}

// SetPermissions gives the App's installations these permissions (name →
// read, write or admin) instead of the manifest's, for tokens minted before
// and after, as GitHub applies a changed permission once it is accepted.
func (s *Server) SetPermissions(granted map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perm().granted = maps.Clone(granted)
}

// Permissions returns the installations' permissions.
func (s *Server) Permissions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.perm().granted)
}

// PermissionsUsed returns the routes installation tokens called, each with
// the grant that let it through, sorted.
func (s *Server) PermissionsUsed() []Use {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedUses(s.perm().used)
}

func sortedUses(m map[Use]bool) []Use {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b Use) int { return strings.Compare(a.Route+" "+a.Grant.String(), b.Route+" "+b.Grant.String()) })
	return out
}

// needs returns the grants a request needs, any one of them: on an issue's
// route, a number that is an issue (not a pull request) takes issues alone.
// ok is false for a route the table lacks. s.mu is held.
func (s *Server) needs(route string, p map[string]string, rp *repo) (gs []Grant, ok bool) {
	gs, ok = routeGrants[route]
	if !ok || rp == nil || !strings.Contains(route, "/issues/") {
		return gs, ok
	}
	isPull := false
	if n, err := strconv.Atoi(p["number"]); err == nil {
		isPull = slices.ContainsFunc(rp.prs, func(pr *PullRequest) bool { return pr.Number == n })
	} else if id, err := strconv.ParseInt(p["id"], 10, 64); err == nil {
		for n, cs := range rp.comments {
			if slices.ContainsFunc(cs, func(c Comment) bool { return c.ID == id }) {
				isPull = slices.ContainsFunc(rp.prs, func(pr *PullRequest) bool { return pr.Number == n })
			}
		}
	}
	if isPull {
		return gs, true
	}
	return slices.DeleteFunc(slices.Clone(gs), func(g Grant) bool { return g.Name != "issues" }), true
}

// permitted checks an installation token's request against the
// installation's permissions and answers 403 as GitHub does when they do not
// cover it; s.mu is held.
func (s *Server) permitted(w http.ResponseWriter, method, route string, p map[string]string, rp *repo) bool {
	key := method + " " + route
	gs, ok := s.needs(key, p, rp)
	if !ok {
		s.writeErr(w, http.StatusInternalServerError, "githubtest: route "+key+" has no permission in routeGrants (permissions.go)")
		return false
	}
	pm := s.perm()
	if !userOnly[key] && len(gs) == 0 {
		return true
	}
	for _, g := range gs {
		if levels[pm.granted[g.Name]] >= levels[g.Access] {
			pm.used[Use{key, g}] = true
			recordUse(Use{key, g})
			return true
		}
	}
	var accepted []string
	for _, g := range gs {
		accepted = append(accepted, g.String())
	}
	w.Header().Set("X-Accepted-GitHub-Permissions", strings.Join(accepted, "; "))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if key == "POST /api/graphql" { // GraphQL answers 200 with the error in errors
		w.WriteHeader(http.StatusOK)
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"repository": map[string]any{"issue": nil}},
			"errors": []any{map[string]any{"type": "FORBIDDEN", "path": []string{"repository", "issue"}, "message": "Resource not accessible by integration"}}})
		return false
	}
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(map[string]any{"message": "Resource not accessible by integration",
		"documentation_url": "https://docs.github.com/rest", "status": "403"})
	return false
}

// A PermissionRecorder collects what the installation tokens of every
// emulator in the process needed while it records: which permission, at
// which level, let each route through.
type PermissionRecorder struct {
	mu   sync.Mutex
	used map[Use]bool
}

var (
	recordersMu sync.Mutex
	recorders   []*PermissionRecorder
)

// RecordPermissions starts a recorder; Stop ends it.
func RecordPermissions() *PermissionRecorder {
	r := &PermissionRecorder{used: map[Use]bool{}}
	recordersMu.Lock()
	recorders = append(recorders, r)
	recordersMu.Unlock()
	return r
}

// Stop ends the recording.
func (r *PermissionRecorder) Stop() {
	recordersMu.Lock()
	defer recordersMu.Unlock()
	recorders = slices.DeleteFunc(recorders, func(x *PermissionRecorder) bool { return x == r })
}

// Used returns the routes called, each with the grant that let it through,
// sorted.
func (r *PermissionRecorder) Used() []Use {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedUses(r.used)
}

// Needed returns each permission at the highest level a recorded route
// needed, and the routes that needed it at that level, sorted.
func (r *PermissionRecorder) Needed() (map[string]string, map[string][]string) {
	level, routes := map[string]string{}, map[string][]string{}
	for _, u := range r.Used() {
		route, g := u.Route, u.Grant
		switch {
		case levels[g.Access] > levels[level[g.Name]]:
			level[g.Name], routes[g.Name] = g.Access, []string{route}
		case g.Access == level[g.Name]:
			routes[g.Name] = append(routes[g.Name], route)
		}
	}
	for _, rs := range routes {
		sort.Strings(rs)
	}
	return level, routes
}

func recordUse(u Use) {
	recordersMu.Lock()
	defer recordersMu.Unlock()
	for _, r := range recorders {
		r.mu.Lock()
		r.used[u] = true
		r.mu.Unlock()
	}
}

// gitReadRoute is the key of Git's reads over HTTP in routeGrants.
const gitReadRoute = "GET /{owner}/{repo}.git/git-upload-pack (git)"

// gitPermitted checks an installation token's Git read of a private
// repository: it needs contents at read. s.mu is held.
func (s *Server) gitPermitted(w http.ResponseWriter) bool {
	g := routeGrants[gitReadRoute][0]
	if levels[s.perm().granted[g.Name]] >= levels[g.Access] {
		s.perm().used[Use{gitReadRoute, g}] = true
		recordUse(Use{gitReadRoute, g})
		return true
	}
	http.Error(w, "remote: Resource not accessible by integration (the installation lacks "+g.String()+")", http.StatusForbidden)
	return false
}
