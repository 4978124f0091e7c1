package githubtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Review is a pull request review as the emulator keeps it.
type Review struct {
	ID       int64
	Author   string // the login that posted it
	CommitID string
	Event    string // COMMENT, APPROVE or REQUEST_CHANGES
	Body     string
	Comments []ReviewComment
	Created  time.Time
}

// ReviewComment is one comment of a review, on a line of the diff.
type ReviewComment struct {
	Path string
	Line int
	Side string // RIGHT (the head's lines) or LEFT
	Body string
}

// Reviews returns a pull request's reviews, oldest first.
func (s *Server) Reviews(owner, name string, number int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return nil
	}
	return append([]Review(nil), r.reviews[number]...)
}

// handleReviews serves a pull request's reviews: created with comments
// that must sit on lines of the pull request's diff (as git diff base...head
// shows it, three lines of context), as GitHub refuses others, and listed.
func (s *Server) handleReviews(route string, r *http.Request, rp *repo, num int) (int, any, bool) {
	switch r.Method + " " + route {
	case "POST /repos/{owner}/{repo}/pulls/{number}/reviews":
		_, pr := s.pr(rp.owner, rp.name, num)
		if pr == nil {
			return http.StatusNotFound, "Not Found", true
		}
		var b struct {
			CommitID string `json:"commit_id"`
			Body     string `json:"body"`
			Event    string `json:"event"`
			Comments []struct {
				Path     string `json:"path"`
				Line     int    `json:"line"`
				Side     string `json:"side"`
				Position int    `json:"position"`
				Body     string `json:"body"`
			} `json:"comments"`
		}
		if json.NewDecoder(r.Body).Decode(&b) != nil {
			return http.StatusBadRequest, "Problems parsing JSON", true
		}
		switch b.Event {
		case "COMMENT", "APPROVE", "REQUEST_CHANGES":
		default:
			return http.StatusUnprocessableEntity, "Unprocessable Entity: event must be COMMENT, APPROVE or REQUEST_CHANGES (a pending review is not emulated)", true
		}
		if b.Event != "APPROVE" && b.Body == "" {
			return http.StatusUnprocessableEntity, "Unprocessable Entity: body is required for a " + b.Event + " review", true
		}
		if pr.Author == s.caller && b.Event != "COMMENT" {
			return http.StatusUnprocessableEntity, "Unprocessable Entity: can not approve or request changes on your own pull request", true
		}
		head := ""
		if ref, err := rp.git.Reference(plumbing.NewBranchReferenceName(pr.Head), true); err == nil {
			head = ref.Hash().String()
		}
		if b.CommitID == "" {
			b.CommitID = head
		}
		if _, err := rp.git.CommitObject(plumbing.NewHash(b.CommitID)); err != nil || !plumbing.IsHash(b.CommitID) {
			return http.StatusUnprocessableEntity, "Unprocessable Entity: commit_id is not part of the pull request", true
		}
		rv := Review{Author: s.caller, CommitID: b.CommitID, Event: b.Event, Body: b.Body, Created: time.Now()}
		for _, c := range b.Comments {
			if c.Position != 0 {
				return http.StatusUnprocessableEntity, "Unprocessable Entity: position is not emulated; give line and side", true
			}
			if c.Side == "" {
				c.Side = "RIGHT"
			}
			if c.Path == "" || c.Line < 1 || c.Body == "" || (c.Side != "RIGHT" && c.Side != "LEFT") {
				return http.StatusUnprocessableEntity, "Unprocessable Entity: a review comment needs path, line, side and body", true
			}
			lines, err := diffLines(rp.dir, pr.Base, b.CommitID, c.Path, c.Side)
			if err != nil {
				return http.StatusInternalServerError, err.Error(), true
			}
			if !lines[c.Line] {
				return http.StatusUnprocessableEntity, "Unprocessable Entity: pull_request_review_thread.line must be part of the diff", true
			}
			rv.Comments = append(rv.Comments, ReviewComment{Path: c.Path, Line: c.Line, Side: c.Side, Body: c.Body})
		}
		s.commentID++
		rv.ID = s.commentID
		if rp.reviews == nil {
			rp.reviews = map[int][]Review{}
		}
		rp.reviews[num] = append(rp.reviews[num], rv)
		return http.StatusOK, s.reviewJSON(rp, num, rv), true
	case "GET /repos/{owner}/{repo}/pulls/{number}/reviews":
		if _, pr := s.pr(rp.owner, rp.name, num); pr == nil {
			return http.StatusNotFound, "Not Found", true
		}
		var out []any
		for _, rv := range rp.reviews[num] {
			out = append(out, s.reviewJSON(rp, num, rv))
		}
		return http.StatusOK, s.page(r, out), true
	}
	return 0, nil, false
}

func (s *Server) reviewJSON(rp *repo, num int, rv Review) map[string]any {
	state := map[string]string{"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}[rv.Event]
	return map[string]any{"id": rv.ID, "user": userJSON(rv.Author), "body": rv.Body, "state": state, "commit_id": rv.CommitID,
		"html_url":     fmt.Sprintf("%s/%s/%s/pull/%d#pullrequestreview-%d", s.Server.URL, rp.owner, rp.name, num, rv.ID),
		"submitted_at": rv.Created.UTC().Format(time.RFC3339)}
}

var hunkHeader = regexp.MustCompile(`^@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@`)

// diffLines are the lines of one side of a file a comment may sit on: the
// lines of the hunks of git diff base...commit (real git, three lines of
// context), as GitHub computes a pull request's diff.
func diffLines(dir, base, commit, file, side string) (map[int]bool, error) {
	cmd := exec.Command("git", "--git-dir", dir, "diff", "--no-color", "--no-ext-diff", "-U3", "refs/heads/"+base+"..."+commit, "--", file)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git diff %s...%s: %v: %s", base, commit, err, strings.TrimSpace(stderr.String()))
	}
	lines := map[int]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := hunkHeader.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		start, count := m[3], m[4]
		if side == "LEFT" {
			start, count = m[1], m[2]
		}
		from, _ := strconv.Atoi(start)
		n := 1
		if count != "" {
			n, _ = strconv.Atoi(count)
		}
		for i := from; i < from+n; i++ {
			lines[i] = true
		}
	}
	return lines, sc.Err()
}
