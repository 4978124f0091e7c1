// Package templates renders what driftfix writes for people: pull request
// titles and bodies, and Slack digests. It renders view structs only; what a
// view says is decided elsewhere.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/driftfix/driftfix/bot/drift"
)

//go:embed *.tmpl
var files embed.FS

var tmpl = template.Must(template.New("").Funcs(template.FuncMap{"code": Code, "text": Text, "htmltext": HTMLText, "shown": shown}).ParseFS(files, "*.tmpl"))

// PRView is everything a fix pull request says.
type PRView struct {
	App, AppNamespace string
	ArgoCDURL         string
	Kind              drift.FixKind
	// Action is what the fix does, for the title: its remedy's Title, in which
	// PRTitle fills {paths} and {resource}.
	Action          string
	Cause           drift.Cause
	CauseDoc        string
	Resource        drift.Ref
	Findings        []FindingView
	Why, Risk, Undo string
	Verification    string
	Instructions    string
	Diffs           []FileDiff
	Fingerprint     string
}

// FindingView is one differing field as a reviewer reads it.
type FindingView struct {
	Resource  drift.Ref
	Path      string
	Git, Live string // already rendered for display (Secret data masked)
	Owner     string
	Evidence  []string
}

// FileDiff is the unified diff of one changed file.
type FileDiff struct {
	File, Diff string
}

// Fence is a code fence no line of the diff can close: a value written
// into Git (a live value adopted, a context line) may hold backticks.
func (d FileDiff) Fence() string { return fence(d.Diff) }

// AppURL links to the application in Argo CD's UI.
func (v PRView) AppURL() string { return AppURL(v.ArgoCDURL, v.AppNamespace, v.App) }

// AppURL links to an application in Argo CD's UI.
func AppURL(base, ns, name string) string {
	return strings.TrimRight(base, "/") + "/applications/" + ns + "/" + name
}

// Summary is the body's first line.
func (v PRView) Summary() string { return PRTitle(v) }

// PRTitle says what the pull request does, in under 100 characters where
// it can, on one line with invisible characters shown and links broken
// (see unlinked): mail and other readers show a title as plain text.
func PRTitle(v PRView) string {
	paths := make([]string, 0, len(v.Findings))
	for _, f := range v.Findings {
		paths = append(paths, f.Path)
	}
	what := strings.Join(paths, ", ")
	if len(paths) > 2 {
		what = fmt.Sprintf("%s and %d more", paths[0], len(paths)-1)
	}
	action := v.Action
	if action == "" {
		action = "Fix drift of {resource}"
	}
	t := strings.NewReplacer("{paths}", what, "{resource}", v.Resource.String()).Replace(action)
	return unlinked(fmt.Sprintf("driftfix(%s): %s", v.App, t))
}

// PRBody renders the pull request description in Markdown.
func PRBody(v PRView) (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, "pr_body.md.tmpl", v); err != nil {
		return "", fmt.Errorf("render pull request body: %w", err)
	}
	return b.String(), nil
}
