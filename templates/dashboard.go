package templates

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// MaxIssueBody is the longest issue body GitHub accepts, in characters. The
// dashboard is measured in bytes, never fewer than GitHub's count.
const MaxIssueBody = 65536

// DashboardView is everything one repository's Drift Dashboard says.
type DashboardView struct {
	// Marker is the hidden first line driftfix finds its issue by.
	Marker string
	Apps   []DashboardApp
	// Limit bounds the body in bytes (0: MaxIssueBody).
	Limit int
	// Ignores are the ignore rules the inventory flags that apply to the
	// repository's applications.
	Ignores []IgnoreLine
	// RunKey is the key of the "run again now" box ("" shows none);
	// RunAsked says it was ticked and the next cycle has not run yet.
	RunKey   string
	RunAsked bool
	// Writers are the field managers driftfix could not place as a
	// controller or a person, with what they wrote.
	Writers []DashboardWriter
	// PolicyFile names where a writers entry is proposed ("path in
	// owner/name"); "" when the policy names no policyRepo, and then the
	// writers are listed without boxes.
	PolicyFile string
	// RepoFile are the problems of the repository's own
	// .github/driftfix.yaml, one a line, when it is not used.
	RepoFile []string
}

// DashboardWriter is a field manager nothing placed: the boxes that place
// it, and what it wrote.
type DashboardWriter struct {
	Manager string // from the cluster: any text
	Key     string // the boxes' key
	// Fields are some of the differing fields it wrote; More counts the rest.
	Fields []DashboardFinding
	More   int
	// Proposed names the pull request that proposes its writers entry as
	// driftfix writes a reference (owner/name#number, shown as it is); ""
	// when none is open. Its boxes are not shown while one is.
	Proposed string
}

// DashboardApp is one application's section.
type DashboardApp struct {
	App, Namespace, Instance string
	ArgoCDURL                string
	Stuck                    bool
	Since                    time.Time // first seen stuck
	Causes                   []drift.Cause
	Note                     string // why it counts as stuck
	PRs                      []DashboardPR
	// StillDiffers are merged fix pull requests whose revision Argo CD
	// synced while the application stayed OutOfSync, with what differs.
	StillDiffers []DashboardMerged
	Waiting      []DashboardFix
	ForPeople    []DashboardFinding
	BroadIgnores []DashboardFinding
	Rejected     []DashboardRejection
	// Fights are two writers taking turns at its fields now.
	Fights []FightLine
	// Open renders the section expanded (set by Dashboard when all fits).
	Open bool
}

// AppURL links to the application in Argo CD's UI; its namespace and name
// are escaped as path segments, so they cannot end the link.
func (a DashboardApp) AppURL() string {
	seg := func(s string) string { return strings.ReplaceAll(url.PathEscape(s), "@", "%40") }
	return AppURL(a.ArgoCDURL, seg(a.Namespace), seg(a.App))
}

// DashboardPR is one open fix pull request.
type DashboardPR struct {
	Number     int
	Key, Title string
	// Check is the conclusion of the PR's driftfix/verify check run as the
	// check publisher reports it; "" renders "pending".
	Check        string
	RecheckAsked bool
}

// DashboardMerged is a merged fix pull request that did not end the drift.
type DashboardMerged struct {
	Number int
	Title  string
	// Revision is the merged revision Argo CD synced (short).
	Revision string
	// Findings are what still differs this cycle.
	Findings []DashboardFinding
}

// DashboardFix is a fix planned but not opened (held back, or over a limit).
type DashboardFix struct {
	Key, Title, Why string
	OpenNowAsked    bool
}

// DashboardFinding is a finding with its evidence.
type DashboardFinding struct {
	Resource drift.Ref
	Path     string
	Cause    drift.Cause
	Why      string
	Evidence []string
}

// DashboardRejection is a fix a person turned down.
type DashboardRejection struct {
	Key, Title, Reason string
	At                 time.Time
}

type dashboardHead struct {
	Marker                    string
	Apps                      []DashboardApp
	Stuck, OpenPRs, ForPeople int
	RunKey                    string
	RunAsked                  bool
	Writers                   []DashboardWriter
	PolicyFile                string
	RepoFile                  []string
}

// Dashboard renders the dashboard issue's body in Markdown, within the
// limit: every application's section whole and expanded when all fit;
// otherwise collapsed, and those that still do not fit listed by name
// only, with a line saying how many were shortened. No entry is ever cut.
func Dashboard(v DashboardView) (string, error) {
	limit := v.Limit
	if limit <= 0 {
		limit = MaxIssueBody
	}
	h := dashboardHead{Marker: v.Marker, Apps: v.Apps, RunKey: v.RunKey, RunAsked: v.RunAsked, Writers: v.Writers, PolicyFile: v.PolicyFile, RepoFile: v.RepoFile}
	for _, a := range v.Apps {
		if a.Stuck {
			h.Stuck++
		}
		h.OpenPRs += len(a.PRs)
		h.ForPeople += len(a.ForPeople)
	}
	head, err := render("dashboard_head", h)
	if err != nil {
		return "", err
	}
	head += dashboardIgnores(v.Ignores)
	sections := func(open bool) ([]string, error) {
		out := make([]string, len(v.Apps))
		for i, a := range v.Apps {
			a.Open = open
			s, err := render("dashboard_app", a)
			if err != nil {
				return nil, err
			}
			out[i] = "\n" + s
		}
		return out, nil
	}
	expanded, err := sections(true)
	if err != nil {
		return "", err
	}
	if body := head + strings.Join(expanded, ""); len(body) <= limit {
		return body, nil
	}
	collapsed, err := sections(false)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(head)
	n := len(collapsed)
	// The most the closing lines can take: the count line and an "and N more".
	reserve := len("\n"+shortenedLine(n, n)) + len(moreLine(n))
	whole := 0
	for whole < n && b.Len()+len(collapsed[whole])+reserve <= limit {
		b.WriteString(collapsed[whole])
		whole++
	}
	if whole == n {
		return b.String(), nil
	}
	b.WriteString("\n" + shortenedLine(n-whole, n))
	listed := whole
	for ; listed < n; listed++ {
		a := v.Apps[listed]
		line := fmt.Sprintf("- %s on %s\n", Code(a.Namespace+"/"+a.App), Text(a.Instance))
		if b.Len()+len(line)+len(moreLine(n)) > limit {
			break
		}
		b.WriteString(line)
	}
	if listed < n {
		b.WriteString(moreLine(n - listed))
	}
	return b.String(), nil
}

func shortenedLine(short, total int) string {
	return fmt.Sprintf("**%d of %d applications are shortened to their names** to keep this issue within GitHub's limit of %d characters; the digest and `driftfix scan` show them whole.\n\n", short, total, MaxIssueBody)
}

func moreLine(n int) string { return fmt.Sprintf("- and %d more applications\n", n) }

func render(name string, v any) (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, v); err != nil {
		return "", fmt.Errorf("render the dashboard: %w", err)
	}
	return b.String(), nil
}

// Tick is a ticked box of the dashboard: an action on a fix (its key), on
// a writer (the key of its manager), or on the whole dashboard.
type Tick struct{ Action, Key string }

// The actions of the boxes that are not a fix's state.Action.
const (
	// ActionUnreject proposes a rejected fix again.
	ActionUnreject = "unreject"
	// ActionRunNow has the next cycle diagnose the dashboard's applications at once.
	ActionRunNow = "run-now"
	// ActionController and ActionPerson place a writer in the policy.
	ActionController = "writer-controller"
	ActionPerson     = "writer-person"
)

// boxWords are the words each action's box says: a ticked box counts only
// when its words say its marker's action.
var boxWords = map[string]*regexp.Regexp{
	"recheck":        regexp.MustCompile(`^recheck$`),
	"stop":           regexp.MustCompile(`^stop proposing this fix(?: and close #[0-9]+)?$`),
	"open-now":       regexp.MustCompile(`^open the fix PR now$`),
	ActionUnreject:   regexp.MustCompile(`^propose this fix again$`),
	ActionRunNow:     regexp.MustCompile(`^run again now$`),
	ActionController: regexp.MustCompile(`^a controller$`),
	ActionPerson:     regexp.MustCompile(`^a person$`),
}

// tickLine is a dashboard box exactly as the template writes it; a line
// holding anything else (a value from the cluster) is not a box.
var tickLine = regexp.MustCompile(`^ {0,4}- \[([ xX])\] ([a-zA-Z #0-9]+) <!-- driftfix:do=([a-z-]+) key=([0-9a-f]+) -->$`)

// Ticks returns the ticked boxes of a dashboard body, in order, each once.
func Ticks(body string) []Tick {
	var out []Tick
	seen := map[Tick]bool{}
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		m := tickLine.FindStringSubmatch(line)
		if m == nil || m[1] == " " {
			continue
		}
		if words, ok := boxWords[m[3]]; !ok || !words.MatchString(m[2]) {
			continue // the words say another action than the marker, or none
		}
		t := Tick{Action: m[3], Key: m[4]}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
