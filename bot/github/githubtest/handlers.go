package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func (s *Server) handle(route string, p map[string]string, r *http.Request, rp *repo) (int, any) {
	decode := func(v any) bool { return json.NewDecoder(r.Body).Decode(v) == nil }
	num, _ := strconv.Atoi(p["number"])
	switch r.Method + " " + route {
	case "GET /repos/{owner}/{repo}/installation":
		return http.StatusOK, map[string]any{"id": s.installs[rp.owner], "app_id": s.AppID, "account": map[string]any{"login": rp.owner}}
	case "POST /app/installations/{id}/access_tokens":
		id, _ := strconv.ParseInt(p["id"], 10, 64)
		found := false
		for _, v := range s.installs {
			found = found || v == id
		}
		if !found {
			return http.StatusNotFound, "Not Found"
		}
		tok := "ghs_" + randHex(18)
		exp := time.Now().Add(s.tokenTTL())
		s.tokens[tok] = token{installation: id, expires: exp}
		return http.StatusCreated, map[string]any{"token": tok, "expires_at": exp.UTC().Format(time.RFC3339),
			"permissions": s.perm().granted}
	case "GET /app":
		return http.StatusOK, map[string]any{"id": s.AppID, "slug": s.AppSlug, "name": s.AppSlug}
	case "GET /user":
		return http.StatusOK, map[string]any{"login": s.UserLogin, "type": "User"}
	case "GET /repos/{owner}/{repo}/commits/{sha}":
		c, err := rp.git.CommitObject(plumbing.NewHash(p["sha"]))
		if err != nil {
			return http.StatusNotFound, "Not Found"
		}
		var parents []any
		for _, h := range c.ParentHashes {
			parents = append(parents, map[string]any{"sha": h.String()})
		}
		return http.StatusOK, map[string]any{"sha": c.Hash.String(), "parents": parents,
			"commit":    map[string]any{"message": c.Message, "author": map[string]any{"name": c.Author.Name, "email": c.Author.Email}, "committer": map[string]any{"name": c.Committer.Name, "email": c.Committer.Email}},
			"author":    map[string]any{"login": c.Author.Name},
			"committer": map[string]any{"login": c.Committer.Name}}
	case "GET /repos/{owner}/{repo}/contents/{path...}":
		ref := r.URL.Query().Get("ref")
		if ref == "" {
			ref = "main"
		}
		h, err := rp.git.ResolveRevision(plumbing.Revision(ref))
		if err != nil {
			return http.StatusNotFound, "No commit found for the ref " + ref
		}
		c, err := rp.git.CommitObject(*h)
		if err != nil {
			return http.StatusNotFound, "Not Found"
		}
		f, err := c.File(p["path"])
		if err != nil {
			// a directory is listed, as GitHub lists one: an array of its entries
			if tree, terr := c.Tree(); terr == nil {
				if dir, derr := tree.Tree(p["path"]); derr == nil {
					var entries []any
					for _, e := range dir.Entries {
						typ := "file"
						if e.Mode == filemode.Dir {
							typ = "dir"
						}
						entries = append(entries, map[string]any{"type": typ, "name": e.Name, "path": p["path"] + "/" + e.Name, "sha": e.Hash.String()})
					}
					return http.StatusOK, entries
				}
			}
			return http.StatusNotFound, "Not Found"
		}
		content, err := readBlob(rp.git, f.Hash)
		if err != nil {
			return http.StatusInternalServerError, err.Error()
		}
		name := p["path"][strings.LastIndex(p["path"], "/")+1:]
		return http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "size": len(content), "name": name, "path": p["path"],
			"sha": f.Hash.String(), "content": base64.StdEncoding.EncodeToString(content)}
	case "GET /repos/{owner}/{repo}":
		head, _ := rp.git.Storer.Reference(plumbing.HEAD)
		def := "main"
		if head != nil && head.Type() == plumbing.SymbolicReference {
			def = head.Target().Short()
		}
		return http.StatusOK, map[string]any{"name": rp.name, "full_name": rp.owner + "/" + rp.name, "default_branch": def}
	case "GET /repos/{owner}/{repo}/git/ref/{ref...}":
		ref, err := rp.git.Reference(plumbing.ReferenceName("refs/"+p["ref"]), true)
		if err != nil {
			return http.StatusNotFound, "Not Found"
		}
		return http.StatusOK, refJSON(ref.Name().String(), ref.Hash().String())
	case "GET /repos/{owner}/{repo}/git/commits/{sha}":
		c, err := rp.git.CommitObject(plumbing.NewHash(p["sha"]))
		if err != nil {
			return http.StatusNotFound, "Not Found"
		}
		var parents []any
		for _, h := range c.ParentHashes {
			parents = append(parents, map[string]any{"sha": h.String()})
		}
		return http.StatusOK, map[string]any{"sha": c.Hash.String(), "message": c.Message, "tree": map[string]any{"sha": c.TreeHash.String()}, "parents": parents,
			"verification": map[string]any{"verified": true, "reason": "valid"}}
	case "POST /repos/{owner}/{repo}/git/trees":
		var body struct {
			BaseTree string `json:"base_tree"`
			Tree     []struct {
				Path, Mode, Type string
				SHA              *string `json:"sha"`
				Content          *string `json:"content"`
			} `json:"tree"`
		}
		if !decode(&body) {
			return http.StatusBadRequest, "Problems parsing JSON"
		}
		files := map[string]entry{}
		if body.BaseTree != "" {
			var err error
			if files, err = flatten(rp.git, plumbing.NewHash(body.BaseTree)); err != nil {
				return http.StatusUnprocessableEntity, "base_tree is not a valid tree"
			}
		}
		for _, e := range body.Tree {
			if e.Path == "" || strings.HasPrefix(e.Path, "/") || e.Mode != "100644" {
				return http.StatusUnprocessableEntity, "tree.path or tree.mode is invalid"
			}
			switch {
			case e.Content != nil:
				h, err := writeBlob(rp.git, []byte(*e.Content))
				if err != nil {
					return http.StatusInternalServerError, err.Error()
				}
				files[e.Path] = entry{mode: filemode.Regular, hash: h}
			case e.SHA == nil:
				delete(files, e.Path)
			default:
				files[e.Path] = entry{mode: filemode.Regular, hash: plumbing.NewHash(*e.SHA)}
			}
		}
		h, err := buildTree(rp.git, files)
		if err != nil {
			return http.StatusInternalServerError, err.Error()
		}
		return http.StatusCreated, map[string]any{"sha": h.String()}
	case "POST /repos/{owner}/{repo}/git/commits":
		var body struct {
			Message string
			Tree    string
			Parents []string
			Author  any
		}
		if !decode(&body) || body.Message == "" || body.Tree == "" {
			return http.StatusUnprocessableEntity, "message and tree are required"
		}
		if _, err := rp.git.TreeObject(plumbing.NewHash(body.Tree)); err != nil {
			return http.StatusUnprocessableEntity, "tree is not a valid tree"
		}
		var parents []plumbing.Hash
		for _, ph := range body.Parents {
			if _, err := rp.git.CommitObject(plumbing.NewHash(ph)); err != nil {
				return http.StatusUnprocessableEntity, "parent is not a commit"
			}
			parents = append(parents, plumbing.NewHash(ph))
		}
		h, err := writeCommit(rp.git, plumbing.NewHash(body.Tree), body.Message, parents, time.Now(), s.caller, s.NoReplyEmail(s.caller))
		if err != nil {
			return http.StatusInternalServerError, err.Error()
		}
		return http.StatusCreated, map[string]any{"sha": h.String(), "tree": map[string]any{"sha": body.Tree}, "verification": map[string]any{"verified": true, "reason": "valid"}}
	case "POST /repos/{owner}/{repo}/git/refs":
		var body struct{ Ref, SHA string }
		if !decode(&body) || !strings.HasPrefix(body.Ref, "refs/heads/") {
			return http.StatusUnprocessableEntity, "ref must start with refs/heads/"
		}
		if _, err := rp.git.Reference(plumbing.ReferenceName(body.Ref), true); err == nil {
			return http.StatusUnprocessableEntity, "Reference already exists"
		}
		if _, err := rp.git.CommitObject(plumbing.NewHash(body.SHA)); err != nil {
			return http.StatusUnprocessableEntity, "Object does not exist"
		}
		if err := rp.git.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(body.Ref), plumbing.NewHash(body.SHA))); err != nil {
			return http.StatusInternalServerError, err.Error()
		}
		return http.StatusCreated, refJSON(body.Ref, body.SHA)
	case "PATCH /repos/{owner}/{repo}/git/refs/{ref...}":
		var body struct {
			SHA   string
			Force bool
		}
		name := plumbing.ReferenceName("refs/" + p["ref"])
		old, err := rp.git.Reference(name, true)
		if err != nil {
			return http.StatusUnprocessableEntity, "Reference does not exist"
		}
		if !decode(&body) {
			return http.StatusBadRequest, "Problems parsing JSON"
		}
		nc, err := rp.git.CommitObject(plumbing.NewHash(body.SHA))
		if err != nil {
			return http.StatusUnprocessableEntity, "Object does not exist"
		}
		if !body.Force {
			if ok, _ := nc.IsAncestor(mustCommit(rp, old.Hash())); !ok && old.Hash() != nc.Hash {
				return http.StatusUnprocessableEntity, "Update is not a fast forward"
			}
		}
		if err := rp.git.Storer.SetReference(plumbing.NewHashReference(name, nc.Hash)); err != nil {
			return http.StatusInternalServerError, err.Error()
		}
		return http.StatusOK, refJSON(name.String(), body.SHA)
	case "DELETE /repos/{owner}/{repo}/git/refs/{ref...}":
		name := plumbing.ReferenceName("refs/" + p["ref"])
		if _, err := rp.git.Reference(name, true); err != nil {
			return http.StatusUnprocessableEntity, "Reference does not exist"
		}
		if err := rp.git.Storer.RemoveReference(name); err != nil {
			return http.StatusInternalServerError, err.Error()
		}
		return http.StatusNoContent, nil
	case "GET /repos/{owner}/{repo}/pulls":
		q := r.URL.Query()
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		head := q.Get("head")
		var out []any
		for i := len(rp.prs) - 1; i >= 0; i-- { // newest first, like GitHub
			pr := rp.prs[i]
			if state != "all" && pr.State != state {
				continue
			}
			if head != "" && head != headOwner(rp, pr)+":"+pr.Head {
				continue
			}
			out = append(out, s.prJSON(rp, pr))
		}
		return http.StatusOK, s.page(r, out)
	case "POST /repos/{owner}/{repo}/pulls":
		var body struct {
			Title, Head, Base, Body string
			Draft                   bool
		}
		if !decode(&body) || body.Title == "" || body.Head == "" || body.Base == "" {
			return http.StatusUnprocessableEntity, "title, head and base are required"
		}
		if utf8.RuneCountInString(body.Body) > maxBody {
			return http.StatusUnprocessableEntity, tooLong("PullRequest", "https://docs.github.com/rest/pulls/pulls#create-a-pull-request")
		}
		if _, err := rp.git.Reference(plumbing.NewBranchReferenceName(body.Head), true); err != nil {
			return http.StatusUnprocessableEntity, "head does not exist"
		}
		if _, err := rp.git.Reference(plumbing.NewBranchReferenceName(body.Base), true); err != nil {
			return http.StatusUnprocessableEntity, "base does not exist"
		}
		for _, pr := range rp.prs {
			if pr.State == "open" && pr.Head == body.Head && pr.Base == body.Base {
				return http.StatusUnprocessableEntity, "A pull request already exists for " + rp.owner + ":" + body.Head + "."
			}
		}
		pr := &PullRequest{Number: s.nextNumber(rp), Title: body.Title, Body: body.Body, Head: body.Head, Base: body.Base, State: "open", Draft: body.Draft, Created: time.Now(), Author: s.caller}
		rp.prs = append(rp.prs, pr)
		return http.StatusCreated, s.prJSON(rp, pr)
	case "GET /repos/{owner}/{repo}/pulls/{number}":
		if _, pr := s.pr(rp.owner, rp.name, num); pr != nil {
			return http.StatusOK, s.prJSON(rp, pr)
		}
		return http.StatusNotFound, "Not Found"
	case "PATCH /repos/{owner}/{repo}/pulls/{number}":
		_, pr := s.pr(rp.owner, rp.name, num)
		if pr == nil {
			return http.StatusNotFound, "Not Found"
		}
		var body struct{ Title, Body, State *string }
		if !decode(&body) {
			return http.StatusBadRequest, "Problems parsing JSON"
		}
		if body.Body != nil && utf8.RuneCountInString(*body.Body) > maxBody {
			return http.StatusUnprocessableEntity, tooLong("PullRequest", "https://docs.github.com/rest/pulls/pulls#update-a-pull-request")
		}
		if body.Title != nil {
			pr.Title = *body.Title
		}
		if body.Body != nil {
			pr.Body = *body.Body
		}
		if body.State != nil {
			if pr.Merged {
				return http.StatusUnprocessableEntity, "a merged pull request cannot change state"
			}
			if *body.State == "closed" && pr.State == "open" {
				pr.ClosedBy = "bot"
			}
			pr.State = *body.State
		}
		return http.StatusOK, s.prJSON(rp, pr)
	case "POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers":
		_, pr := s.pr(rp.owner, rp.name, num)
		var body struct {
			Reviewers     []string
			TeamReviewers []string `json:"team_reviewers"`
		}
		if pr == nil || !decode(&body) {
			return http.StatusNotFound, "Not Found"
		}
		pr.Reviewers = append(pr.Reviewers, body.Reviewers...)
		pr.TeamReviewers = append(pr.TeamReviewers, body.TeamReviewers...)
		return http.StatusCreated, s.prJSON(rp, pr)
	case "POST /repos/{owner}/{repo}/issues/{number}/labels":
		_, pr := s.pr(rp.owner, rp.name, num)
		var labels []string
		if pr == nil || !decode(&labels) {
			return http.StatusNotFound, "Not Found"
		}
		for _, l := range labels {
			s.label(rp, pr, s.caller, l)
		}
		var out []any
		for _, l := range pr.Labels {
			out = append(out, map[string]any{"name": l})
		}
		return http.StatusOK, out
	case "POST /repos/{owner}/{repo}/issues/{number}/assignees":
		_, pr := s.pr(rp.owner, rp.name, num)
		var body struct{ Assignees []string }
		if pr == nil || !decode(&body) {
			return http.StatusNotFound, "Not Found"
		}
		pr.Assignees = append(pr.Assignees, body.Assignees...)
		return http.StatusCreated, map[string]any{"number": num}
	case "GET /repos/{owner}/{repo}/issues/{number}/comments":
		var out []any
		for _, c := range rp.comments[num] {
			out = append(out, map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author}, "author_association": c.Association})
		}
		return http.StatusOK, s.page(r, out)
	case "POST /repos/{owner}/{repo}/issues/{number}/comments":
		if _, pr := s.pr(rp.owner, rp.name, num); pr == nil {
			return http.StatusNotFound, "Not Found"
		}
		var body struct{ Body string }
		if !decode(&body) || body.Body == "" {
			return http.StatusUnprocessableEntity, "body is required"
		}
		s.commentID++
		rp.comments[num] = append(rp.comments[num], Comment{ID: s.commentID, Author: "driftfix[bot]", Association: "NONE", Body: body.Body})
		return http.StatusCreated, map[string]any{"id": s.commentID, "body": body.Body}
	case "POST /repos/{owner}/{repo}/issues/comments/{id}/reactions":
		var body struct{ Content string }
		id, _ := strconv.ParseInt(p["id"], 10, 64)
		if !decode(&body) || body.Content == "" {
			return http.StatusUnprocessableEntity, "content is required"
		}
		for n := range rp.comments {
			for i := range rp.comments[n] {
				if c := &rp.comments[n][i]; c.ID == id {
					rx := body.Content + " by " + s.caller
					if k := slices.Index(c.Reactions, rx); k >= 0 { // GitHub: one reaction of a kind per user, answered 200
						s.RepeatedReactions++
						return http.StatusOK, map[string]any{"id": k + 1, "content": body.Content, "user": map[string]any{"login": s.caller}}
					}
					c.Reactions = append(c.Reactions, rx)
					return http.StatusCreated, map[string]any{"id": len(c.Reactions), "content": body.Content, "user": map[string]any{"login": s.caller}}
				}
			}
		}
		return http.StatusNotFound, "Not Found"
	case "GET /repos/{owner}/{repo}/issues/comments/{id}/reactions":
		id, _ := strconv.ParseInt(p["id"], 10, 64)
		for n := range rp.comments {
			for _, c := range rp.comments[n] {
				if c.ID != id {
					continue
				}
				out := []any{}
				for k, rx := range c.Reactions {
					content, login, _ := strings.Cut(rx, " by ")
					out = append(out, map[string]any{"id": k + 1, "content": content, "user": map[string]any{"login": login}})
				}
				return http.StatusOK, s.page(r, out)
			}
		}
		return http.StatusNotFound, "Not Found"
	case "GET /repos/{owner}/{repo}/issues/{number}/events":
		if _, pr := s.pr(rp.owner, rp.name, num); pr == nil && s.issue(rp.owner, rp.name, num) == nil {
			return http.StatusNotFound, "Not Found"
		}
		out := []any{}
		for _, e := range rp.events[num] { // oldest first, like GitHub
			out = append(out, map[string]any{"id": e.id, "node_id": fmt.Sprintf("LE_%d", e.id), "url": s.API + "repos/" + rp.owner + "/" + rp.name + "/issues/events/" + strconv.FormatInt(e.id, 10),
				"actor": userJSON(e.actor), "event": e.event, "commit_id": nil, "commit_url": nil, "created_at": e.at.UTC().Format(time.RFC3339),
				"label": map[string]any{"name": e.label, "color": "ededed"}, "performed_via_github_app": nil})
		}
		return http.StatusOK, s.page(r, out)
	case "GET /repos/{owner}/{repo}/collaborators/{username}/permission":
		login := p["username"]
		role, ok := rp.perms[login]
		if !ok && strings.HasSuffix(login, "[bot]") {
			return http.StatusNotFound, "Not Found" // an App's bot account is no user of the repository
		}
		perm := role
		switch role {
		case "":
			role, perm = "none", "none"
		case "maintain":
			perm = "write"
		case "admin", "write", "read", "none":
		default: // triage, or a custom role extending read
			perm = "read"
		}
		return http.StatusOK, map[string]any{"permission": perm, "role_name": role, "user": userJSON(login)}
	}
	if status, body, ok := s.handleReviews(route, r, rp, num); ok {
		return status, body
	}
	if status, body, ok := s.handleChecks(route, p, r, rp); ok {
		return status, body
	}
	if status, body, ok := s.handleCompare(route, p, rp); ok {
		return status, body
	}
	if status, body, ok := s.handleCommits(route, p, r, rp); ok {
		return status, body
	}
	return s.handleIssues(route, r, rp, num)
}

// userJSON is an account as GitHub embeds it in other objects.
func userJSON(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "type": typ}
}

// headOwner is the owner of the repository a pull request's head is in.
func headOwner(rp *repo, p *PullRequest) string {
	if p.HeadRepo == "" {
		return rp.owner
	}
	owner, _, _ := strings.Cut(p.HeadRepo, "/")
	return owner
}

func mustCommit(rp *repo, h plumbing.Hash) *object.Commit {
	c, _ := rp.git.CommitObject(h)
	return c
}

func (s *Server) nextNumber(rp *repo) int {
	n := 1
	for _, p := range rp.prs {
		n = max(n, p.Number+1)
	}
	for _, i := range rp.issues { // issues and pull requests share numbers
		n = max(n, i.Number+1)
	}
	return n
}

func refJSON(name, sha string) map[string]any {
	return map[string]any{"ref": name, "object": map[string]any{"type": "commit", "sha": sha}}
}

func (s *Server) prJSON(rp *repo, p *PullRequest) map[string]any {
	var labels []any
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	headSHA := ""
	if ref, err := rp.git.Reference(plumbing.NewBranchReferenceName(p.Head), true); err == nil && p.HeadRepo == "" {
		headSHA = ref.Hash().String()
	}
	headRepo := p.HeadRepo
	if headRepo == "" {
		headRepo = rp.owner + "/" + rp.name
	}
	out := map[string]any{"number": p.Number, "state": p.State, "title": p.Title, "body": p.Body, "draft": p.Draft, "merged": p.Merged,
		"html_url": s.Server.URL + "/" + rp.owner + "/" + rp.name + "/pull/" + strconv.Itoa(p.Number),
		"head":     map[string]any{"ref": p.Head, "sha": headSHA, "label": headOwner(rp, p) + ":" + p.Head, "repo": map[string]any{"full_name": headRepo}},
		"base":     map[string]any{"ref": p.Base, "repo": map[string]any{"full_name": rp.owner + "/" + rp.name}}, "labels": labels,
		"created_at": p.Created.UTC().Format(time.RFC3339), "user": map[string]any{"login": p.Author}}
	if p.State == "closed" {
		out["closed_at"] = time.Now().UTC().Format(time.RFC3339)
	}
	if p.Merged {
		out["merged_at"] = time.Now().UTC().Format(time.RFC3339)
		out["merge_commit_sha"] = p.MergeSHA
	}
	return out
}

// page serves one page of a list (per_page, page) and sets the Link header
// to the next page, as GitHub does.
func (s *Server) page(r *http.Request, all []any) []any {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if pg <= 0 {
		pg = 1
	}
	from := (pg - 1) * per
	if from >= len(all) {
		return []any{}
	}
	to := min(from+per, len(all))
	if to < len(all) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(pg+1))
		u := *r.URL
		u.RawQuery = q.Encode()
		s.link = `<` + s.Server.URL + u.String() + `>; rel="next"`
	}
	return all[from:to]
}
