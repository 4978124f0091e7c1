package config

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
	"github.com/driftfix/driftfix/remediations"
)

type parser struct{ errs Errors }

// acceptedKeys, set only by TestSchemaMatchesParser, records every key each
// mapping the parser reads accepts (its handlers' names, list indexes as
// []), whether or not the file has it: what Schema is held to.
var acceptedKeys map[string]bool

func (p *parser) fail(key string, line int, msg string) {
	p.errs = append(p.errs, Error{Key: key, Line: line, Msg: msg})
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// secretKeys may never hold a value in the file.
var secretKeys = map[string]string{"token": "tokenFile or tokenEnv", "privateKey": "privateKeyFile", "password": "a file or environment variable", "apiKey": "a file or environment variable", "secret": "a file or environment variable"}

// mapping walks a mapping, calling the handler of each known key and
// reporting unknown and repeated keys.
func (p *parser) mapping(n *yaml.Node, at string, fields map[string]func(string, *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		if !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			p.fail(orRoot(at), n.Line, "must be a mapping")
		}
		return
	}
	if acceptedKeys != nil {
		for name := range fields {
			acceptedKeys[listIndex.ReplaceAllString(join(at, name), "[]")] = true
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if name == "" {
			name = `""`
		}
		key := join(at, name)
		if seen[k.Value] {
			p.fail(key, k.Line, "appears twice")
			continue
		}
		seen[k.Value] = true
		if use, ok := secretKeys[k.Value]; ok {
			p.fail(key, k.Line, "secrets are never written in the config; use "+use)
			continue
		}
		h, ok := fields[k.Value]
		if !ok {
			names := make([]string, 0, len(fields))
			for name := range fields {
				names = append(names, name)
			}
			sort.Strings(names)
			p.fail(key, k.Line, fmt.Sprintf("unknown key (known: %s)", strings.Join(names, ", ")))
			continue
		}
		h(key, v)
	}
}

var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

func orRoot(at string) string {
	if at == "" {
		return "(file)"
	}
	return at
}

func (p *parser) list(key string, n *yaml.Node, item func(string, *yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		p.fail(key, n.Line, "must be a list")
		return
	}
	for i, c := range n.Content {
		item(fmt.Sprintf("%s[%d]", key, i), c)
	}
}

func (p *parser) str(key string, n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!map" || n.Tag == "!!seq" {
		p.fail(key, n.Line, "must be a string")
		return ""
	}
	return n.Value
}

func (p *parser) strings(key string, n *yaml.Node) []string {
	out := []string{}
	p.list(key, n, func(k string, c *yaml.Node) { out = append(out, p.str(k, c)) })
	return out
}

func (p *parser) boolean(key string, n *yaml.Node) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		p.fail(key, n.Line, fmt.Sprintf("must be true or false, not %q", n.Value))
	}
	return b
}

func (p *parser) boolPtr(key string, n *yaml.Node) *bool {
	b := p.boolean(key, n)
	return &b
}

func (p *parser) positive(key string, n *yaml.Node) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v <= 0 {
		p.fail(key, n.Line, fmt.Sprintf("must be a whole number above 0, not %q", n.Value))
	}
	return v
}

func (p *parser) duration(key string, n *yaml.Node) time.Duration {
	d, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || d < 0 {
		p.fail(key, n.Line, fmt.Sprintf("must be a duration such as 10m or 1h30m, not %q", n.Value))
	}
	return d
}

var cronField = regexp.MustCompile(`^[0-9*/,\-]+$`)

// schedule checks a standard five-field cron expression or @every/@hourly forms.
func (p *parser) schedule(key string, n *yaml.Node) string {
	s := strings.TrimSpace(p.str(key, n))
	switch {
	case strings.HasPrefix(s, "@every "):
		if d, err := time.ParseDuration(strings.TrimPrefix(s, "@every ")); err != nil || d < time.Minute {
			p.fail(key, n.Line, "@every needs a duration of at least 1m")
		}
	case s == "@hourly" || s == "@daily" || s == "@weekly":
	default:
		f := strings.Fields(s)
		ok := len(f) == 5
		for _, x := range f {
			ok = ok && cronField.MatchString(x)
		}
		if !ok {
			p.fail(key, n.Line, fmt.Sprintf("%q is not a cron schedule (five fields, e.g. \"*/15 * * * *\", or @every 15m)", s))
		} else if _, err := cron.ParseStandard(s); err != nil {
			p.fail(key, n.Line, fmt.Sprintf("%q is not a cron schedule: %v", s, err))
		}
	}
	return s
}

func (p *parser) url(key string, n *yaml.Node) string {
	s := p.str(key, n)
	if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		p.fail(key, n.Line, fmt.Sprintf("must be an http(s) URL, not %q", s))
	}
	return s
}

func (p *parser) argocd(key string, n *yaml.Node) ArgoCD {
	var a ArgoCD
	fields := map[string]func(string, *yaml.Node){
		"name":       func(k string, v *yaml.Node) { a.Name = p.str(k, v) },
		"server":     func(k string, v *yaml.Node) { a.Server = p.url(k, v) },
		"tokenFile":  func(k string, v *yaml.Node) { a.TokenFile = p.str(k, v) },
		"tokenEnv":   func(k string, v *yaml.Node) { a.TokenEnv = p.str(k, v) },
		"caFile":     func(k string, v *yaml.Node) { a.CAFile = p.str(k, v) },
		"insecure":   func(k string, v *yaml.Node) { a.Insecure = p.boolean(k, v) },
		"kubeconfig": func(k string, v *yaml.Node) { a.Kubeconfig = p.str(k, v) },
		"shard":      func(k string, v *yaml.Node) { a.Shard = p.str(k, v) },
		"namespace":  func(k string, v *yaml.Node) { a.Namespace = p.str(k, v) },
	}
	fields["dryRunEvidence"] = func(k string, v *yaml.Node) { a.DryRunEvidence = p.boolean(k, v) }
	fields["dryRunBudget"] = func(k string, v *yaml.Node) { a.DryRunBudget = p.positive(k, v) }
	fields["insecurePlaintext"] = func(k string, v *yaml.Node) { a.InsecurePlaintext = p.boolean(k, v) }
	p.mapping(n, key, fields)
	if a.Server == "" {
		p.fail(key+".server", n.Line, "is required")
	}
	p.plaintext(key, n, a)
	if a.TokenFile == "" && a.TokenEnv == "" {
		p.fail(key, n.Line, "needs tokenFile or tokenEnv for the Argo CD API token")
	}
	if a.Name == "" {
		a.Name = a.Server
	}
	return a
}

func (p *parser) github(key string, n *yaml.Node) GitHub {
	var g GitHub
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"appID":          func(k string, v *yaml.Node) { g.AppID = int64(p.positive(k, v)) },
		"privateKeyFile": func(k string, v *yaml.Node) { g.PrivateKeyFile = p.str(k, v) },
		"tokenFile":      func(k string, v *yaml.Node) { g.TokenFile = p.str(k, v) },
		"tokenEnv":       func(k string, v *yaml.Node) { g.TokenEnv = p.str(k, v) },
		"baseURL":        func(k string, v *yaml.Node) { g.BaseURL = p.url(k, v) },
	})
	app := g.AppID != 0 || g.PrivateKeyFile != ""
	tok := g.TokenFile != "" || g.TokenEnv != ""
	switch {
	case app && tok:
		p.fail(key, n.Line, "use either a GitHub App (appID, privateKeyFile) or a token (tokenFile or tokenEnv), not both")
	case app && (g.AppID == 0 || g.PrivateKeyFile == ""):
		p.fail(key, n.Line, "a GitHub App needs both appID and privateKeyFile")
	}
	return g
}

func (p *parser) slack(key string, n *yaml.Node) Slack {
	var s Slack
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"tokenFile": func(k string, v *yaml.Node) { s.TokenFile = p.str(k, v) },
		"tokenEnv":  func(k string, v *yaml.Node) { s.TokenEnv = p.str(k, v) },
		"channel":   func(k string, v *yaml.Node) { s.Channel = p.channel(k, v) },
		"apiURL":    func(k string, v *yaml.Node) { s.APIURL = p.url(k, v) },
		"people":    func(k string, v *yaml.Node) { s.People = p.people(k, v) },
		"actors": func(k string, v *yaml.Node) {
			p.mapping(v, k, map[string]func(string, *yaml.Node){
				"userGroups": func(k string, v *yaml.Node) {
					s.ActorGroups = []string{}
					p.list(k, v, func(k string, c *yaml.Node) {
						g := p.str(k, c)
						if !userGroupRe.MatchString(g) {
							p.fail(k, c.Line, fmt.Sprintf("%q is not a Slack user group ID (S followed by letters and digits, as the group's URL shows it)", g))
							return
						}
						s.ActorGroups = append(s.ActorGroups, g)
					})
				},
			})
		},
	})
	return s
}

var (
	slackUserRe   = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	userGroupRe   = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)
	githubLoginRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)
)

// people reads slack.people: Slack user IDs to GitHub logins.
func (p *parser) people(key string, n *yaml.Node) map[string]string {
	out := map[string]string{}
	if n.Kind != yaml.MappingNode {
		p.fail(key, n.Line, "must be a mapping of Slack user IDs to GitHub logins, such as U012AB3CD: octocat")
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k := key + "." + kn.Value
		if !slackUserRe.MatchString(kn.Value) {
			p.fail(k, kn.Line, fmt.Sprintf("%q is not a Slack user ID (U or W followed by letters and digits, as the person's profile shows it)", kn.Value))
			continue
		}
		if _, dup := out[kn.Value]; dup {
			p.fail(k, kn.Line, "is given twice")
			continue
		}
		login := p.str(k, vn)
		if !githubLoginRe.MatchString(login) {
			p.fail(k, vn.Line, fmt.Sprintf("%q is not a GitHub login", login))
			continue
		}
		out[kn.Value] = login
	}
	return out
}

var channelRe = regexp.MustCompile(`^(#[a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{8,})$`)

func (p *parser) channel(key string, n *yaml.Node) string {
	s := p.str(key, n)
	if !channelRe.MatchString(s) {
		p.fail(key, n.Line, fmt.Sprintf("%q is not a Slack channel (#name or a channel ID)", s))
	}
	return s
}

// isFixKind reports whether a fix kind has a remedy in remediations.Remedies,
// the one list of fix kinds.
func isFixKind(k drift.FixKind) bool {
	_, ok := remediations.Lookup(k)
	return ok
}

func (p *parser) policy(key string, n *yaml.Node, pol *Policy) {
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"fixes": func(k string, v *yaml.Node) {
			pol.Fixes = map[drift.Cause][]drift.FixKind{}
			p.mapping(v, k, p.fixHandlers(k, pol))
		},
		"dryRun":         func(k string, v *yaml.Node) { pol.DryRun = p.boolPtr(k, v) },
		"stuckAfter":     func(k string, v *yaml.Node) { pol.StuckAfter, pol.stuckAfterSet = p.duration(k, v), true },
		"prsPerCycle":    func(k string, v *yaml.Node) { pol.PRsPerCycle = p.positive(k, v) },
		"openPRs":        func(k string, v *yaml.Node) { pol.OpenPRs = p.positive(k, v) },
		"prsPerRepo":     func(k string, v *yaml.Node) { pol.PRsPerRepo = p.positive(k, v) },
		"draft":          func(k string, v *yaml.Node) { pol.Draft = p.boolPtr(k, v) },
		"labels":         func(k string, v *yaml.Node) { pol.Labels = p.strings(k, v) },
		"reviewers":      func(k string, v *yaml.Node) { pol.Reviewers = p.strings(k, v) },
		"assignees":      func(k string, v *yaml.Node) { pol.Assignees = p.strings(k, v) },
		"branchPrefix":   func(k string, v *yaml.Node) { pol.BranchPrefix = p.branchPrefix(k, v) },
		"sensitivePaths": func(k string, v *yaml.Node) { pol.SensitivePaths = p.sensitivePaths(k, v) },
		"writers":        func(k string, v *yaml.Node) { pol.Writers = p.writers(k, v) },
		"quietHours":     func(k string, v *yaml.Node) { pol.QuietHours = p.quietHours(k, v) },
		"slackChannel":   func(k string, v *yaml.Node) { pol.SlackChannel = p.channel(k, v) },
		"minStuckFor": func(k string, v *yaml.Node) {
			d := p.duration(k, v)
			pol.MinStuckFor = &d
		},
		"minCycles": func(k string, v *yaml.Node) { pol.MinCycles = p.positive(k, v) },
		"manualChanges": func(k string, v *yaml.Node) {
			if pol.ManualChanges = p.str(k, v); pol.ManualChanges != "report" && pol.ManualChanges != "adopt" {
				p.fail(k, v.Line, fmt.Sprintf("must be report or adopt, not %q", v.Value))
			}
		},
		"dashboard": func(k string, v *yaml.Node) { pol.Dashboard = p.dashboard(k, v) },
		"fights":    func(k string, v *yaml.Node) { pol.Fights = p.fights(k, v) },
		"ignoreRules": func(k string, v *yaml.Node) {
			pol.IgnoreRules = p.ignoreRules(k, v, k == "policy.ignoreRules")
		},
		"titleStyle": func(k string, v *yaml.Node) { pol.TitleStyle = p.titleStyle(k, v) },
		"signOff":    func(k string, v *yaml.Node) { pol.SignOff = p.boolPtr(k, v) },
		"repoFile": func(k string, v *yaml.Node) {
			pol.RepoFile = p.repoFileRules(k, v, k == "policy.repoFile")
		},
	})
}

// sensitivePaths reads the policy's security-relevant paths. Each is an
// entry of the built-in table's own shape (drift.SensitiveSpec: scope, name,
// pattern, mode, reason, what, hidden, source), read by the same
// SensitiveSpec.Compile, or its short form, a string: a JSON pointer, a
// dotted path or a field name, optionally after Kind: or group/Kind:.
func (p *parser) sensitivePaths(key string, n *yaml.Node) []drift.SensitivePath {
	out := []drift.SensitivePath{}
	p.list(key, n, func(k string, c *yaml.Node) {
		if c.Kind == yaml.MappingNode {
			p.sensitiveEntry(k, c, &out)
			return
		}
		s := p.str(k, c)
		if c.Kind != yaml.ScalarNode {
			return
		}
		sp, err := drift.ParseSensitivePath(s)
		if err != nil {
			p.fail(k, c.Line, fmt.Sprintf("%v (a JSON pointer such as /spec/template/spec/dnsConfig, a dotted path such as spec.template.spec.containers[].env, a field name, Kind:path, or an entry with scope and pattern as in the built-in table)", err))
			return
		}
		out = append(out, sp)
	})
	return out
}

// sensitiveEntry reads one sensitivePaths entry written as a mapping.
func (p *parser) sensitiveEntry(k string, c *yaml.Node, out *[]drift.SensitivePath) {
	var spec drift.SensitiveSpec
	str := func(dst *string) func(string, *yaml.Node) {
		return func(k string, v *yaml.Node) { *dst = p.str(k, v) }
	}
	before := len(p.errs)
	p.mapping(c, k, map[string]func(string, *yaml.Node){
		"scope": func(k string, v *yaml.Node) {
			if v.Kind == yaml.SequenceNode {
				spec.Scope = p.strings(k, v)
			} else {
				spec.Scope = drift.ScopeList{p.str(k, v)}
			}
		},
		"name":    str(&spec.Name),
		"pattern": str(&spec.Pattern),
		"mode":    str(&spec.Mode),
		"reason":  str(&spec.Reason),
		"what":    str(&spec.What),
		"hidden":  str(&spec.Hidden),
		"allow":   str(&spec.Allow),
		"source":  str(&spec.Source),
	})
	if len(p.errs) > before {
		return
	}
	sp, err := spec.Compile(false)
	if err != nil {
		p.fail(k, c.Line, err.Error())
		return
	}
	if sp.Source == "" {
		sp.Source = fmt.Sprintf("%s, line %d", k, c.Line)
	}
	if spec.What == "" {
		sp.What = "listed in the policy's sensitivePaths as " + sp.PolicyText()
	}
	*out = append(*out, sp)
}

// writers reads the policy's writers: field managers the platform knows, as
// a controller (with the paths it legitimately owns) or a person.
func (p *parser) writers(key string, n *yaml.Node) []drift.Writer {
	out := []drift.Writer{}
	p.list(key, n, func(k string, c *yaml.Node) {
		w := drift.Writer{Policy: true, Source: fmt.Sprintf("%s, line %d", k, c.Line)}
		p.mapping(c, k, map[string]func(string, *yaml.Node){
			"manager": func(k string, v *yaml.Node) { w.Manager = p.str(k, v) },
			"is": func(k string, v *yaml.Node) {
				w.Is = drift.WriterKind(p.str(k, v))
				if w.Is != drift.WriterController && w.Is != drift.WriterPerson {
					p.fail(k, v.Line, fmt.Sprintf("must be controller or person, not %q", v.Value))
				}
			},
			"owns": func(k string, v *yaml.Node) {
				p.list(k, v, func(k string, o *yaml.Node) {
					s := p.str(k, o)
					if o.Kind != yaml.ScalarNode {
						return
					}
					op, err := drift.ParseOwnedPath(s)
					if err != nil {
						p.fail(k, o.Line, fmt.Sprintf("%v (a JSON pointer such as /spec/replicas, optionally after kinds: apps/Deployment:/spec/replicas)", err))
						return
					}
					w.Owns = append(w.Owns, op)
				})
			},
		})
		if c.Kind != yaml.MappingNode {
			return
		}
		if w.Manager == "" {
			p.fail(k+".manager", c.Line, "is required: the field manager's name, as in metadata.managedFields[].manager, or a glob such as acme-*")
			return
		}
		if w.Is == "" {
			p.fail(k+".is", c.Line, "is required: controller or person")
			return
		}
		if err := drift.ValidateWriter(w); err != nil {
			p.fail(k, c.Line, err.Error())
			return
		}
		if drift.ArgoCDManagers[w.Manager] {
			p.fail(k+".manager", c.Line, fmt.Sprintf("%s is Argo CD's own field manager; it cannot be another writer", w.Manager))
			return
		}
		out = append(out, w)
	})
	return out
}

// fixHandlers accepts one key per cause of classifiers.Registry, the one list
// of causes; manual changes can never be fixed.
func (p *parser) fixHandlers(at string, pol *Policy) map[string]func(string, *yaml.Node) {
	h := map[string]func(string, *yaml.Node){}
	for _, cl := range classifiers.Registry {
		c := cl.Name
		h[string(c)] = func(k string, v *yaml.Node) {
			kinds := []drift.FixKind{}
			for _, s := range p.strings(k, v) {
				kind := drift.FixKind(s)
				switch {
				case !isFixKind(kind):
					p.fail(k, v.Line, fmt.Sprintf("unknown fix kind %q", s))
				case c == drift.CauseManualChange:
					p.fail(k, v.Line, "a manual change is real drift: driftfix never fixes it, so it takes no fix kinds")
				default:
					kinds = append(kinds, kind)
				}
			}
			pol.Fixes[c] = kinds
		}
	}
	return h
}

var branchRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

func (p *parser) branchPrefix(key string, n *yaml.Node) string {
	s := p.str(key, n)
	if !branchRe.MatchString(s) || strings.Contains(s, "..") || strings.HasSuffix(s, "/") {
		p.fail(key, n.Line, fmt.Sprintf("%q cannot start a Git branch name", s))
	}
	return s
}

var clock = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

func (p *parser) quietHours(key string, n *yaml.Node) *QuietHours {
	q := &QuietHours{Location: time.UTC}
	var from, to bool
	parse := func(k string, v *yaml.Node) time.Duration {
		m := clock.FindStringSubmatch(p.str(k, v))
		if m == nil {
			p.fail(k, v.Line, fmt.Sprintf("must be a time such as 22:00, not %q", v.Value))
			return 0
		}
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		return time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute
	}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"from": func(k string, v *yaml.Node) { q.From, from = parse(k, v), true },
		"to":   func(k string, v *yaml.Node) { q.To, to = parse(k, v), true },
		"timezone": func(k string, v *yaml.Node) {
			loc, err := time.LoadLocation(p.str(k, v))
			if err != nil {
				p.fail(k, v.Line, fmt.Sprintf("unknown time zone %q", v.Value))
				return
			}
			q.Location = loc
		},
	})
	if !from || !to {
		p.fail(key, n.Line, "needs both from and to")
	}
	return q
}

func (p *parser) override(key string, n *yaml.Node) Override {
	var o Override
	matched := false
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"match": func(k string, v *yaml.Node) {
			matched = true
			p.mapping(v, k, map[string]func(string, *yaml.Node){
				"project":   func(k string, v *yaml.Node) { o.Match.Project = p.str(k, v) },
				"app":       func(k string, v *yaml.Node) { o.Match.App = p.pattern(k, v) },
				"namespace": func(k string, v *yaml.Node) { o.Match.Namespace = p.pattern(k, v) },
			})
		},
		"policy": func(k string, v *yaml.Node) { p.policy(k, v, &o.Policy) },
	})
	if !matched || o.Match == (Match{}) {
		p.fail(key, n.Line, "needs a match with a project, app or namespace (use the global policy for everything)")
	}
	return o
}

func (p *parser) pattern(key string, n *yaml.Node) string {
	s := p.str(key, n)
	if _, err := matchCheck(s); err != nil {
		p.fail(key, n.Line, fmt.Sprintf("%q is not a valid pattern: %v", s, err))
	}
	return s
}
