// Package config reads the policy file platform leads tune: the schedule, the
// Argo CD instances, which causes are remediated and how, PR limits, labels and
// reviewers, extra sensitive paths, quiet hours and Slack routing, globally and
// per project, application pattern or namespace. Secrets are never in it: only
// the files or environment variables that hold them.
package config

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
)

// Config is the whole policy file.
type Config struct {
	Schedule string        // cron expression (robfig/cron syntax), default "*/15 * * * *"
	Jitter   time.Duration // random delay before each cycle, default 30s
	// FullCycleEvery makes every this many cycles diagnose every stuck
	// application again, even those whose state has not changed since
	// their last diagnosis (default 12; 1: every cycle).
	FullCycleEvery int
	DryRun         bool   // print PRs and digests, write nothing
	StateFile      string // SQLite state, default /var/lib/driftfix/state.db
	ArgoCD         []ArgoCD
	GitHub         GitHub
	Slack          Slack
	Policy         Policy         // the global policy
	Overrides      []Override     // later matching overrides win, field by field
	PlatformRepos  []PlatformRepo // repositories holding Applications and argocd-cm (platform.go)
	Unlisted       Unlisted       // when PRs of applications no longer listed are closed
	Limits         Limits         // what one repository's fetch and renders may cost
	Audit          Audit          // what is kept of the API server's audit events (audit.go)
	// RepoCredentials name, by file, how repositories off the GitHub App's
	// host (or any, by URL prefix) are read (repocreds.go).
	RepoCredentials []RepoCredential
	// PolicyRepo is where this file is kept in Git, for the pull requests
	// that change it (policyrepo.go).
	PolicyRepo PolicyRepo
	// Digest is the SHA-256 of the file Parse read: what was kept under
	// one config is not reused under another (memo.Memo).
	Digest [32]byte
}

// DefaultFullCycleEvery is how often, in cycles, a cycle diagnoses every
// stuck application again when the config does not say (fullCycleEvery).
const DefaultFullCycleEvery = 12

// ArgoCD is one Argo CD instance and the shard of applications it scans.
type ArgoCD struct {
	Name, Server        string
	TokenFile, TokenEnv string
	CAFile              string
	Insecure            bool
	Kubeconfig          string
	Shard               string // application name pattern (path.Match), empty for all
	Namespace           string // Argo CD's namespace, where argocd-cm lives (default argocd)
	// InsecurePlaintext allows an http:// server, which sends the API token
	// in clear text (default false: such a server is refused).
	InsecurePlaintext bool
	// DryRunEvidence asks the cluster, per differing resource, what a
	// server-side dry-run apply of its Git manifest would store; it needs
	// the patch verb on those kinds, so it is off unless set.
	DryRunEvidence bool
	DryRunBudget   int // dry-run applies per cycle (default 50)
}

// GitHub says how PRs are opened.
type GitHub struct {
	AppID          int64
	PrivateKeyFile string
	TokenFile      string // token mode for trying driftfix out
	TokenEnv       string
	BaseURL        string // GitHub Enterprise API URL
}

// Slack says where digests go.
type Slack struct {
	TokenFile, TokenEnv string
	Channel             string // default channel
	APIURL              string // a Slack-compatible Web API (a proxy); default Slack's
	// People maps Slack user IDs to GitHub logins: a person so mapped may
	// press the digest's buttons for an application when the login has
	// write access to the application's repository.
	People map[string]string
	// ActorGroups are Slack user group IDs whose members may press the
	// digest's buttons whatever their GitHub access.
	ActorGroups []string
}

// Policy is what a platform lead tunes, globally or for matching applications.
type Policy struct {
	// Fixes maps a cause to the fix kinds allowed for it, in order; a cause
	// that is not listed keeps driftfix's choice, an empty list means report only.
	Fixes          map[drift.Cause][]drift.FixKind
	DryRun         *bool
	StuckAfter     time.Duration // zero means at once; Defaults gives 10m
	PRsPerCycle    int
	OpenPRs        int
	PRsPerRepo     int
	Draft          *bool
	Labels         []string
	Reviewers      []string
	Assignees      []string
	BranchPrefix   string
	SensitivePaths []drift.SensitivePath
	// Writers are the platform's own field managers: controllers with the
	// paths they legitimately own, and people.
	Writers      []drift.Writer
	QuietHours   *QuietHours
	SlackChannel string
	// MinStuckFor and MinCycles hold a fix's first pull request back until
	// its application has been OutOfSync that long since its last sync and
	// driftfix has proposed the fix in that many cycles, so a passing
	// rollout never gets one (defaults 1h and 1; MinStuckFor nil: unset).
	MinStuckFor *time.Duration
	MinCycles   int
	// ManualChanges is report (the default: a person reverts or commits a
	// change made by hand) or adopt (a draft pull request labelled
	// driftfix/adopt writes the live value into Git).
	ManualChanges string

	stuckAfterSet bool // the file sets stuckAfter (0s included)
	// Dashboard is the Drift Dashboard issue of the application's repository.
	Dashboard Dashboard
	// Fights tells when two writers fight over a field.
	Fights Fights
	// IgnoreRules is the ignore-rule inventory's policy (ignorerules.go);
	// only the global policy sets it.
	IgnoreRules IgnoreRules
	// TitleStyle is how pull request titles and commit subjects are
	// written ("": auto, see Style).
	TitleStyle TitleStyle
	// SignOff adds a Signed-off-by trailer to every commit (nil: not set here).
	SignOff *bool
	// RepoFile is what repositories' own files may decide (repofile.go);
	// only the global policy sets it.
	RepoFile RepoFileRules
}

// QuietHours is a daily window in which no PR is opened and no digest posted.
type QuietHours struct {
	From, To time.Duration // since midnight
	Location *time.Location
}

// Match selects applications for an override; empty fields match anything.
type Match struct {
	Project, App, Namespace string // App and Namespace are path.Match patterns
}

// Override is a policy for the applications a match selects.
type Override struct {
	Match  Match
	Policy Policy
}

// Error is one problem in the file, with the key and the line it is on.
type Error struct {
	Key  string
	Line int
	Msg  string
}

func (e Error) Error() string { return fmt.Sprintf("line %d: %s: %s", e.Line, e.Key, e.Msg) }

// Errors is every problem found; a file with any is not used.
type Errors []Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Defaults is the policy used where the file says nothing.
func Defaults() Policy {
	hour := time.Hour
	return Policy{StuckAfter: 10 * time.Minute, PRsPerCycle: 5, OpenPRs: 20, PRsPerRepo: 3, BranchPrefix: "driftfix", Labels: []string{"driftfix"},
		MinStuckFor: &hour, MinCycles: 1}
}

// Cooldown is how long an application must have been OutOfSync and in how
// many cycles a fix must have been proposed before its first pull request.
func (p Policy) Cooldown() (time.Duration, int) {
	d, n := time.Hour, max(p.MinCycles, 1)
	if p.MinStuckFor != nil {
		d = *p.MinStuckFor
	}
	return d, n
}

// Load reads and validates a policy file.
func Load(file string) (*Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", file, err)
	}
	return c, nil
}

// Parse validates a policy file and returns it with defaults filled in. Every
// problem is reported, each with its key and line.
func Parse(b []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&root); err != nil {
		return nil, Errors{{Key: "(file)", Line: 1, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	p := &parser{}
	c := &Config{Schedule: "*/15 * * * *", Jitter: 30 * time.Second, FullCycleEvery: DefaultFullCycleEvery, StateFile: "/var/lib/driftfix/state.db", Policy: Defaults(), Unlisted: DefaultUnlisted(),
		Digest: sha256.Sum256(b)}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	p.mapping(doc, "", map[string]func(string, *yaml.Node){
		"schedule":       func(k string, n *yaml.Node) { c.Schedule = p.schedule(k, n) },
		"jitter":         func(k string, n *yaml.Node) { c.Jitter = p.duration(k, n) },
		"fullCycleEvery": func(k string, n *yaml.Node) { c.FullCycleEvery = p.positive(k, n) },
		"dryRun":         func(k string, n *yaml.Node) { c.DryRun = p.boolean(k, n) },
		"stateFile":      func(k string, n *yaml.Node) { c.StateFile = p.str(k, n) },
		"platformRepos":  func(k string, n *yaml.Node) { c.PlatformRepos = p.platformRepos(k, n) },
		"policyRepo":     func(k string, n *yaml.Node) { c.PolicyRepo = p.policyRepo(k, n) },
		"argocd": func(k string, n *yaml.Node) {
			p.list(k, n, func(k string, n *yaml.Node) { c.ArgoCD = append(c.ArgoCD, p.argocd(k, n)) })
		},
		"github": func(k string, n *yaml.Node) { c.GitHub = p.github(k, n) },
		"slack":  func(k string, n *yaml.Node) { c.Slack = p.slack(k, n) },
		"policy": func(k string, n *yaml.Node) { p.policy(k, n, &c.Policy) },
		"overrides": func(k string, n *yaml.Node) {
			p.list(k, n, func(k string, n *yaml.Node) { c.Overrides = append(c.Overrides, p.override(k, n)) })
		},
		"unlisted": func(k string, n *yaml.Node) { c.Unlisted = p.unlisted(k, n) },
		"limits":   func(k string, n *yaml.Node) { c.Limits = p.limits(k, n) },
		"audit":    func(k string, n *yaml.Node) { c.Audit = p.audit(k, n) },
		"repoCredentials": func(k string, n *yaml.Node) {
			p.list(k, n, func(k string, n *yaml.Node) { c.RepoCredentials = append(c.RepoCredentials, p.repoCredential(k, n)) })
		},
	})
	if len(c.ArgoCD) == 0 {
		p.fail("argocd", doc.Line, "at least one Argo CD instance is required")
	}
	names := map[string]bool{}
	for _, a := range c.ArgoCD {
		if names[a.Name] {
			p.fail("argocd", doc.Line, fmt.Sprintf("instance name %q is used twice", a.Name))
		}
		names[a.Name] = true
	}
	p.uniquePrefixes(c.RepoCredentials)
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
		return nil, p.errs
	}
	return c, nil
}

// For returns the policy of one application: the global policy with every
// matching override applied in order.
func (c *Config) For(project, app, namespace string) Policy {
	pol := c.Policy
	pol.Fixes = copyFixes(c.Policy.Fixes)
	for _, o := range c.Overrides {
		if !o.Match.matches(project, app, namespace) {
			continue
		}
		pol.merge(o.Policy)
	}
	if pol.DryRun == nil && c.DryRun {
		t := true
		pol.DryRun = &t
	}
	return pol
}

func (m Match) matches(project, app, namespace string) bool {
	if m.Project != "" && m.Project != project {
		return false
	}
	for _, pv := range [][2]string{{m.App, app}, {m.Namespace, namespace}} {
		if pv[0] == "" {
			continue
		}
		if ok, _ := path.Match(pv[0], pv[1]); !ok {
			return false
		}
	}
	return true
}

func (p *Policy) merge(o Policy) {
	for cause, kinds := range o.Fixes {
		if p.Fixes == nil {
			p.Fixes = map[drift.Cause][]drift.FixKind{}
		}
		p.Fixes[cause] = kinds
	}
	if o.DryRun != nil {
		p.DryRun = o.DryRun
	}
	if o.Draft != nil {
		p.Draft = o.Draft
	}
	if o.stuckAfterSet {
		p.StuckAfter, p.stuckAfterSet = o.StuckAfter, true
	}
	if o.MinStuckFor != nil {
		p.MinStuckFor = o.MinStuckFor
	}
	if o.ManualChanges != "" {
		p.ManualChanges = o.ManualChanges
	}
	if o.TitleStyle != "" {
		p.TitleStyle = o.TitleStyle
	}
	if o.SignOff != nil {
		p.SignOff = o.SignOff
	}
	for _, f := range []struct {
		dst *int
		v   int
	}{{&p.PRsPerCycle, o.PRsPerCycle}, {&p.OpenPRs, o.OpenPRs}, {&p.PRsPerRepo, o.PRsPerRepo}, {&p.MinCycles, o.MinCycles}} {
		if f.v != 0 {
			*f.dst = f.v
		}
	}
	for _, f := range []struct {
		dst *[]string
		v   []string
	}{{&p.Labels, o.Labels}, {&p.Reviewers, o.Reviewers}, {&p.Assignees, o.Assignees}} {
		if f.v != nil {
			*f.dst = f.v
		}
	}
	// Extra sensitive paths only ever add: an override never weakens the policy.
	p.SensitivePaths = append(append([]drift.SensitivePath{}, p.SensitivePaths...), o.SensitivePaths...)
	// An override's writers come first, then the policy's.
	p.Writers = append(append([]drift.Writer{}, o.Writers...), p.Writers...)
	if o.BranchPrefix != "" {
		p.BranchPrefix = o.BranchPrefix
	}
	if o.QuietHours != nil {
		p.QuietHours = o.QuietHours
	}
	if o.SlackChannel != "" {
		p.SlackChannel = o.SlackChannel
	}
	p.Dashboard.merge(o.Dashboard)
	p.Fights.merge(o.Fights)
}

func copyFixes(m map[drift.Cause][]drift.FixKind) map[drift.Cause][]drift.FixKind {
	out := make(map[drift.Cause][]drift.FixKind, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Sensitivity returns the safety model with this policy's extra sensitive
// paths (read and checked when the file was read).
func (p Policy) Sensitivity() drift.Sensitivity {
	return drift.Sensitivity{Writers: p.Writers, Extra: append([]drift.SensitivePath(nil), p.SensitivePaths...)}
}

// Quiet reports whether t falls in the quiet hours.
func (p Policy) Quiet(t time.Time) bool {
	q := p.QuietHours
	if q == nil {
		return false
	}
	lt := t.In(q.Location)
	since := time.Duration(lt.Hour())*time.Hour + time.Duration(lt.Minute())*time.Minute
	if q.From <= q.To {
		return since >= q.From && since < q.To
	}
	return since >= q.From || since < q.To // over midnight
}

func matchCheck(pattern string) (bool, error) { return path.Match(pattern, "") }
