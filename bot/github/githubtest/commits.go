package githubtest

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// UserID is the account id the emulator gives a login, the same on every
// request; commits an account makes carry its noreply address with it
// (NoReplyEmail).
func UserID(login string) int64 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(login)))
	return int64(h.Sum32()%90000000) + 10000000
}

// NoReplyEmail is the address GitHub writes on the commits an account
// makes through the API, <id>+<login>@users.noreply.<host>, the host
// being this server's (an Enterprise Server's name, without its port).
func (s *Server) NoReplyEmail(login string) string {
	host := "github.com"
	if u, err := url.Parse(s.URL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return fmt.Sprintf("%d+%s@users.noreply.%s", UserID(login), login, host)
}

// Commit is one commit as a test reads it.
type Commit struct {
	SHA, Message             string
	AuthorName, AuthorEmail  string
	CommitterName, Committer string // the committer's name and email
	Parents                  int
}

// Commits lists the commits of a branch, newest first, following every parent.
func (s *Server) Commits(owner, name, branch string) ([]Commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return nil, fmt.Errorf("no repository %s/%s", owner, name)
	}
	cs, err := log(r.git, branch)
	if err != nil {
		return nil, err
	}
	out := make([]Commit, len(cs))
	for i, c := range cs {
		out[i] = Commit{SHA: c.Hash.String(), Message: c.Message, AuthorName: c.Author.Name, AuthorEmail: c.Author.Email,
			CommitterName: c.Committer.Name, Committer: c.Committer.Email, Parents: len(c.ParentHashes)}
	}
	return out, nil
}

// CommitMessage commits one file onto a branch as login with a message of
// its own: a repository's history, as its people write it.
func (s *Server) CommitMessage(owner, name, branch, path, content, login, message string) error {
	return s.commit(owner, name, branch, path, content, login, message, false)
}

// log is the commits reachable from a branch or commit, newest first.
func log(r *git.Repository, rev string) ([]*object.Commit, error) {
	h, err := r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, err
	}
	it, err := r.Log(&git.LogOptions{From: *h, Order: git.LogOrderCommitterTime})
	if err != nil {
		return nil, err
	}
	var out []*object.Commit
	err = it.ForEach(func(c *object.Commit) error {
		out = append(out, c)
		return nil
	})
	return out, err
}

func commitJSON(c *object.Commit) map[string]any {
	var parents []any
	for _, h := range c.ParentHashes {
		parents = append(parents, map[string]any{"sha": h.String()})
	}
	return map[string]any{"sha": c.Hash.String(), "parents": parents,
		"commit": map[string]any{"message": c.Message,
			"author":    map[string]any{"name": c.Author.Name, "email": c.Author.Email, "date": c.Author.When.UTC().Format(time.RFC3339)},
			"committer": map[string]any{"name": c.Committer.Name, "email": c.Committer.Email, "date": c.Committer.When.UTC().Format(time.RFC3339)}},
		"author": map[string]any{"login": c.Author.Name}, "committer": map[string]any{"login": c.Committer.Name}}
}

// handleCommits serves the list of a branch's commits and the accounts'
// public profiles.
func (s *Server) handleCommits(route string, p map[string]string, r *http.Request, rp *repo) (int, any, bool) {
	switch r.Method + " " + route {
	case "GET /repos/{owner}/{repo}/commits":
		rev := r.URL.Query().Get("sha")
		if rev == "" {
			rev = "HEAD"
		}
		cs, err := log(rp.git, rev)
		if errors.Is(err, plumbing.ErrReferenceNotFound) || (err != nil && strings.Contains(err.Error(), "not found")) {
			return http.StatusNotFound, "No commit found for SHA: " + rev, true
		}
		if err != nil {
			return http.StatusInternalServerError, err.Error(), true
		}
		all := make([]any, len(cs))
		for i, c := range cs {
			all[i] = commitJSON(c)
		}
		return http.StatusOK, s.page(r, all), true
	case "GET /users/{username}":
		login := p["username"]
		typ := "User"
		if strings.HasSuffix(login, "[bot]") {
			typ = "Bot"
		}
		return http.StatusOK, map[string]any{"login": login, "id": UserID(login), "type": typ}, true
	}
	return 0, nil, false
}
