package render

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
)

// HelmRef is a source of a multi-source Application with `ref: name`: the
// files another source's value files and file parameters name as
// $name/path, read from that source's repository root at its revision.
type HelmRef struct {
	Repository     string // the ref source's repoURL
	TargetRevision string
	// Chart is set when the ref source is a Helm chart from a chart
	// repository or an OCI registry, not a Git repository.
	Chart string
	// Local says the ref source is the repository being rendered, at the
	// revision rendered: its files are the render's files, from the root.
	// A value file of a ref that is not local is a *NotLocalError.
	Local bool
}

// FileParameter is one spec.source.helm.fileParameters entry: the value at
// Name is the content of the file at Path (`helm template --set-file`).
type FileParameter struct {
	Name, Path string
}

// NotLocalError is a render that needs files outside the repository at
// hand: another Git repository (a ref source's), or a chart from a Helm
// chart repository or an OCI registry. The CLI does not fetch them; Argo
// CD, where it is at hand, renders such a source.
type NotLocalError struct {
	What       string // what needs it, e.g. "value file $values/prod.yaml"
	Repository string // the repository it is in
	Chart      string // the chart, when it is a chart repository's
	// Why says where it is in the user's terms; "" says it from Repository
	// and Chart.
	Why string
	// NotFetched, for a chart that is fetched where fetching is on, says
	// why it was not ("--offline"); "" for another Git repository, which
	// only Argo CD reads.
	NotFetched string
}

func (e *NotLocalError) Error() string {
	why := e.Why
	if why == "" {
		where := e.Repository
		if e.Chart != "" {
			where = "chart " + e.Chart + " of " + e.Repository
		}
		why = "is not in this repository but in " + where
	}
	if e.NotFetched != "" {
		return fmt.Sprintf("%s %s: not fetched (%s; needs the chart fetched, or Argo CD at hand)", e.What, why, e.NotFetched)
	}
	return fmt.Sprintf("%s %s: the CLI does not fetch it (needs Argo CD at hand)", e.What, why)
}

// ValuesFileSchemes are the URL schemes a value file may use (argocd-cm's
// helm.valuesFileSchemes as Argo CD defaults it); such a file is not
// fetched here (a *RemoteError). Any other scheme is refused, as Argo CD
// refuses it.
var ValuesFileSchemes = []string{"https", "http"}

// maxValueInputs bounds the value files and file parameters of one source
// (each a pattern matched against every file of the repository before a
// render process starts); real applications name a handful.
const maxValueInputs = 256

// refName is the form Argo CD accepts for a source's ref.
var refName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// valueInput is one values file of a render, resolved: a repository path,
// or a URL (never read).
type valueInput struct {
	raw  string // as the Application writes it
	path string // the repository path
	url  string // a remote values file
}

// envsubst expands $NAME and ${NAME} in s from env as Argo CD's repo-server
// does ($$ is a $, an unknown name is empty). A name of the ARGOCD_APP_
// family that env lacks (the commit of ARGOCD_APP_REVISION, which a render
// here is not given) is an error naming it, rather than an empty string
// Argo CD would not have used.
func envsubst(s, what string, env map[string]string) (string, error) {
	var missing string
	out := expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		v, ok := env[name]
		if !ok && strings.HasPrefix(name, "ARGOCD_APP_") && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("%s uses $%s, which is only known where Argo CD renders it", what, missing)
	}
	return out, nil
}

// resolveInRepo resolves p as Argo CD resolves a value file's path: from
// dir, or from the repository root when p starts with a slash. ok is false
// when the path leaves the repository at any step, or is the root itself:
// Argo CD refuses both (its root is a directory of a random name, so a
// path that leaves it and comes back names another directory).
func resolveInRepo(dir, p string) (string, bool) {
	var segs []string
	if !strings.HasPrefix(p, "/") {
		for _, s := range strings.Split(dir, "/") {
			switch s {
			case "", ".":
			case "..":
				return "", false
			default:
				segs = append(segs, s)
			}
		}
	}
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(segs) == 0 {
				return "", false
			}
			segs = segs[:len(segs)-1]
		default:
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return "", false
	}
	return strings.Join(segs, "/"), true
}

// resolveValuePath resolves one entry of helm.valueFiles (or a file
// parameter's path) of the chart under dir as Argo CD's repo-server does:
// $ref/... from the ref source's repository root, anything else after
// environment substitution, relative to the chart or (with a leading
// slash) to the repository root; a URL of ValuesFileSchemes is remote.
func resolveValuePath(dir, raw, what string, refs map[string]HelmRef, env map[string]string) (valueInput, error) {
	in := valueInput{raw: raw}
	if strings.HasPrefix(raw, "$") {
		name := strings.TrimPrefix(strings.SplitN(raw, "/", 2)[0], "$")
		if ref, ok := refs[name]; ok {
			if !ref.Local || ref.Chart != "" {
				return in, &NotLocalError{What: what + " " + raw + " (ref " + name + ")", Repository: ref.Repository, Chart: ref.Chart}
			}
			rest := ""
			if i := strings.Index(raw, "/"); i >= 0 {
				rest = raw[i:]
			}
			p, err := envsubst(rest, what+" "+raw, env)
			if err != nil {
				return in, err
			}
			if urlScheme(p) != "" {
				return remoteValues(in, p, what)
			}
			// From the ref's root, whether or not the rest starts with a slash.
			resolved, ok := resolveInRepo("", "/"+p)
			if !ok {
				return in, fmt.Errorf("%s %s resolves outside the repository of ref %s, which Argo CD refuses", what, raw, name)
			}
			in.path = resolved
			return in, nil
		}
	}
	p, err := envsubst(raw, what+" "+raw, env)
	if err != nil {
		return in, err
	}
	if urlScheme(p) != "" {
		return remoteValues(in, p, what)
	}
	resolved, ok := resolveInRepo(dir, p)
	if !ok {
		return in, fmt.Errorf("%s %s resolves outside the repository (or to its root), which Argo CD refuses", what, raw)
	}
	in.path = resolved
	return in, nil
}

func remoteValues(in valueInput, u, what string) (valueInput, error) {
	scheme := strings.SplitN(u, ":", 2)[0]
	for _, s := range ValuesFileSchemes {
		if strings.EqualFold(s, scheme) {
			in.url = u
			return in, &RemoteError{File: what + " " + in.raw, URL: u,
				Why: "a remote values file is not fetched by the CLI; Argo CD renders it where it is at hand"}
		}
	}
	return in, fmt.Errorf("%s %s: the URL scheme %q is not allowed (Argo CD allows %s)", what, in.raw, scheme, strings.Join(ValuesFileSchemes, ", "))
}

// isGlob says whether a resolved value file is a pattern Argo CD expands.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// checkRefs refuses refs Argo CD refuses: a name it does not accept.
func checkRefs(refs map[string]HelmRef) error {
	for _, name := range sortedKeys(refs) {
		if !refName.MatchString(name) {
			return fmt.Errorf("sources.ref %s cannot contain any special characters except '_' and '-' (Argo CD refuses it)", name)
		}
	}
	return nil
}

// resolveValueFiles resolves the options' value files in Argo CD's order:
// each entry in turn, a pattern expanded to the matching files in walk order
// (except those listed on their own, which keep their own place), a missing
// file or a pattern without a match skipped with IgnoreMissingValueFiles and
// an error otherwise, and each file used once.
func resolveValueFiles[T ~[]byte | ~string](files map[string]T, opts HelmOptions) ([]string, error) {
	if err := checkRefs(opts.Refs); err != nil {
		return nil, err
	}
	if n := len(opts.ValueFiles) + len(opts.FileParameters); n > maxValueInputs {
		return nil, &LimitError{Limit: "value files", What: "helm.valueFiles and fileParameters of chart " + strings.Trim(opts.ChartDir, "/"),
			Got: fmt.Sprintf("%d entries", n), Max: fmt.Sprint(maxValueInputs)}
	}
	dir := strings.Trim(opts.ChartDir, "/")
	var inputs []valueInput
	explicit := map[string]bool{}
	for _, raw := range opts.ValueFiles {
		in, err := resolveValuePath(dir, raw, "value file", opts.Refs, opts.Env)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
		if !isGlob(in.path) {
			explicit[in.path] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, in := range inputs {
		if isGlob(in.path) {
			matches, err := globFiles(files, in.path)
			if err != nil {
				return nil, fmt.Errorf("value file %s: %w", in.raw, err)
			}
			if len(matches) == 0 {
				if opts.IgnoreMissingValueFiles {
					continue
				}
				return nil, fmt.Errorf("values file glob %q matched no files", in.raw)
			}
			for _, m := range matches {
				if !explicit[m] {
					add(m)
				}
			}
			continue
		}
		if _, ok := files[in.path]; !ok {
			if opts.IgnoreMissingValueFiles {
				continue
			}
			return nil, fmt.Errorf("values file %s (%s) is not in the repository", in.path, in.raw)
		}
		add(in.path)
	}
	return out, nil
}

// globFiles are the files matching pattern, a path whose segments are
// path.Match patterns or ** (any number of directories), in the order a
// walk of sorted directories finds them.
func globFiles[T ~[]byte | ~string](files map[string]T, pattern string) ([]string, error) {
	pat := strings.Split(pattern, "/")
	for _, p := range pat {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", pattern, err)
		}
	}
	var out []string
	for f := range files {
		if matchSegments(pat, strings.Split(f, "/")) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return walkLess(out[i], out[j]) })
	return out, nil
}

// matchSegments matches a path's segments against a pattern's, ** being
// any number of segments, in time proportional to their product (no
// pattern makes it backtrack).
func matchSegments(pat, name []string) bool {
	prev := make([]bool, len(name)+1) // prev[j]: the pattern so far matches name[:j]
	prev[0] = true
	for _, p := range pat {
		cur := make([]bool, len(name)+1)
		if p == "**" {
			seen := false
			for j := range cur {
				seen = seen || prev[j]
				cur[j] = seen
			}
		} else {
			for j := 1; j <= len(name); j++ {
				if prev[j-1] {
					cur[j], _ = path.Match(p, name[j-1])
				}
			}
		}
		prev = cur
	}
	return prev[len(name)]
}

// walkLess orders paths as a depth-first walk of sorted directories meets
// them: segment by segment.
func walkLess(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}

// cleanSetValue escapes the commas of a parameter's value as Argo CD does
// before it passes it to `helm template --set`, so that a comma is part of
// the value; a value in braces is a list and is passed as written.
func cleanSetValue(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	var prev rune
	for _, r := range v {
		if r == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HelmValueFiles are the repository paths of the value files a render of
// opts reads, in the order Helm merges them (the last wins), resolved as
// Argo CD resolves them (see Helm); an error says why they do not resolve.
func HelmValueFiles[T ~[]byte | ~string](files map[string]T, opts HelmOptions) ([]string, error) {
	return resolveValueFiles(files, opts)
}

// HelmReads are the repository files and directories a render of opts
// reads besides the chart directory's own, so that a change to one of them
// is known to change the render: its value files and file parameters (a
// $ref's, one from the root or above the chart, a glob's matches, one
// that is missing today) and the directories of its file:// dependencies
// (ending in "/"). What does not resolve here (a ref elsewhere, a URL) is
// left out; rendering says why. Sorted, each once.
func HelmReads[T ~[]byte | ~string](files map[string]T, opts HelmOptions) []string {
	dir := strings.Trim(opts.ChartDir, "/")
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	raws := append([]string{}, opts.ValueFiles...)
	for _, p := range opts.FileParameters {
		raws = append(raws, p.Path)
	}
	if len(raws) > maxValueInputs {
		raws = raws[:maxValueInputs] // a render refuses the rest
	}
	for _, raw := range raws {
		in, err := resolveValuePath(dir, raw, "value file", opts.Refs, opts.Env)
		if err != nil || in.path == "" {
			continue
		}
		if !isGlob(in.path) {
			add(in.path)
			continue
		}
		matches, _ := globFiles(files, in.path)
		for _, m := range matches {
			add(m)
		}
	}
	var meta chartDeps
	if err := yaml.Unmarshal([]byte(files[path.Join(dir, "Chart.yaml")]), &meta); err == nil {
		for _, d := range meta.Dependencies {
			if d == nil || !strings.HasPrefix(d.Repository, "file://") {
				continue
			}
			target := strings.TrimPrefix(d.Repository, "file://")
			if depDir, ok := resolveInRepo(dir, target); ok && !strings.HasPrefix(target, "/") {
				add(depDir + "/")
			}
		}
	}
	sort.Strings(out)
	return out
}

// chartDeps is what HelmReads and a dependency build read of a Chart.yaml.
type chartDeps struct {
	Version      string              `yaml:"version"`
	Dependencies []*chart.Dependency `yaml:"dependencies"`
}

// expand replaces $name and ${name} in s by mapping(name), with the shell
// syntax Go's os.Expand accepts (Argo CD substitutes its build environment
// with it): a name is letters, digits and underscores, or one special
// character ($, *, #, @, !, ?, -, a digit); ${} and an unclosed ${ are
// dropped; a $ with no name after it stays.
func expand(s string, mapping func(string) string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		b.WriteString(s[last:i])
		name, w := shellName(s[i+1:])
		switch {
		case name == "" && w > 0: // bad syntax: dropped
		case name == "":
			b.WriteByte('$')
		default:
			b.WriteString(mapping(name))
		}
		i += w
		last = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// shellName reads the name after a $: the name and how many bytes it took.
func shellName(s string) (string, int) {
	if s[0] == '{' {
		if len(s) > 2 && specialVar(s[1]) && s[2] == '}' {
			return s[1:2], 3
		}
		for i := 1; i < len(s); i++ {
			if s[i] == '}' {
				if i == 1 {
					return "", 2
				}
				return s[1:i], i + 1
			}
		}
		return "", 1
	}
	if specialVar(s[0]) {
		return s[0:1], 1
	}
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	return s[:i], i
}

func specialVar(c byte) bool {
	return strings.IndexByte("*#$@!?-", c) >= 0 || c >= '0' && c <= '9'
}

// urlScheme is the scheme Argo CD sees in a value file's path when it
// parses it as a URL: letters, then letters, digits, +, - or ., then a
// colon; "" when the path is no URL (or no URL parses from it: a control
// character, or a colon before any slash after a non-scheme start).
func urlScheme(p string) string {
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			return ""
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return ""
			}
		case c == ':':
			return p[:i]
		default:
			return ""
		}
	}
	return ""
}
