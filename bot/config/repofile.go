package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// RepoFilePath is where a repository keeps its own driftfix file, read from
// its default branch.
const RepoFilePath = ".github/driftfix.yaml"

// maxRepoFile is the largest repository file read: a few keys fit in far less.
const maxRepoFile = 64 << 10

// TitleStyle is how pull request titles and commit subjects are written.
type TitleStyle string

// The title styles: auto follows the repository's recent history.
const (
	TitleAuto         TitleStyle = "auto"         // conventional when most recent commits are
	TitleConventional TitleStyle = "conventional" // fix(app): …, chore(driftfix): …
	TitlePlain        TitleStyle = "plain"        // driftfix(app): …
)

// RepoKeys are the keys a repository's own file may ever set, in the order
// the documentation lists them; the central policy's repoFile.allow picks
// among them.
var RepoKeys = []string{"labels", "reviewers", "quietHours", "titleStyle", "signOff", "fixes", "predict"}

// centralOnly says, for keys of the central policy a repository file might
// try, why a repository cannot decide them.
var centralOnly = map[string]string{
	"schedule":       "the schedule is the bot's, for every repository; hold pull requests back with quietHours",
	"dryRun":         "dry runs are decided in the central policy",
	"draft":          "drafts are decided in the central policy",
	"assignees":      "assignees are decided in the central policy; a repository adds reviewers",
	"branchPrefix":   "branch names are decided in the central policy",
	"sensitivePaths": "the safety model is decided in the central policy",
	"writers":        "which field managers own which fields is decided in the central policy",
	"manualChanges":  "adopting changes made by hand is decided in the central policy",
	"stuckAfter":     "when an application counts as stuck is decided in the central policy",
	"minStuckFor":    "the cooldown is decided in the central policy",
	"minCycles":      "the cooldown is decided in the central policy",
	"prsPerCycle":    "pull request limits are decided in the central policy",
	"openPRs":        "pull request limits are decided in the central policy",
	"prsPerRepo":     "pull request limits are decided in the central policy",
	"slackChannel":   "digest routing is decided in the central policy",
	"dashboard":      "the Drift Dashboard is decided in the central policy",
	"fights":         "fights are decided in the central policy",
	"ignoreRules":    "the ignore-rule inventory is decided in the central policy",
	"policy":         "a repository's file holds its keys at the top level, not under policy:",
}

// RepoFile is a repository's own .github/driftfix.yaml: what its owners
// decide for the pull requests driftfix opens there. A nil field is not set.
type RepoFile struct {
	Labels     []string    // added to the central policy's labels
	Reviewers  []string    // added to the central policy's reviewers
	QuietHours *QuietHours // a quiet window besides the central one
	TitleStyle TitleStyle  // "": not set
	SignOff    *bool       // true adds a Signed-off-by trailer to each commit
	Fixes      *bool       // false: no fix pull requests in this repository
	Predict    *bool       // false: no predict check on its pull requests

	lines map[string]int // the line of each key the file sets
}

// RepoFileRules is the central policy's say over repositories' own files
// (policy.repoFile, global policy only).
type RepoFileRules struct {
	// Allow lists the RepoKeys a repository may set; nil: every one of
	// them, empty: none (the file is not read).
	Allow []string
}

// Allows reports whether a repository's file may set key.
func (r RepoFileRules) Allows(key string) bool {
	return r.Allow == nil || slices.Contains(r.Allow, key)
}

// Reads reports whether repositories' files are read at all.
func (r RepoFileRules) Reads() bool { return r.Allow == nil || len(r.Allow) > 0 }

// RepoPolicy is what driftfix does in one repository: the central policy,
// with what the repository's own file may decide under it.
type RepoPolicy struct {
	Repo      string
	Labels    []string // the central labels, then the repository's
	Reviewers []string // the central reviewers, then the repository's
	// TitleStyle is auto, conventional or plain; auto is resolved against
	// the repository's history by whoever opens the pull request.
	TitleStyle TitleStyle
	SignOff    bool // every commit carries a Signed-off-by trailer
	Fixes      bool // fix pull requests may be opened in the repository
	Predict    bool // the predict check runs on the repository's pull requests
	// Own says the repository's file was used.
	Own bool

	quiet []*QuietHours
}

// Quiet reports whether t falls in the central quiet hours or the
// repository's own.
func (r RepoPolicy) Quiet(t time.Time) bool {
	for _, q := range r.quiet {
		if (Policy{QuietHours: q}).Quiet(t) {
			return true
		}
	}
	return false
}

// Style is the title style the central policy sets (auto when it sets none).
func (p Policy) Style() TitleStyle {
	if p.TitleStyle == "" {
		return TitleAuto
	}
	return p.TitleStyle
}

// ForRepo is the policy of one repository: p (the central policy, global or
// of an application there) with own, the repository's file, under it. own
// may be nil (no file, or a broken one); a file that sets a key p does not
// allow is not used at all (CheckRepoFile names the keys). Labels and
// reviewers only add, quiet hours only add a window, and sign-off set
// centrally stays on.
func (p Policy) ForRepo(repo string, own *RepoFile) RepoPolicy {
	rp := RepoPolicy{Repo: repo, Labels: slices.Clone(p.Labels), Reviewers: slices.Clone(p.Reviewers), TitleStyle: p.Style(),
		SignOff: p.SignOff != nil && *p.SignOff, Fixes: true, Predict: true}
	if p.QuietHours != nil {
		rp.quiet = append(rp.quiet, p.QuietHours)
	}
	if own == nil || !p.RepoFile.Reads() || p.CheckRepoFile(own) != nil {
		return rp
	}
	rp.Own = true
	rp.Labels = union(rp.Labels, own.Labels)
	rp.Reviewers = union(rp.Reviewers, own.Reviewers)
	if own.QuietHours != nil {
		rp.quiet = append(rp.quiet, own.QuietHours)
	}
	if own.TitleStyle != "" {
		rp.TitleStyle = own.TitleStyle
	}
	if own.SignOff != nil && *own.SignOff {
		rp.SignOff = true
	}
	if own.Fixes != nil {
		rp.Fixes = *own.Fixes
	}
	if own.Predict != nil {
		rp.Predict = *own.Predict
	}
	return rp
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// CheckRepoFile names, with their lines, the keys own sets that the central
// policy does not let repositories decide.
func (p Policy) CheckRepoFile(own *RepoFile) error {
	if own == nil {
		return nil
	}
	var errs Errors
	for key, line := range own.lines {
		if !p.RepoFile.Allows(key) {
			allowed := "none"
			if len(p.RepoFile.Allow) > 0 {
				allowed = strings.Join(p.RepoFile.Allow, ", ")
			}
			errs = append(errs, Error{Key: key, Line: line, Msg: "the central policy does not let repositories set it (policy.repoFile.allow: " + allowed + ")"})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return errs
}

// ReadRepoFile parses a repository's file and checks it against the central
// policy: the file driftfix uses for the repository, or every problem with
// its key and line (then the central policy alone applies).
func (p Policy) ReadRepoFile(b []byte) (*RepoFile, error) {
	own, err := ParseRepoFile(b)
	if err != nil {
		return nil, err
	}
	if err := p.CheckRepoFile(own); err != nil {
		return nil, err
	}
	return own, nil
}

// ParseRepoFile validates a repository's own file, reporting every problem
// with its key and line: a key no repository may set is refused with why.
// An empty file sets nothing.
func ParseRepoFile(b []byte) (*RepoFile, error) {
	if len(b) > maxRepoFile {
		return nil, Errors{{Key: "(file)", Line: 1, Msg: fmt.Sprintf("is %d bytes; a repository's driftfix file may hold at most %d", len(b), maxRepoFile)}}
	}
	own := &RepoFile{lines: map[string]int{}}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) { // empty, or comments only
			return own, nil
		}
		return nil, Errors{{Key: "(file)", Line: 1, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	// One document: keys in a second one would be read by one YAML tool
	// and not another, so the file would say two things.
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		line := more.Line
		if err != nil || line < 1 {
			line = 1
		}
		return nil, Errors{{Key: "(file)", Line: line, Msg: "starts a second YAML document: a repository's driftfix file is one document (remove the --- and put every key in one mapping)"}}
	}
	p := &parser{}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	set := func(k string, v *yaml.Node) { own.lines[k] = v.Line }
	fields := map[string]func(string, *yaml.Node){
		"labels":    func(k string, v *yaml.Node) { set(k, v); own.Labels = p.names(k, v) },
		"reviewers": func(k string, v *yaml.Node) { set(k, v); own.Reviewers = p.names(k, v) },
		"quietHours": func(k string, v *yaml.Node) {
			set(k, v)
			own.QuietHours = p.quietHours(k, v)
		},
		"titleStyle": func(k string, v *yaml.Node) { set(k, v); own.TitleStyle = p.titleStyle(k, v) },
		"signOff":    func(k string, v *yaml.Node) { set(k, v); own.SignOff = p.boolPtr(k, v) },
		"fixes": func(k string, v *yaml.Node) {
			set(k, v)
			if v.Kind == yaml.MappingNode {
				p.fail(k, v.Line, "a repository may only turn fix pull requests off (fixes: false); which fix kinds each cause gets is the central policy's policy.fixes")
				return
			}
			own.Fixes = p.boolPtr(k, v)
		},
		"predict": func(k string, v *yaml.Node) { set(k, v); own.Predict = p.boolPtr(k, v) },
	}
	for key, why := range centralOnly {
		fields[key] = func(k string, v *yaml.Node) {
			p.fail(k, v.Line, "a repository cannot decide it: "+why)
		}
	}
	if doc.Kind != yaml.MappingNode && !(doc.Kind == yaml.ScalarNode && doc.Tag == "!!null") {
		p.fail("(file)", doc.Line, "must be a mapping of keys such as labels: and titleStyle:")
	} else {
		p.repoMapping(doc, fields)
	}
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
		return nil, p.errs
	}
	return own, nil
}

// repoMapping walks the top-level mapping of a repository file like mapping,
// but hands a refused key its key node, so the line reported is the key's
// own, and lists only RepoKeys as known.
func (p *parser) repoMapping(n *yaml.Node, fields map[string]func(string, *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if name == "" {
			name = `""`
		}
		if seen[name] {
			p.fail(name, k.Line, "appears twice")
			continue
		}
		seen[name] = true
		if _, refused := centralOnly[name]; refused {
			fields[name](name, k)
			continue
		}
		h, ok := fields[name]
		if !ok {
			p.fail(name, k.Line, "unknown key (a repository may set: "+strings.Join(RepoKeys, ", ")+")")
			continue
		}
		h(name, v)
	}
}

// reservedLabel is the label driftfix's pull requests carry; it and every
// label under "driftfix/" (driftfix/ignore stops a fix for good) are
// driftfix's own.
const reservedLabel = "driftfix"

// ReservedLabel reports whether a label is one of driftfix's own: the label
// its pull requests carry or one that steers it (driftfix/ignore), as
// GitHub compares labels (case-insensitive, surrounding spaces dropped).
func ReservedLabel(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	return n == reservedLabel || strings.HasPrefix(n, reservedLabel+"/")
}

var loginRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9._-]{1,100})?$`)

// maxNames bounds a repository file's labels and reviewers: GitHub
// requests at most 15 reviewers at once, and a pull request needs no more
// labels than that.
const maxNames = 15

// names reads a list of logins or labels: one line each, none empty, at
// most maxNames.
func (p *parser) names(key string, n *yaml.Node) []string {
	out := []string{}
	if n.Kind == yaml.SequenceNode && len(n.Content) > maxNames {
		p.fail(key, n.Line, fmt.Sprintf("lists %d; a repository's file may list at most %d", len(n.Content), maxNames))
		return out
	}
	p.list(key, n, func(k string, c *yaml.Node) {
		s := p.str(k, c)
		switch {
		case c.Kind != yaml.ScalarNode:
		case strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\r\n"):
			p.fail(k, c.Line, "must be one non-empty line")
		case len(s) > 100:
			p.fail(k, c.Line, fmt.Sprintf("is %d characters long; GitHub takes at most 100", len(s)))
		case strings.HasSuffix(key, "reviewers") && !loginRe.MatchString(s):
			p.fail(k, c.Line, fmt.Sprintf("%q is not a GitHub login or org/team", s))
		case strings.HasSuffix(key, "labels") && ReservedLabel(s):
			p.fail(k, c.Line, fmt.Sprintf("%q is one of driftfix's own labels (%s, and any label starting driftfix/): they mark and steer its pull requests, so a repository's file cannot add them", s, reservedLabel))
		default:
			out = append(out, s)
		}
	})
	return out
}

func (p *parser) titleStyle(key string, n *yaml.Node) TitleStyle {
	s := TitleStyle(p.str(key, n))
	switch s {
	case TitleAuto, TitleConventional, TitlePlain:
		return s
	}
	p.fail(key, n.Line, fmt.Sprintf("must be auto, conventional or plain, not %q", n.Value))
	return ""
}

func (p *parser) repoFileRules(key string, n *yaml.Node, global bool) RepoFileRules {
	var r RepoFileRules
	if !global {
		p.fail(key, n.Line, "is read from the global policy only: a repository's file serves every application in it")
		return r
	}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"allow": func(k string, v *yaml.Node) {
			r.Allow = []string{}
			p.list(k, v, func(k string, c *yaml.Node) {
				s := p.str(k, c)
				if c.Kind != yaml.ScalarNode {
					return
				}
				if !slices.Contains(RepoKeys, s) {
					p.fail(k, c.Line, fmt.Sprintf("%q is not a key a repository's file can set (%s)", s, strings.Join(RepoKeys, ", ")))
					return
				}
				r.Allow = append(r.Allow, s)
			})
		},
	})
	return r
}
