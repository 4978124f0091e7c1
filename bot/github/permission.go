package github

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v89/github"
)

// ErrPermission is wrapped by the error of a call GitHub refused because
// the App's installation lacks a permission ("Resource not accessible by
// integration").
var ErrPermission = errors.New("the GitHub App lacks a permission")

// permissionError names the permission a refused call needed, from the
// X-Accepted-GitHub-Permissions header GitHub sends with the 403
// ("pull_requests=write", sets separated by "; "), or returns nil when err
// is no such refusal.
func permissionError(what string, err error) error {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusForbidden ||
		!strings.Contains(er.Message, "Resource not accessible by integration") {
		return nil
	}
	need := er.Response.Header.Get("X-Accepted-GitHub-Permissions")
	if need == "" {
		need = "a permission GitHub did not name"
	} else {
		need = strings.Join(strings.Split(need, "; "), " or ")
	}
	return fmt.Errorf("github: %s: %w: it needs %s; grant it in the App's settings (deploy/github-app.yaml lists what driftfix asks for) and accept it on the installation: %w",
		what, ErrPermission, need, err)
}
