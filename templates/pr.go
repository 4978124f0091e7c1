// Package templates renders what driftfix writes for people: pull request
// titles and bodies, checks and the Drift Dashboard, and holds the neutral
// digest view each notifier lays out in its own format (bot/slack builds
// Slack's). It renders view structs only; what a view says is decided
// elsewhere.
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

var tmpl = template.Must(template.New("").Funcs(template.FuncMap{"code": Code, "text": Text, "htmltext": HTMLText, "shown": shown,
	"commands": func(on int) string { return CommandsSection(CommandsFor(on)) }}).ParseFS(files, "*.tmpl"))

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

// MaxPRBody is the most bytes PRBody writes: GitHub's limit on a body
// (MaxIssueBody characters; bytes are never fewer) less 1 KiB for the
// markers its caller appends (the fix's key and application).
const MaxPRBody = MaxIssueBody - 1024

// prBody is what the body template renders: the view, with the diffs and
// findings that fit.
type prBody struct {
	PRView
	Diffs []diffShown
	// MoreFindings is how many findings were left out to fit.
	MoreFindings int
}

// diffShown is a file's diff as the body shows it: its first lines, and
// how many more were left out to fit.
type diffShown struct {
	FileDiff
	Omitted int
}

// PRBody renders the pull request description in Markdown, within
// MaxPRBody: when the whole is longer, the diffs are cut after the lines
// that fit, each saying how many lines are left out and that the full
// change is in the pull request's branch; if that is not enough, the last
// findings are counted instead of listed. Nothing after the diffs (the
// verification, risk, undo and the fingerprint marker) is ever cut.
func PRBody(v PRView) (string, error) {
	b := prBody{PRView: v}
	for _, d := range v.Diffs {
		b.Diffs = append(b.Diffs, diffShown{FileDiff: d})
	}
	body, err := b.render()
	if err != nil || len(body) <= MaxPRBody {
		return body, err
	}
	// the body without any diff line (each diff's notice counting its
	// every line) leaves the room the diffs' lines may take, in order
	bare := b
	bare.Diffs = nil
	lines := make([][]string, len(v.Diffs))
	for i, d := range v.Diffs {
		lines[i] = strings.SplitAfter(d.Diff, "\n")
		if lines[i][len(lines[i])-1] == "" {
			lines[i] = lines[i][:len(lines[i])-1]
		}
		bare.Diffs = append(bare.Diffs, diffShown{FileDiff: FileDiff{File: d.File}, Omitted: len(lines[i])})
	}
	without, err := bare.render()
	if err != nil {
		return "", err
	}
	room := MaxPRBody - len(without)
	b.Diffs = nil
	for i, d := range v.Diffs {
		kept := 0
		// a diff with a line shown brings its code block: two fences, "diff", two line breaks
		if block := 2*len(fence(d.Diff)) + len("diff\n\n"); len(lines[i]) > 0 && block+len(shown(lines[i][0])) <= room {
			room -= block
			for kept < len(lines[i]) && len(shown(lines[i][kept])) <= room {
				room -= len(shown(lines[i][kept]))
				kept++
			}
		}
		if kept < len(lines[i]) {
			room = 0 // the diffs stay in order: nothing after a cut one
		}
		b.Diffs = append(b.Diffs, diffShown{FileDiff: FileDiff{File: d.File, Diff: strings.Join(lines[i][:kept], "")}, Omitted: len(lines[i]) - kept})
	}
	if body, err = b.render(); err != nil || len(body) <= MaxPRBody {
		return body, err
	}
	// still too long: the most findings that fit, found by bisection
	lo, hi := 0, len(v.Findings) // lo findings fit or none does
	for lo < hi {
		mid := (lo + hi + 1) / 2
		b.PRView.Findings, b.MoreFindings = v.Findings[:mid], len(v.Findings)-mid
		if body, err = b.render(); err != nil {
			return "", err
		}
		if len(body) <= MaxPRBody {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	b.PRView.Findings, b.MoreFindings = v.Findings[:lo], len(v.Findings)-lo
	return b.render()
}

func (b prBody) render() (string, error) {
	var out bytes.Buffer
	if err := tmpl.ExecuteTemplate(&out, "pr_body.md.tmpl", b); err != nil {
		return "", fmt.Errorf("render pull request body: %w", err)
	}
	return out.String(), nil
}
