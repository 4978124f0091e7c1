package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Issue is an issue as the emulator keeps it. LastEditedBy is the account
// behind the body's last edit, as GitHub's GraphQL Issue.lastEditedBy
// answers ("" until the body is edited after it was opened).
type Issue struct {
	Number       int
	Title, Body  string
	State        string // open or closed
	StateReason  string
	Author       string
	LastEditedBy string
	Created      time.Time
}

// Issues returns copies of a repository's issues (not its pull requests).
func (s *Server) Issues(owner, name string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Issue
	if r := s.repos[owner+"/"+name]; r != nil {
		for _, i := range r.issues {
			out = append(out, *i)
		}
	}
	return out
}

// AddIssue opens an issue as a person (i.Author) would; it returns its number.
func (s *Server) AddIssue(owner, name string, i Issue) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return 0, fmt.Errorf("no repository %s/%s", owner, name)
	}
	i.Number, i.State, i.Created, i.LastEditedBy = s.nextNumber(r), "open", time.Now(), ""
	r.issues = append(r.issues, &i)
	return i.Number, nil
}

// EditIssueAs replaces an issue's body as login, as a person editing it
// (or ticking one of its task-list boxes) in the web UI does.
func (s *Server) EditIssueAs(owner, name string, number int, login, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.issue(owner, name, number)
	if i == nil {
		return fmt.Errorf("no issue %s/%s#%d", owner, name, number)
	}
	i.Body, i.LastEditedBy = body, login
	s.hookIssueEdited(s.repos[owner+"/"+name], i, login) // webhooks.go
	return nil
}

// TickAs ticks, as login, the unticked task-list box on the line of the
// issue's body that contains text.
func (s *Server) TickAs(owner, name string, number int, login, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.issue(owner, name, number)
	if i == nil {
		return fmt.Errorf("no issue %s/%s#%d", owner, name, number)
	}
	lines := strings.Split(i.Body, "\n")
	for k, l := range lines {
		if strings.Contains(l, text) && strings.Contains(l, "[ ]") {
			lines[k] = strings.Replace(l, "[ ]", "[x]", 1)
			i.Body, i.LastEditedBy = strings.Join(lines, "\n"), login
			s.hookIssueEdited(s.repos[owner+"/"+name], i, login) // webhooks.go
			return nil
		}
	}
	return fmt.Errorf("issue %s/%s#%d has no unticked box on a line with %q", owner, name, number, text)
}

func (s *Server) issue(owner, name string, number int) *Issue {
	if r := s.repos[owner+"/"+name]; r != nil {
		for _, i := range r.issues {
			if i.Number == number {
				return i
			}
		}
	}
	return nil
}

func (s *Server) issueJSON(rp *repo, i *Issue) map[string]any {
	return map[string]any{"number": i.Number, "title": i.Title, "body": i.Body, "state": i.State, "user": map[string]any{"login": i.Author},
		"html_url": s.Server.URL + "/" + rp.owner + "/" + rp.name + "/issues/" + strconv.Itoa(i.Number), "created_at": i.Created.UTC().Format(time.RFC3339)}
}

// prAsIssue is a pull request as GitHub's issue endpoints show it.
func (s *Server) prAsIssue(rp *repo, p *PullRequest) map[string]any {
	url := s.Server.URL + "/" + rp.owner + "/" + rp.name + "/pull/" + strconv.Itoa(p.Number)
	return map[string]any{"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State, "user": map[string]any{"login": p.Author},
		"html_url": url, "created_at": p.Created.UTC().Format(time.RFC3339), "pull_request": map[string]any{"html_url": url}}
}

// handleIssues serves the issue routes and GraphQL's Issue.lastEditedBy.
func (s *Server) handleIssues(route string, r *http.Request, rp *repo, num int) (int, any) {
	decode := func(v any) bool { return json.NewDecoder(r.Body).Decode(v) == nil }
	switch r.Method + " " + route {
	case "GET /repos/{owner}/{repo}/issues":
		q := r.URL.Query()
		state, creator := q.Get("state"), q.Get("creator")
		if state == "" {
			state = "open"
		}
		type item struct {
			n    int
			json map[string]any
		}
		var all []item
		keep := func(st, author string) bool {
			return (state == "all" || st == state) && (creator == "" || strings.EqualFold(author, creator))
		}
		for _, i := range rp.issues {
			if keep(i.State, i.Author) {
				all = append(all, item{i.Number, s.issueJSON(rp, i)})
			}
		}
		for _, p := range rp.prs {
			if keep(p.State, p.Author) {
				all = append(all, item{p.Number, s.prAsIssue(rp, p)})
			}
		}
		asc := q.Get("direction") == "asc"
		sort.Slice(all, func(a, b int) bool { return (all[a].n < all[b].n) == asc })
		out := make([]any, len(all))
		for k, it := range all {
			out[k] = it.json
		}
		return http.StatusOK, s.page(r, out)
	case "POST /repos/{owner}/{repo}/issues":
		var body struct{ Title, Body string }
		if !decode(&body) || body.Title == "" {
			return http.StatusUnprocessableEntity, "title is required"
		}
		if utf8.RuneCountInString(body.Body) > maxBody {
			return http.StatusUnprocessableEntity, tooLong("Issue", "https://docs.github.com/rest/issues/issues#create-an-issue")
		}
		i := &Issue{Number: s.nextNumber(rp), Title: body.Title, Body: body.Body, State: "open", Author: s.caller, Created: time.Now()}
		rp.issues = append(rp.issues, i)
		return http.StatusCreated, s.issueJSON(rp, i)
	case "GET /repos/{owner}/{repo}/issues/{number}":
		if i := s.issue(rp.owner, rp.name, num); i != nil {
			return http.StatusOK, s.issueJSON(rp, i)
		}
		if _, p := s.pr(rp.owner, rp.name, num); p != nil {
			return http.StatusOK, s.prAsIssue(rp, p)
		}
		return http.StatusNotFound, "Not Found"
	case "PATCH /repos/{owner}/{repo}/issues/{number}":
		i := s.issue(rp.owner, rp.name, num)
		if i == nil {
			return http.StatusNotFound, "Not Found"
		}
		var body struct{ Title, Body, State, StateReason *string }
		if !decode(&body) {
			return http.StatusBadRequest, "Problems parsing JSON"
		}
		if body.Body != nil && utf8.RuneCountInString(*body.Body) > maxBody {
			return http.StatusUnprocessableEntity, tooLong("Issue", "https://docs.github.com/rest/issues/issues#update-an-issue")
		}
		if body.Title != nil {
			i.Title = *body.Title
		}
		if body.Body != nil && *body.Body != i.Body {
			i.Body, i.LastEditedBy = *body.Body, s.caller
		}
		if body.State != nil {
			i.State = *body.State
		}
		if body.StateReason != nil {
			i.StateReason = *body.StateReason
		}
		return http.StatusOK, s.issueJSON(rp, i)
	case "POST /api/graphql":
		return s.graphQL(r)
	}
	return http.StatusNotFound, "Not Found"
}

// graphQL answers the one query driftfix sends: an issue's body and
// lastEditedBy. GraphQL reports problems in "errors" with a 200.
func (s *Server) graphQL(r *http.Request) (int, any) {
	var req struct {
		Query     string
		Variables struct {
			Owner, Name string
			Number      int
		}
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || !strings.Contains(req.Query, "lastEditedBy") {
		return http.StatusOK, map[string]any{"errors": []any{map[string]any{"message": "the emulator answers only the issue lastEditedBy query"}}}
	}
	v := req.Variables
	rp := s.repos[v.Owner+"/"+v.Name]
	tok := strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("Authorization"), "token "), "Bearer ")
	if t, ok := s.tokens[tok]; rp == nil || (ok && s.installs[v.Owner] != t.installation) {
		return http.StatusOK, map[string]any{"data": map[string]any{"repository": nil},
			"errors": []any{map[string]any{"type": "NOT_FOUND", "message": "Could not resolve to a Repository with the name '" + v.Owner + "/" + v.Name + "'."}}}
	}
	i := s.issue(v.Owner, v.Name, v.Number)
	if i == nil {
		return http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{"issue": nil}},
			"errors": []any{map[string]any{"type": "NOT_FOUND", "message": fmt.Sprintf("Could not resolve to an Issue with the number of %d.", v.Number)}}}
	}
	var editor any
	if i.LastEditedBy != "" {
		editor = map[string]any{"login": i.LastEditedBy}
	}
	return http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{"issue": map[string]any{"body": i.Body, "lastEditedBy": editor}}}}
}
