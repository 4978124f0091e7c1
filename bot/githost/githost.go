// Package githost holds the values that cross the port between the publisher
// and a Git host (GitHub today): repositories, pull requests, file changes
// and the errors a host answers with. It has no behaviour of its own: each
// host package (bot/github) speaks its API in these terms, and the publisher
// (bot/publish) depends on them, never on a host's SDK.
package githost

import (
	"errors"
	"strings"
	"time"
)

// Repo is a repository on a Git host. Host names the host that serves it
// (its web address, as the host package reports it, e.g. github.com); empty
// in records written before hosts were named, which the first configured
// host then serves.
type Repo struct{ Host, Owner, Name string }

// String is owner/name, as people and the host name the repository.
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// Key identifies the repository across hosts: host/owner/name (owner/name
// when the host is not named). The state store keeps repositories by it.
func (r Repo) Key() string {
	if r.Host == "" {
		return r.String()
	}
	return r.Host + "/" + r.String()
}

// ParseKey reads a Key back: host/owner/name, or owner/name for a record that
// names no host.
func ParseKey(key string) (Repo, error) {
	parts := strings.Split(key, "/")
	for _, p := range parts {
		if p == "" {
			return Repo{}, errors.New("repository key " + key + " has an empty part")
		}
	}
	switch len(parts) {
	case 2:
		return Repo{Owner: parts[0], Name: parts[1]}, nil
	case 3:
		return Repo{Host: parts[0], Owner: parts[1], Name: parts[2]}, nil
	}
	return Repo{}, errors.New("repository key " + key + " is not host/owner/name or owner/name")
}

// PullRequest is a pull request (a merge request on other hosts) as driftfix
// needs it.
type PullRequest struct {
	Number       int
	URL          string
	Title, Body  string
	Branch, Base string
	State        string // open or closed
	Merged       bool
	Draft        bool
	Labels       []string
	HeadSHA      string
	// HeadRepo is the owner/name the head branch lives in: the base
	// repository's own for driftfix's PRs, another for a fork's.
	HeadRepo string
	// Author is the login of the account that opened the pull request.
	Author         string
	ClosedAt       time.Time
	MergedAt       time.Time
	MergeCommitSHA string
}

// Own reports whether a pull request is driftfix's own in repository r: its
// head branch is in r itself (not a fork) and login opened it.
func (pr PullRequest) Own(r Repo, login string) bool {
	return strings.EqualFold(pr.HeadRepo, r.String()) && login != "" && strings.EqualFold(pr.Author, login)
}

// NewPullRequest is a pull request to open.
type NewPullRequest struct {
	Branch, Base, Title, Body string
	Draft                     bool
	Labels                    []string
	Reviewers, Assignees      []string
}

// Comment is one comment on a pull request's conversation.
type Comment struct {
	ID     int64
	Author string // the login that wrote it
	// Association is the author's relation to the repository as the host
	// states it (GitHub: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...).
	Association string
	Body        string
}

// Permission levels a host reports for an account on a repository.
const (
	PermissionAdmin    = "admin"
	PermissionMaintain = "maintain"
	PermissionWrite    = "write"
	PermissionTriage   = "triage"
	PermissionRead     = "read"
	PermissionNone     = "none"
)

// CanWrite reports whether a permission level lets an account push to the
// repository: only such accounts may steer driftfix.
func CanWrite(permission string) bool {
	switch permission {
	case PermissionAdmin, PermissionMaintain, PermissionWrite:
		return true
	}
	return false
}

// Change is one file a fix writes: Content, computed from Synced, the file
// as it was at the revision the fix was planned on (nil: it did not exist).
type Change struct{ Synced, Content []byte }

// The errors a host answers with, for the publisher to branch on.
var (
	// ErrRateLimited says the host asked driftfix to wait longer than it
	// will within one cycle; the work is left for the next cycle.
	ErrRateLimited = errors.New("rate limited by the Git host")
	// ErrFileChanged says a file a fix writes changed on the base branch
	// since the revision the fix was planned on; writing it would revert that.
	ErrFileChanged = errors.New("the file changed since the synced revision")
	// ErrNotOurs says a branch has commits driftfix did not make.
	ErrNotOurs = errors.New("the branch has commits driftfix did not make")
	// ErrRace says another writer published the same thing at the same time.
	ErrRace = errors.New("published concurrently by another writer")
	// ErrNoBase says the base branch does not exist.
	ErrNoBase = errors.New("no such base branch")
)

// Check is the result of driftfix's check of a pull request's head commit,
// published as a check run (GitHub App) or a commit status (token mode).
type Check struct {
	// Name is the check's name on the commit (driftfix/verify).
	Name string
	// Success is the conclusion: success, or failure.
	Success bool
	// Title is one line; Summary and Text are Markdown (Text holds the table).
	Title, Summary, Text string
	// DetailsURL links to where the check's subject is seen (the application in Argo CD).
	DetailsURL string
	// Neutral concludes the check neutral (nothing to report), over Success.
	Neutral bool
	// Annotations mark lines of the commit's files (driftfix/predict's
	// findings); a commit status carries none.
	Annotations []Annotation
}

// Annotation is one line of a file a check points at.
type Annotation struct {
	Path           string // the file, relative to the repository root
	Line           int    // 1-based
	Level          string // notice, warning or failure
	Title, Message string
}

// Issue is an issue (not a pull request) as the Drift Dashboard needs it.
type Issue struct {
	Number      int
	URL         string
	Title, Body string
	State       string // open or closed
	// Author is the login of the account that opened the issue.
	Author string
}

// Review is a pull request review driftfix posts on one head commit: a
// body and comments on lines of the change.
type Review struct {
	// CommitID is the head commit the review is of.
	CommitID string
	Body     string
	Comments []ReviewComment
}

// ReviewComment is one comment of a review, on a line of the head's side of
// the change's diff; its body may hold a suggestion block.
type ReviewComment struct {
	Path string // the file, relative to the repository root
	Line int    // 1-based, in the head commit's file
	Body string
}
