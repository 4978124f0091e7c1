package githubtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// CheckRun is a check run as the emulator keeps it.
type CheckRun struct {
	ID                   int64
	Name, HeadSHA        string
	Status, Conclusion   string
	Title, Summary, Text string
	DetailsURL           string
	AppID                int64 // the App that made it
	Created, Completed   time.Time
	Updates              int // PATCHes it received
	// Annotations are every annotation the run received, in order (GitHub
	// appends those of an update).
	Annotations []Annotation
}

// Annotation is a check run's annotation as the emulator keeps it.
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string
	Title, Message     string
}

// Status is a commit status as the emulator keeps it.
type Status struct {
	SHA, State, Context, Description, TargetURL string
	Creator                                     string
}

// CheckRuns are the check runs on a commit (every commit: ""), oldest first.
func (s *Server) CheckRuns(owner, name, sha string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	if r := s.repos[owner+"/"+name]; r != nil {
		for _, c := range r.checks {
			if sha == "" || c.HeadSHA == sha {
				out = append(out, *c)
			}
		}
	}
	return out
}

// Statuses are the commit statuses on a commit, oldest first.
func (s *Server) Statuses(owner, name, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	if r := s.repos[owner+"/"+name]; r != nil {
		for _, st := range r.statuses {
			if st.SHA == sha {
				out = append(out, st)
			}
		}
	}
	return out
}

type checkBody struct {
	Name       string  `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	DetailsURL *string `json:"details_url"`
	Output     *struct {
		Title       string `json:"title"`
		Summary     string `json:"summary"`
		Text        string `json:"text"`
		Annotations []struct {
			Path            string `json:"path"`
			StartLine       int    `json:"start_line"`
			EndLine         int    `json:"end_line"`
			AnnotationLevel string `json:"annotation_level"`
			Title           string `json:"title"`
			Message         string `json:"message"`
		} `json:"annotations"`
	} `json:"output"`
}

// handleChecks serves check runs (only to a GitHub App, as GitHub does) and
// commit statuses.
func (s *Server) handleChecks(route string, p map[string]string, r *http.Request, rp *repo) (int, any, bool) {
	app := s.caller == s.AppSlug+"[bot]"
	switch r.Method + " " + route {
	case "POST /repos/{owner}/{repo}/check-runs":
		if !app {
			return http.StatusForbidden, "You must authenticate via a GitHub App.", true
		}
		var b checkBody
		if json.NewDecoder(r.Body).Decode(&b) != nil || b.Name == "" || b.HeadSHA == "" {
			return http.StatusUnprocessableEntity, "Invalid request: name and head_sha are required", true
		}
		if _, err := rp.git.CommitObject(plumbing.NewHash(b.HeadSHA)); err != nil {
			return http.StatusUnprocessableEntity, "No commit found for SHA: " + b.HeadSHA, true
		}
		s.checkID++
		c := &CheckRun{ID: s.checkID, Name: b.Name, HeadSHA: b.HeadSHA, Status: "queued", AppID: s.AppID, Created: time.Now()}
		if err := c.apply(b); err != "" {
			return http.StatusUnprocessableEntity, err, true
		}
		rp.checks = append(rp.checks, c)
		return http.StatusCreated, c.json(), true
	case "PATCH /repos/{owner}/{repo}/check-runs/{id}":
		if !app {
			return http.StatusForbidden, "You must authenticate via a GitHub App.", true
		}
		id, _ := strconv.ParseInt(p["id"], 10, 64)
		for _, c := range rp.checks {
			if c.ID != id {
				continue
			}
			var b checkBody
			if json.NewDecoder(r.Body).Decode(&b) != nil {
				return http.StatusUnprocessableEntity, "Invalid request", true
			}
			if err := c.apply(b); err != "" {
				return http.StatusUnprocessableEntity, err, true
			}
			c.Updates++
			return http.StatusOK, c.json(), true
		}
		return http.StatusNotFound, "Not Found", true
	case "GET /repos/{owner}/{repo}/commits/{ref}/check-runs":
		q := r.URL.Query()
		var runs []any
		for _, c := range rp.checks {
			if c.HeadSHA != p["ref"] || (q.Get("check_name") != "" && q.Get("check_name") != c.Name) ||
				(q.Get("app_id") != "" && q.Get("app_id") != strconv.FormatInt(c.AppID, 10)) {
				continue
			}
			runs = append(runs, c.json())
		}
		page := s.page(r, runs)
		return http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": page}, true
	case "POST /repos/{owner}/{repo}/statuses/{sha}":
		var b struct {
			State       string `json:"state"`
			Context     string `json:"context"`
			Description string `json:"description"`
			TargetURL   string `json:"target_url"`
		}
		if json.NewDecoder(r.Body).Decode(&b) != nil {
			return http.StatusUnprocessableEntity, "Invalid request", true
		}
		switch b.State {
		case "error", "failure", "pending", "success":
		default:
			return http.StatusUnprocessableEntity, "Validation Failed: state", true
		}
		if len(b.Description) > 140 {
			return http.StatusUnprocessableEntity, "Validation Failed: description is too long (maximum is 140 characters)", true
		}
		if _, err := rp.git.CommitObject(plumbing.NewHash(p["sha"])); err != nil {
			return http.StatusUnprocessableEntity, "No commit found for SHA: " + p["sha"], true
		}
		if b.Context == "" {
			b.Context = "default"
		}
		rp.statuses = append(rp.statuses, Status{SHA: p["sha"], State: b.State, Context: b.Context, Description: b.Description, TargetURL: b.TargetURL, Creator: s.caller})
		return http.StatusCreated, map[string]any{"state": b.State, "context": b.Context, "description": b.Description, "target_url": b.TargetURL}, true
	}
	return 0, nil, false
}

// apply takes a create or update body; it says what GitHub would refuse.
func (c *CheckRun) apply(b checkBody) string {
	if b.Status != nil {
		c.Status = *b.Status
	}
	if b.Conclusion != nil {
		c.Conclusion, c.Status = *b.Conclusion, "completed"
	}
	if c.Status == "completed" && c.Conclusion == "" {
		return "Invalid request: conclusion is required when status is completed"
	}
	if c.Status == "completed" {
		c.Completed = time.Now()
	}
	if b.DetailsURL != nil {
		c.DetailsURL = *b.DetailsURL
	}
	if b.Output != nil {
		if len(b.Output.Summary) > 65535 || len(b.Output.Text) > 65535 {
			return "Invalid request: output summary and text are limited to 65535 characters"
		}
		if len(b.Output.Annotations) > 50 {
			return "Invalid request: only 50 annotations are allowed per request"
		}
		for _, a := range b.Output.Annotations {
			switch {
			case a.Path == "" || a.StartLine < 1 || a.EndLine < a.StartLine || a.Message == "":
				return "Invalid request: an annotation needs path, start_line, end_line and message"
			case a.AnnotationLevel != "notice" && a.AnnotationLevel != "warning" && a.AnnotationLevel != "failure":
				return "Invalid request: annotation_level must be notice, warning or failure"
			}
		}
		c.Title, c.Summary, c.Text = b.Output.Title, b.Output.Summary, b.Output.Text
		for _, a := range b.Output.Annotations {
			c.Annotations = append(c.Annotations, Annotation{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, Level: a.AnnotationLevel, Title: a.Title, Message: a.Message})
		}
	}
	return ""
}

func (c *CheckRun) json() map[string]any {
	return map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "status": c.Status, "conclusion": c.Conclusion,
		"details_url": c.DetailsURL, "app": map[string]any{"id": c.AppID},
		"output": map[string]any{"title": c.Title, "summary": c.Summary, "text": c.Text}}
}

// Head is the commit a branch points at, or "".
func (s *Server) Head(owner, name, branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[owner+"/"+name]
	if r == nil {
		return ""
	}
	ref, err := r.git.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}
