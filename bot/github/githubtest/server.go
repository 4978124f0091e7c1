// Package githubtest serves the part of the GitHub REST API driftfix uses on
// 127.0.0.1, backed by real git repositories: App JWTs are verified against
// the App's public key, installation tokens are minted and checked, the Git
// data API writes real objects and refs, pull requests live in memory. It
// answers like GitHub: rate-limit headers, ETags and 304s, secondary limits
// (403/429 with Retry-After) and 5xx when told to. People act through its
// methods: merge, close, comment, label.
package githubtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Server is the emulated GitHub.
type Server struct {
	*httptest.Server
	// API is the REST base URL to give clients (an Enterprise-style /api/v3/).
	API string
	// AppID and PrivateKeyPEM are the App's credentials.
	AppID         int64
	PrivateKeyPEM []byte
	// UserToken is accepted on every repository (token mode).
	UserToken string
	// AppSlug names the App; it writes as "<AppSlug>[bot]" (default "driftfix").
	AppSlug string
	// UserLogin is the account of UserToken (default "octo-user").
	UserLogin string

	key *rsa.PrivateKey

	mu        sync.Mutex
	repos     map[string]*repo // by owner/name
	installs  map[string]int64 // owner → installation
	tokens    map[string]token
	limit     int
	remaining int
	reset     time.Time
	faults    []int // status codes for the next requests (0 = none)
	// Fault, when set, may answer a request with a status code (500, 502,
	// 403 or 429 for a secondary limit); 0 lets it through.
	Fault func(r *http.Request) int
	// Calls counts requests by method and route; NotModified counts 304s
	// (notModified by method and route).
	Calls       map[string]int
	NotModified int
	notModified map[string]int
	// RepeatedReactions counts reactions an account posted again on a
	// comment that already had them from it (GitHub keeps one).
	RepeatedReactions int
	Secondary         int // secondary-limit answers given

	commentID int64 // the last comment's id, unique across repositories
	eventID   int64 // the last issue event's id
	checkID   int64 // the last check run's id

	link   string // Link header of the list being served
	caller string // login of the request being served

	smart smartHTTP // Git over HTTP(S): see githttp.go

	manifests     []ManifestApp           // Apps registered from a manifest (manifest.go)
	manifestCodes map[string]manifestCode // their one-time codes, until converted

	perms *permissions // the installations' permissions (permissions.go)
}

type token struct {
	installation int64
	expires      time.Time
}

type repo struct {
	owner, name string
	dir         string // the bare repository on disk
	git         *git.Repository
	prs         []*PullRequest
	comments    map[int][]Comment
	perms       map[string]string // login → permission; others have none
	checks      []*CheckRun
	statuses    []Status
	reviews     map[int][]Review // by pull request number (reviews.go)
	issues      []*Issue         // see issues.go
	events      map[int][]issueEvent
}

// issueEvent is one event of an issue or pull request's history, as the
// issue events API lists it (labeled and unlabeled are kept).
type issueEvent struct {
	id           int64
	event, actor string
	label        string
	at           time.Time
}

// PullRequest is a pull request as the emulator keeps it.
type PullRequest struct {
	Number               int
	Title, Body          string
	Head, Base           string
	State                string // open or closed
	Merged, Draft        bool
	Labels               []string
	Reviewers, Assignees []string
	TeamReviewers        []string // the slugs of the teams asked to review
	ClosedBy             string   // "bot" or "person"
	MergeSHA             string
	Created              time.Time
	// Author is the login that opened it; HeadRepo the owner/name its head
	// branch is in, "" for the repository itself (a fork's otherwise).
	Author, HeadRepo string
}

// Comment is one conversation comment; Association is the author's
// author_association (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...),
// Reactions the reactions on it ("+1", "eyes", ...), by whom.
type Comment struct {
	ID                        int64
	Author, Association, Body string
	Reactions                 []string // "content by login"
}

// NewServer starts the emulator with a fresh App key.
func NewServer() (*Server, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	s := &Server{AppID: 424242, key: key, UserToken: "github_pat_" + randHex(20), AppSlug: "driftfix", UserLogin: "octo-user",
		PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		repos:         map[string]*repo{}, installs: map[string]int64{}, tokens: map[string]token{}, Calls: map[string]int{}, notModified: map[string]int{},
		limit: 5000, remaining: 5000, reset: time.Now().Add(time.Hour)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.API = s.Server.URL + "/api/v3/"
	return s, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// AddRepo serves the bare repository at dir/owner/name.git (see NewRepo),
// with the App installed on its owner.
func (s *Server) AddRepo(dir, owner, name string) error {
	r, err := git.PlainOpen(filepath.Join(dir, owner, name+".git"))
	if err != nil {
		return fmt.Errorf("open repository %s/%s: %w", owner, name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[owner+"/"+name] = &repo{owner: owner, name: name, dir: filepath.Join(dir, owner, name+".git"), git: r, comments: map[int][]Comment{}, perms: map[string]string{"person": "write"}, events: map[int][]issueEvent{}}
	if s.installs[owner] == 0 {
		s.installs[owner] = int64(1000 + len(s.installs))
	}
	return nil
}

// SetUserToken makes token mode accept only token from now on (a rotation).
func (s *Server) SetUserToken(token string) {
	s.mu.Lock()
	s.UserToken = token
	s.mu.Unlock()
}

// CallCount returns how many requests a route (e.g. "GET /repos/{owner}/{repo}/pulls") got.
func (s *Server) CallCount(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Calls[route]
}

// NotModifiedCount is how many requests of a route ("GET /repos/{owner}/{repo}/pulls")
// were answered 304 Not Modified.
func (s *Server) NotModifiedCount(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notModified[route]
}

// FailNext makes the next requests answer the given status codes, in order
// (403 and 429 as secondary limits with Retry-After: 1).
func (s *Server) FailNext(codes ...int) {
	s.mu.Lock()
	s.faults = append(s.faults, codes...)
	s.mu.Unlock()
}

// SetRateLimit sets the primary limit's remaining requests and reset time.
func (s *Server) SetRateLimit(remaining int, reset time.Time) {
	s.mu.Lock()
	s.remaining, s.reset = remaining, reset
	s.mu.Unlock()
}

// PullRequests returns copies of a repository's pull requests.
func (s *Server) PullRequests(owner, name string) []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PullRequest
	if r := s.repos[owner+"/"+name]; r != nil {
		for _, p := range r.prs {
			cp := *p
			cp.Labels = append([]string(nil), p.Labels...)
			out = append(out, cp)
		}
	}
	return out
}

// Comments returns a pull request's comments.
func (s *Server) Comments(owner, name string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[owner+"/"+name]; r != nil {
		return append([]Comment(nil), r.comments[number]...)
	}
	return nil
}

// Branches lists a repository's branches.
func (s *Server) Branches(owner, name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return nil
	}
	refs, err := r.git.References()
	if err != nil {
		return nil
	}
	var out []string
	refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Name().IsBranch() {
			out = append(out, ref.Name().Short())
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// File returns a file's content on a branch.
func (s *Server) File(owner, name, branch, path string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return "", fmt.Errorf("no repository %s/%s", owner, name)
	}
	ref, err := r.git.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return "", err
	}
	c, err := r.git.CommitObject(ref.Hash())
	if err != nil {
		return "", err
	}
	f, err := c.File(path)
	if err != nil {
		return "", err
	}
	return f.Contents()
}

// Merge merges a pull request as a person would: fast-forward when the base
// has not moved, else the pull request's changes applied onto the base in a
// merge commit.
func (s *Server) Merge(owner, name string, number int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, p := s.pr(owner, name, number)
	if p == nil || p.State != "open" {
		return fmt.Errorf("no open pull request %s/%s#%d", owner, name, number)
	}
	head, err := r.git.Reference(plumbing.NewBranchReferenceName(p.Head), true)
	if err != nil {
		return fmt.Errorf("head branch %s: %w", p.Head, err)
	}
	baseRef, err := r.git.Reference(plumbing.NewBranchReferenceName(p.Base), true)
	if err != nil {
		return fmt.Errorf("base branch %s: %w", p.Base, err)
	}
	hc, err := r.git.CommitObject(head.Hash())
	if err != nil {
		return err
	}
	result := head.Hash()
	if len(hc.ParentHashes) != 1 || hc.ParentHashes[0] != baseRef.Hash() {
		bc, err := r.git.CommitObject(baseRef.Hash())
		if err != nil {
			return err
		}
		files, err := flatten(r.git, bc.TreeHash)
		if err != nil {
			return err
		}
		after, err := flatten(r.git, hc.TreeHash)
		if err != nil {
			return err
		}
		// The pull request's changes are those since the merge base: every
		// commit of its branch, not only the last.
		before := map[string]entry{}
		if mb, err := hc.MergeBase(bc); err == nil && len(mb) > 0 {
			if before, err = flatten(r.git, mb[0].TreeHash); err != nil {
				return err
			}
		} else if len(hc.ParentHashes) > 0 {
			pc, err := r.git.CommitObject(hc.ParentHashes[0])
			if err != nil {
				return err
			}
			if before, err = flatten(r.git, pc.TreeHash); err != nil {
				return err
			}
		}
		for f, e := range after {
			if before[f] != e {
				files[f] = e
			}
		}
		for f := range before {
			if _, ok := after[f]; !ok {
				delete(files, f)
			}
		}
		tree, err := buildTree(r.git, files)
		if err != nil {
			return err
		}
		if result, err = writeCommit(r.git, tree, fmt.Sprintf("Merge pull request #%d from %s", number, p.Head), []plumbing.Hash{baseRef.Hash(), head.Hash()}, time.Now(), "person", s.NoReplyEmail("person")); err != nil {
			return err
		}
	}
	if err := r.git.Storer.SetReference(plumbing.NewHashReference(baseRef.Name(), result)); err != nil {
		return err
	}
	p.State, p.Merged, p.MergeSHA, p.ClosedBy = "closed", true, result.String(), "person"
	return nil
}

// AddPR opens a pull request as a person (pr.Author) would, from a branch of
// the repository or, with pr.HeadRepo, of a fork; it returns its number.
func (s *Server) AddPR(owner, name string, pr PullRequest) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return 0, fmt.Errorf("no repository %s/%s", owner, name)
	}
	pr.Number, pr.State, pr.Created = s.nextNumber(r), "open", time.Now()
	if pr.Base == "" {
		pr.Base = "main"
	}
	r.prs = append(r.prs, &pr)
	s.hookOpened(r, &pr) // webhooks.go
	return pr.Number, nil
}

// CommitFile commits one file's new content onto a branch as login (a
// person pushing to main, or to driftfix's branch), creating the branch
// from main when it does not exist.
func (s *Server) CommitFile(owner, name, branch, path, content, login string) error {
	return s.commit(owner, name, branch, path, content, login, "Edit "+path, true)
}

// commit commits one file's content onto a branch as login with message;
// fromMain starts a branch that does not exist from main.
func (s *Server) commit(owner, name, branch, path, content, login, message string, fromMain bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return fmt.Errorf("no repository %s/%s", owner, name)
	}
	ref, err := r.git.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		if !fromMain {
			return err
		}
		if ref, err = r.git.Reference(plumbing.NewBranchReferenceName("main"), true); err != nil {
			return err
		}
	}
	c, err := r.git.CommitObject(ref.Hash())
	if err != nil {
		return err
	}
	files, err := flatten(r.git, c.TreeHash)
	if err != nil {
		return err
	}
	h, err := writeBlob(r.git, []byte(content))
	if err != nil {
		return err
	}
	files[path] = entry{mode: filemode.Regular, hash: h}
	tree, err := buildTree(r.git, files)
	if err != nil {
		return err
	}
	nc, err := writeCommit(r.git, tree, message, []plumbing.Hash{ref.Hash()}, time.Now(), login, s.NoReplyEmail(login))
	if err != nil {
		return err
	}
	before := s.branchHead(r, branch)
	if err := r.git.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), nc)); err != nil {
		return err
	}
	s.hookPushed(r, branch, before, nc.String(), login) // webhooks.go
	return nil
}

// CloseUnmerged closes a pull request unmerged, as a person.
func (s *Server) CloseUnmerged(owner, name string, number int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, p := s.pr(owner, name, number)
	if p == nil {
		return fmt.Errorf("no pull request %s/%s#%d", owner, name, number)
	}
	p.State, p.ClosedBy = "closed", "person"
	return nil
}

// Comment adds a comment as "person", a collaborator with write access.
func (s *Server) Comment(owner, name string, number int, body string) {
	s.CommentAs(owner, name, number, "person", "COLLABORATOR", body)
}

// CommentAs adds a comment as login, with its author association, and
// returns its id (0 when there is no such repository).
func (s *Server) CommentAs(owner, name string, number int, login, association, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[owner+"/"+name]; r != nil {
		s.commentID++
		r.comments[number] = append(r.comments[number], Comment{ID: s.commentID, Author: login, Association: association, Body: body})
		s.hookCommented(r, number, r.comments[number][len(r.comments[number])-1]) // webhooks.go
		return s.commentID
	}
	return 0
}

// ReactAs adds login's reaction to a comment, once, as GitHub does.
func (s *Server) ReactAs(owner, name string, commentID int64, login, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return
	}
	for n := range r.comments {
		for i := range r.comments[n] {
			if c := &r.comments[n][i]; c.ID == commentID && !slices.Contains(c.Reactions, content+" by "+login) {
				c.Reactions = append(c.Reactions, content+" by "+login)
			}
		}
	}
}

// SetPermission gives login a role on a repository (admin, maintain,
// write, triage, read, none, or a custom role's name), as the collaborator
// permission API answers it: role_name the role, permission its base
// (maintain is write, triage is read; a custom role reads as "read" here).
func (s *Server) SetPermission(owner, name, login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[owner+"/"+name]; r != nil {
		r.perms[login] = permission
	}
}

// Label adds a label as "person", a collaborator with write access.
func (s *Server) Label(owner, name string, number int, label string) {
	s.LabelAs(owner, name, number, "person", label)
}

// LabelAs adds a label to a pull request as login (a person, or a
// workflow's github-actions[bot]), recording the labeled event GitHub shows.
func (s *Server) LabelAs(owner, name string, number int, login, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, p := s.pr(owner, name, number); p != nil {
		s.label(r, p, login, label)
	}
}

// UnlabelAs removes a label from a pull request as login, recording the
// unlabeled event.
func (s *Server) UnlabelAs(owner, name string, number int, login, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, p := s.pr(owner, name, number)
	if p == nil || !slices.Contains(p.Labels, label) {
		return
	}
	p.Labels = slices.DeleteFunc(p.Labels, func(l string) bool { return l == label })
	s.eventID++
	r.events[number] = append(r.events[number], issueEvent{id: s.eventID, event: "unlabeled", actor: login, label: label, at: time.Now()})
}

// label applies a label once, as GitHub does, with its event.
func (s *Server) label(r *repo, p *PullRequest, login, label string) {
	if slices.Contains(p.Labels, label) {
		return
	}
	p.Labels = append(p.Labels, label)
	s.eventID++
	r.events[p.Number] = append(r.events[p.Number], issueEvent{id: s.eventID, event: "labeled", actor: login, label: label, at: time.Now()})
}

func (s *Server) pr(owner, name string, number int) (*repo, *PullRequest) {
	r := s.repos[owner+"/"+name]
	if r == nil {
		return nil, nil
	}
	for _, p := range r.prs {
		if p.Number == number {
			return r, p
		}
	}
	return r, nil
}

// ---- the wire protocol ----

// validationFailed is a 422 GitHub answers as "Validation Failed" with the
// field at fault in errors[].
type validationFailed struct{ resource, field, message, doc string }

// maxBody is the most characters GitHub takes in an issue's or a pull
// request's body.
const maxBody = 65536

// tooLong is GitHub's answer to a body over maxBody characters.
func tooLong(resource, doc string) validationFailed {
	return validationFailed{resource: resource, field: "body", message: fmt.Sprintf("body is too long (maximum is %d characters)", maxBody), doc: doc}
}

type apiError struct {
	Message string `json:"message"`
	Doc     string `json:"documentation_url,omitempty"`
}

func (s *Server) writeErr(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(apiError{Message: msg, Doc: "https://docs.github.com/rest"})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.serveGit(w, r) || s.serveManifest(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	route, params, ok := match(r.Method, strings.TrimPrefix(r.URL.Path, "/api/v3"))
	s.Calls[r.Method+" "+route]++
	code := 0
	if len(s.faults) > 0 {
		code, s.faults = s.faults[0], s.faults[1:]
	}
	if code == 0 && s.Fault != nil {
		code = s.Fault(r)
	}
	switch {
	case code == http.StatusForbidden || code == http.StatusTooManyRequests:
		s.Secondary++
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(apiError{Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			Doc: "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"})
		return
	case code >= 500:
		s.writeErr(w, code, "Server Error")
		return
	}
	if !ok {
		s.writeErr(w, http.StatusNotFound, "Not Found")
		return
	}
	// Primary limit: every authenticated request that is not a 304 counts.
	if time.Now().After(s.reset) {
		s.remaining, s.reset = s.limit, time.Now().Add(time.Hour)
	}
	setRate := func() {
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(s.limit))
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(s.remaining))
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
		w.Header().Set("X-RateLimit-Resource", "core")
	}
	if s.remaining <= 0 {
		setRate()
		s.writeErr(w, http.StatusForbidden, "API rate limit exceeded for installation.")
		return
	}
	var installation int64
	s.caller = ""
	if route == "/app" || strings.HasPrefix(route, "/app/") || route == "/repos/{owner}/{repo}/installation" {
		if err := s.verifyJWT(r.Header.Get("Authorization")); err != nil {
			s.writeErr(w, http.StatusUnauthorized, "A JSON web token could not be decoded: "+err.Error())
			return
		}
	} else {
		tok := r.Header.Get("Authorization")
		tok = strings.TrimPrefix(strings.TrimPrefix(tok, "token "), "Bearer ")
		if tok == s.UserToken && tok != "" {
			installation, s.caller = -1, s.UserLogin
		} else if t, ok := s.tokens[tok]; ok && time.Now().Before(t.expires) {
			installation, s.caller = t.installation, s.AppSlug+"[bot]"
		} else {
			s.writeErr(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
	}
	var rp *repo
	if o, n := params["owner"], params["repo"]; o != "" {
		rp = s.repos[o+"/"+n]
		if rp == nil || (installation > 0 && s.installs[o] != installation) {
			s.writeErr(w, http.StatusNotFound, "Not Found")
			return
		}
	}
	if installation > 0 && !s.permitted(w, r.Method, route, params, rp) {
		return
	}
	s.link = ""
	status, body := s.handle(route, params, r, rp)
	if s.link != "" {
		w.Header().Set("Link", s.link)
	}
	if status == http.StatusOK && r.Method == http.MethodGet {
		raw, _ := json.Marshal(body)
		sum := sha256.Sum256(raw)
		etag := `"` + hex.EncodeToString(sum[:12]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			s.NotModified++
			s.notModified[r.Method+" "+route]++
			setRate()
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	s.remaining--
	setRate()
	w.Header().Set("Content-Type", "application/json")
	if v, ok := body.(validationFailed); ok {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"message": "Validation Failed", "errors": []any{map[string]any{"resource": v.resource, "code": "custom", "field": v.field, "message": v.message}},
			"documentation_url": v.doc, "status": strconv.Itoa(status)})
		return
	}
	if status >= 400 {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(apiError{Message: fmt.Sprint(body), Doc: "https://docs.github.com/rest"})
		return
	}
	w.WriteHeader(status)
	if body != nil {
		json.NewEncoder(w).Encode(body)
	}
}

var routes = []string{
	"GET /app",
	"GET /user",
	"GET /repos/{owner}/{repo}/commits/{sha}",
	"GET /repos/{owner}/{repo}/contents/{path...}",
	"GET /repos/{owner}/{repo}/installation",
	"POST /app/installations/{id}/access_tokens",
	"GET /repos/{owner}/{repo}",
	"GET /repos/{owner}/{repo}/git/ref/{ref...}",
	"GET /repos/{owner}/{repo}/git/commits/{sha}",
	"POST /repos/{owner}/{repo}/git/trees",
	"POST /repos/{owner}/{repo}/git/commits",
	"POST /repos/{owner}/{repo}/git/refs",
	"PATCH /repos/{owner}/{repo}/git/refs/{ref...}",
	"DELETE /repos/{owner}/{repo}/git/refs/{ref...}",
	"GET /repos/{owner}/{repo}/pulls",
	"POST /repos/{owner}/{repo}/pulls",
	"GET /repos/{owner}/{repo}/pulls/{number}",
	"PATCH /repos/{owner}/{repo}/pulls/{number}",
	"POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers",
	"POST /repos/{owner}/{repo}/issues/{number}/labels",
	"POST /repos/{owner}/{repo}/issues/{number}/assignees",
	"GET /repos/{owner}/{repo}/issues/{number}/comments",
	"GET /repos/{owner}/{repo}/issues/{number}/events",
	"POST /repos/{owner}/{repo}/issues/{number}/comments",
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission",
	"POST /repos/{owner}/{repo}/issues/comments/{id}/reactions",
	"GET /repos/{owner}/{repo}/issues/comments/{id}/reactions",
	"POST /repos/{owner}/{repo}/check-runs",
	"PATCH /repos/{owner}/{repo}/check-runs/{id}",
	"GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
	"POST /repos/{owner}/{repo}/statuses/{sha}",
	"GET /repos/{owner}/{repo}/compare/{basehead}",
	// commits.go
	"GET /repos/{owner}/{repo}/commits",
	"GET /users/{username}",
	// reviews.go
	"POST /repos/{owner}/{repo}/pulls/{number}/reviews",
	"GET /repos/{owner}/{repo}/pulls/{number}/reviews",
	// issues.go
	"GET /repos/{owner}/{repo}/issues",
	"POST /repos/{owner}/{repo}/issues",
	"GET /repos/{owner}/{repo}/issues/{number}",
	"PATCH /repos/{owner}/{repo}/issues/{number}",
	"POST /api/graphql",
}

// match finds the route of a request and its parameters.
func match(method, path string) (string, map[string]string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, rt := range routes {
		m, pattern, _ := strings.Cut(rt, " ")
		if m != method {
			continue
		}
		ps := strings.Split(strings.Trim(pattern, "/"), "/")
		params := map[string]string{}
		ok := true
		for i, p := range ps {
			if strings.HasSuffix(p, "...}") {
				if i >= len(segs) {
					ok = false
					break
				}
				params[strings.Trim(p, "{.}")] = strings.Join(segs[i:], "/")
				break
			}
			if i >= len(segs) {
				ok = false
				break
			}
			if strings.HasPrefix(p, "{") {
				params[strings.Trim(p, "{}")] = segs[i]
			} else if p != segs[i] {
				ok = false
				break
			}
			if i == len(ps)-1 && len(segs) != len(ps) {
				ok = false
			}
		}
		if ok {
			return pattern, params, true
		}
	}
	return path, nil, false
}

func (s *Server) verifyJWT(auth string) error {
	raw, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return fmt.Errorf("no bearer token")
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT")
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	pb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("bad encoding")
	}
	var h struct{ Alg string }
	var c struct {
		Iss any   `json:"iss"`
		Iat int64 `json:"iat"`
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(hb, &h) != nil || json.Unmarshal(pb, &c) != nil || h.Alg != "RS256" {
		return fmt.Errorf("bad header or claims")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature does not match the App's public key")
	}
	if fmt.Sprint(c.Iss) != strconv.FormatInt(s.AppID, 10) {
		return fmt.Errorf("'iss' is not the App ID")
	}
	now := time.Now().Unix()
	if c.Exp < now || c.Iat > now+60 || c.Exp-c.Iat > 600 {
		return fmt.Errorf("'exp' or 'iat' out of range")
	}
	return nil
}
