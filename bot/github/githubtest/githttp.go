package githubtest

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/revlist"
)

// smartHTTP is what the emulator keeps for Git over HTTPS: which
// repositories are private and how long installation tokens live.
type smartHTTP struct {
	private  map[string]bool // owner/name
	tokenTTL time.Duration
}

// NewTLSServer is NewServer over HTTPS, as GitHub is: the REST API and Git
// share one host. Clients trust it through Client().Transport or
// CertificatePEM.
func NewTLSServer() (*Server, error) {
	s, err := NewServer()
	if err != nil {
		return nil, err
	}
	s.Server.Close()
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	s.API = s.Server.URL + "/api/v3/"
	return s, nil
}

// CertificatePEM is the TLS certificate of an HTTPS emulator, to add to a
// client's trusted CAs.
func (s *Server) CertificatePEM() []byte {
	c := s.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// GitURL is the URL a repository is cloned by over HTTP(S), as GitHub
// gives it: https://host/owner/name.git.
func (s *Server) GitURL(owner, name string) string {
	return s.URL + "/" + owner + "/" + name + ".git"
}

// SetPrivate makes a repository private (Git reads need a token that may
// read it: an installation token of its owner's installation, or the user
// token) or public again.
func (s *Server) SetPrivate(owner, name string, private bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.smart.private == nil {
		s.smart.private = map[string]bool{}
	}
	s.smart.private[owner+"/"+name] = private
}

// SetTokenTTL sets how long installation tokens minted from now on are
// valid (default an hour, as GitHub's).
func (s *Server) SetTokenTTL(d time.Duration) {
	s.mu.Lock()
	s.smart.tokenTTL = d
	s.mu.Unlock()
}

// tokenTTL is the lifetime of a new installation token; s.mu is held.
func (s *Server) tokenTTL() time.Duration {
	if s.smart.tokenTTL > 0 {
		return s.smart.tokenTTL
	}
	return time.Hour
}

// gitRoute reads a smart HTTP request: /owner/name(.git)/info/refs or
// /owner/name(.git)/git-upload-pack.
func gitRoute(path string) (owner, name, service string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) == 4 && parts[2] == "info" && parts[3] == "refs":
		service = "info/refs"
	case len(parts) == 3 && (parts[2] == "git-upload-pack" || parts[2] == "git-receive-pack"):
		service = parts[2]
	default:
		return "", "", "", false
	}
	if parts[0] == "api" {
		return "", "", "", false
	}
	return parts[0], strings.TrimSuffix(parts[1], ".git"), service, true
}

// serveGit answers Git's smart HTTP protocol (upload-pack, the read side)
// for the emulator's repositories, as GitHub does: public repositories for
// anyone, private ones only with basic auth whose password is a valid token
// for them (401 without one, 404 with one that cannot see the repository).
// It reports whether the request was a Git request.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) bool {
	owner, name, service, ok := gitRoute(r.URL.Path)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Calls[r.Method+" /{owner}/{repo}.git/"+service]++
	rp := s.repos[owner+"/"+name]
	authed, installation := false, int64(0)
	if _, pass, ok := r.BasicAuth(); ok {
		switch t, found := s.tokens[pass]; {
		case pass != "" && pass == s.UserToken:
			authed, installation = true, -1
		case found && time.Now().Before(t.expires):
			authed, installation = true, t.installation
		default:
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "remote: Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
			return true
		}
	}
	private := s.smart.private[owner+"/"+name]
	visible := rp != nil && (!private || installation == -1 || (installation > 0 && s.installs[owner] == installation))
	switch {
	case !visible && !authed:
		// GitHub asks for credentials rather than say whether it exists.
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "remote: Repository not found or it needs credentials.", http.StatusUnauthorized)
		return true
	case !visible:
		http.Error(w, "remote: Repository not found.", http.StatusNotFound)
		return true
	case installation > 0 && private && !s.gitPermitted(w):
		return true
	case service == "git-receive-pack" || (service == "info/refs" && r.URL.Query().Get("service") != "git-upload-pack"):
		http.Error(w, "remote: the emulator serves reads only.", http.StatusForbidden)
		return true
	}
	var err error
	if service == "info/refs" {
		err = s.advertise(w, rp)
	} else {
		err = s.uploadPack(w, r, rp)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
	return true
}

// advertise writes the repository's refs for upload-pack; s.mu is held.
func (s *Server) advertise(w http.ResponseWriter, rp *repo) error {
	ar := packp.NewAdvRefs()
	ar.Prefix = [][]byte{[]byte("# service=git-upload-pack\n"), pktline.Flush}
	for _, c := range []capability.Capability{capability.Shallow, capability.AllowReachableSHA1InWant, capability.AllowTipSHA1InWant, capability.NoProgress} {
		if err := ar.Capabilities.Add(c); err != nil {
			return err
		}
	}
	if err := ar.Capabilities.Add(capability.Agent, "githubtest"); err != nil {
		return err
	}
	refs, err := rp.git.References()
	if err != nil {
		return err
	}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference || ref.Name() == plumbing.HEAD {
			return nil
		}
		ar.References[ref.Name().String()] = ref.Hash()
		if t, err := rp.git.TagObject(ref.Hash()); err == nil {
			ar.Peeled[ref.Name().String()] = t.Target
		}
		return nil
	})
	if err != nil {
		return err
	}
	if head, err := rp.git.Storer.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference {
		if h, ok := ar.References[head.Target().String()]; ok {
			ar.Head = &h
			if err := ar.Capabilities.Add(capability.SymRef, "HEAD:"+head.Target().String()); err != nil {
				return err
			}
		}
	}
	var b bytes.Buffer
	if err := ar.Encode(&b); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
	w.Header().Set("Cache-Control", "no-cache")
	_, err = w.Write(b.Bytes())
	return err
}

// uploadPack answers one fetch: the commits wanted with, for a shallow
// fetch of depth 1, their trees only (each marked shallow), else their
// history; objects of the commits the client has are left out. s.mu is held.
func (s *Server) uploadPack(w http.ResponseWriter, r *http.Request, rp *repo) error {
	req := packp.NewUploadPackRequest()
	body := io.LimitReader(r.Body, 1<<20)
	if err := req.UploadRequest.Decode(body); err != nil {
		return fmt.Errorf("read the upload request: %w", err)
	}
	sc := pktline.NewScanner(body)
	for sc.Scan() {
		line := strings.TrimSpace(string(sc.Bytes()))
		if h, ok := strings.CutPrefix(line, "have "); ok {
			req.Haves = append(req.Haves, plumbing.NewHash(h))
		}
		if line == "done" {
			break
		}
	}
	st := rp.git.Storer
	var haves []plumbing.Hash
	for _, h := range req.Haves {
		if _, err := rp.git.CommitObject(h); err == nil {
			haves = append(haves, h)
		}
	}
	var objs, shallows []plumbing.Hash
	if depth, ok := req.Depth.(packp.DepthCommits); ok && depth == 1 {
		seen := map[plumbing.Hash]bool{}
		for _, h := range haves {
			if c, err := rp.git.CommitObject(h); err == nil {
				seen[h] = true
				treeObjects(rp, c, seen)
			}
		}
		for _, h := range req.Wants {
			want := h
			if t, err := rp.git.TagObject(h); err == nil {
				if !seen[h] {
					seen[h] = true
					objs = append(objs, h)
				}
				want = t.Target
			}
			c, err := rp.git.CommitObject(want)
			if err != nil {
				return fmt.Errorf("want %s: not our ref", h)
			}
			if len(c.ParentHashes) > 0 {
				shallows = append(shallows, want)
			}
			if !seen[want] {
				seen[want] = true
				objs = append(objs, want)
			}
			objs = append(objs, treeObjects(rp, c, seen)...)
		}
	} else {
		have, err := revlist.Objects(st, haves, nil)
		if err != nil {
			return err
		}
		if objs, err = revlist.Objects(st, req.Wants, have); err != nil {
			return err
		}
	}
	var pack bytes.Buffer
	if _, err := packfile.NewEncoder(&pack, st, false).Encode(objs, 0); err != nil {
		return err
	}
	resp := packp.NewUploadPackResponseWithPackfile(req, io.NopCloser(&pack))
	resp.Shallows = shallows
	if len(haves) > 0 {
		resp.ACKs = haves[:1]
	}
	var out bytes.Buffer
	if err := resp.Encode(&out); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	_, err := w.Write(out.Bytes())
	return err
}

// treeObjects lists the tree and blob objects of a commit not in seen, and
// adds them to it.
func treeObjects(rp *repo, c *object.Commit, seen map[plumbing.Hash]bool) []plumbing.Hash {
	var out []plumbing.Hash
	t, err := c.Tree()
	if err != nil {
		return nil
	}
	var walk func(t *object.Tree)
	walk = func(t *object.Tree) {
		if seen[t.Hash] {
			return
		}
		seen[t.Hash] = true
		out = append(out, t.Hash)
		for _, e := range t.Entries {
			if e.Mode.IsFile() {
				if !seen[e.Hash] {
					seen[e.Hash] = true
					out = append(out, e.Hash)
				}
				continue
			}
			if sub, err := rp.git.TreeObject(e.Hash); err == nil {
				walk(sub)
			}
		}
	}
	walk(t)
	return out
}
