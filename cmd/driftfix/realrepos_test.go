package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/docs"
)

// The real-repository corpus (issue 40): public GitOps repositories pinned by
// commit, each with drift planted into its real files and harmless edits,
// judged through the CLI's default invocation as a CI step runs it. The
// clones live outside the project; DRIFTFIX_REALREPOS names their folder.

// realReposEnv names the folder that holds one clone per repository, named
// as the manifest's dir.
const realReposEnv = "DRIFTFIX_REALREPOS"

// realReposManifest is the corpus: repositories, pins and cases.
const realReposManifest = "testdata/realrepos.yaml"

// realReposFigures, when set, is the file the figures are written to as a
// Markdown table (for docs/accuracy.md).
var realReposFigures = flag.String("realrepos.figures", "", "write the real-repository corpus figures as Markdown to this file")

// realReposFetch, when set, clones each repository missing from the
// DRIFTFIX_REALREPOS folder from its URL (the network is used only then).
var realReposFetch = flag.Bool("realrepos.fetch", false, "clone the corpus repositories missing from $DRIFTFIX_REALREPOS from their URLs")

// Floors the corpus run must meet, as fractions: the figures of
// 2026-12-07 (docs/accuracy.md), raised as the engine meets more.
const (
	// floorRendered is applications rendered, in each repository's --all
	// run, over those found or, when more, those Argo CD would create
	// (the inventory's applications): 201 of 1,931.
	floorRendered = 0.10
	// floorPredicted is planted drift predicted (resource, path, cause):
	// 26 of 35.
	floorPredicted = 0.74
	// floorExact is planted drift predicted at the expected file and line:
	// 25 of 35.
	floorExact = 0.71
	// floorHarmless is harmless edits with nothing predicted: 22 of 22.
	floorHarmless = 1.0
	// maxAborted is runs that exited 2 (bad input or a failed render), of
	// the cases and the real commits: none of 117.
	maxAborted = 0
)

// corpusRepo is one pinned public repository.
type corpusRepo struct {
	// Name is owner/name.
	Name string `json:"name"`
	// URL is the repository's clone URL; the test's clone gets it as its
	// origin, as a CI checkout has it.
	URL string `json:"url"`
	// Commit pins the revision every case starts from.
	Commit string `json:"commit"`
	// Dir is the clone's folder under DRIFTFIX_REALREPOS.
	Dir string `json:"dir"`
	// Shapes tag the layouts the repository uses.
	Shapes []string `json:"shapes"`
	// Inventory counts the Argo CD objects at the commit, by kind and
	// shape, as read by hand: what the engine must handle.
	Inventory map[string]int `json:"inventory,omitempty"`
	// Notes say what is special about the repository.
	Notes string `json:"notes,omitempty"`
	// History are real commits of the repository (at or before Commit)
	// that change manifests: each is predicted from its parent, both at
	// branches as a pull request's checkout has them, and counted only by
	// whether the run aborted (what it predicts is logged for a person to
	// judge).
	History []string     `json:"history,omitempty"`
	Cases   []corpusCase `json:"cases"`
}

// corpusCase is one change to the repository: planted drift (Expect set) or
// a harmless edit (Expect empty, nothing may be predicted).
type corpusCase struct {
	Name   string       `json:"name"`
	Kind   string       `json:"kind"` // drift or harmless
	Edits  []corpusEdit `json:"edits"`
	Expect []corpusWant `json:"expect,omitempty"`
	// FirstRun is the case's result on the engine before issue 40 (see
	// caseResult), the record each later run is compared with.
	FirstRun string `json:"firstRun"`
}

// caseResults are the results a case can have, worst first: a run that
// exited 2; drift not predicted, predicted elsewhere than its file and
// line, or at it; a harmless edit that predicted something, or nothing.
var caseResults = map[string]int{"aborted": 0, "missed": 1, "predicted": 2, "exact": 3, "false-alarm": 1, "clean": 3}

// corpusEdit changes one file: Find (which must occur exactly once) is
// replaced by Replace; or, with Find empty, Append is added at the end of
// the file, which is created when it does not exist.
type corpusEdit struct {
	File    string `json:"file"`
	Find    string `json:"find,omitempty"`
	Replace string `json:"replace,omitempty"`
	Append  string `json:"append,omitempty"`
}

// corpusWant is one prediction the planted drift must produce.
type corpusWant struct {
	Application string `json:"application"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Path        string `json:"path"`
	Cause       string `json:"cause"`
	File        string `json:"file"`
	Line        int    `json:"line"`
}

type corpus struct {
	Repositories []corpusRepo `json:"repositories"`
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// loadCorpus reads and checks the manifest: every repository pinned by a
// full commit, every case with an edit, every drift case with an expected
// prediction and every harmless one without.
func loadCorpus(t *testing.T) corpus {
	t.Helper()
	data, err := os.ReadFile(realReposManifest)
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s: %v", realReposManifest, err)
	}
	names := map[string]bool{}
	for _, r := range c.Repositories {
		switch {
		case r.Name == "" || r.URL == "" || r.Dir == "":
			t.Errorf("%s: repository %q: name, url and dir are required", realReposManifest, r.Name)
		case !commitRE.MatchString(r.Commit):
			t.Errorf("%s: repository %s: commit %q is not a full commit hash", realReposManifest, r.Name, r.Commit)
		case names[r.Name]:
			t.Errorf("%s: repository %s listed twice", realReposManifest, r.Name)
		case len(r.Shapes) == 0:
			t.Errorf("%s: repository %s: no shape tags", realReposManifest, r.Name)
		}
		for _, h := range r.History {
			if !commitRE.MatchString(h) {
				t.Errorf("%s: repository %s: history commit %q is not a full commit hash", realReposManifest, r.Name, h)
			}
		}
		names[r.Name] = true
		cases := map[string]bool{}
		for _, k := range r.Cases {
			where := fmt.Sprintf("%s: %s case %q", realReposManifest, r.Name, k.Name)
			if k.Name == "" || cases[k.Name] {
				t.Errorf("%s: a case needs a name of its own", where)
			}
			cases[k.Name] = true
			if len(k.Edits) == 0 {
				t.Errorf("%s: no edit", where)
			}
			for _, e := range k.Edits {
				if e.File == "" || (e.Find == "") == (e.Append == "") || (e.Find == "" && e.Replace != "") {
					t.Errorf("%s: an edit names a file and either find (with replace) or append", where)
				}
			}
			if _, ok := caseResults[k.FirstRun]; !ok {
				t.Errorf("%s: firstRun %q: want one of aborted, missed, predicted, exact (drift) or false-alarm, clean (harmless)", where, k.FirstRun)
			}
			switch k.Kind {
			case "drift":
				if len(k.Expect) == 0 {
					t.Errorf("%s: planted drift without an expected prediction", where)
				}
				for _, w := range k.Expect {
					if w.Kind == "" || w.Name == "" || w.Cause == "" || w.File == "" || w.Line <= 0 {
						t.Errorf("%s: an expected prediction names kind, name, cause, file and line: %+v", where, w)
					}
				}
			case "harmless":
				if len(k.Expect) > 0 {
					t.Errorf("%s: a harmless edit expects nothing", where)
				}
			default:
				t.Errorf("%s: kind %q: want drift or harmless", where, k.Kind)
			}
		}
	}
	return c
}

// TestRealReposManifest checks the corpus manifest, clones or not.
func TestRealReposManifest(t *testing.T) {
	c := loadCorpus(t)
	if len(c.Repositories) < 10 {
		t.Errorf("%d repositories: the corpus holds at least 10", len(c.Repositories))
	}
}

// scoredDoc is predict -o json's document, as far as the score reads it.
type scoredDoc struct {
	Applications []string `json:"applications"`
	Predictions  []struct {
		Application string            `json:"application"`
		File        string            `json:"file"`
		Line        int               `json:"line"`
		Resource    map[string]string `json:"resource"`
		Path        string            `json:"path"`
		Cause       string            `json:"cause"`
	} `json:"predictions"`
	Notes []string `json:"notes"`
	// NotPredicted is nil when the document has no notPredicted field
	// (the CLI before issue 40 did not list them).
	NotPredicted *[]struct {
		Application string `json:"application"`
		Kind        string `json:"kind"`
		Reason      string `json:"reason"`
	} `json:"notPredicted"`
}

// repoScore is one repository's figures.
type repoScore struct {
	name                    string
	found, rendered         int  // applications, in the --all run
	foundKnown              bool // the --all run listed the applications not predicted
	expected                int  // the applications Argo CD would create (inventory)
	allAborted              bool
	drift, predicted, exact int // planted expectations
	harmless, harmlessClean int
	runs, aborted           int
	history, historyAborted int      // real commits predicted, and runs of them that exited 2
	reasons                 []string // why runs aborted or apps were not rendered
	results                 []string // each case's result, as firstRun records it
	elapsed                 time.Duration
}

// TestRealRepos scores `driftfix predict` on the real-repository corpus:
// for each case, the repository's pinned commit is cloned, the edit
// committed on a branch, and the default invocation run through the CLI's
// entry point. It logs a table per repository and the totals; the floors
// above are what it asserts.
func TestRealRepos(t *testing.T) {
	c := loadCorpus(t)
	root := os.Getenv(realReposEnv)
	if root == "" {
		t.Skipf("%s is not set: set it to the folder of the corpus clones (one per repository, named as in %s) to score predict on real repositories", realReposEnv, realReposManifest)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	only := os.Getenv("DRIFTFIX_REALREPOS_ONLY") // a repository's name, to score one
	var scores []repoScore
	for _, r := range c.Repositories {
		if only != "" && r.Name != only {
			continue
		}
		src := filepath.Join(root, r.Dir)
		if _, err := os.Stat(filepath.Join(src, ".git")); err != nil && *realReposFetch {
			gitRun(t, "", "clone", "-q", "--no-checkout", r.URL, src)
		}
		if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
			t.Errorf("%s: no clone at %s: clone %s there (commit %s), or run with -realrepos.fetch", r.Name, src, r.URL, r.Commit)
			continue
		}
		if err := exec.Command("git", "-C", src, "cat-file", "-e", r.Commit+"^{commit}").Run(); err != nil {
			t.Errorf("%s: the clone at %s lacks commit %s: fetch it there", r.Name, src, r.Commit)
			continue
		}
		scores = append(scores, scoreRepo(t, src, r))
	}
	report(t, scores, only == "")
}

// scoreRepo runs one repository's --all run and cases.
func scoreRepo(t *testing.T, src string, r corpusRepo) repoScore {
	t.Helper()
	s := repoScore{name: r.Name, expected: r.Inventory["applications"]}
	start := time.Now()
	// Applications found and rendered: every application at the commit.
	dir := cloneAt(t, src, r)
	doc, code, stderr := predictRun(t, "predict", "--repo", dir, "--base", r.Commit, "--head", r.Commit, "--all", "-o", "json")
	s.runs++
	if code == exitUsage {
		s.aborted++
		s.allAborted = true
		s.reasons = append(s.reasons, "--all: "+firstLine(stderr))
	} else {
		s.rendered, s.found = len(doc.Applications), len(doc.Applications)
		if doc.NotPredicted != nil {
			s.foundKnown = true
			s.found += len(*doc.NotPredicted)
			for _, n := range *doc.NotPredicted {
				s.reasons = append(s.reasons, fmt.Sprintf("not predicted %s %s: %s", n.Kind, n.Application, n.Reason))
			}
		} else {
			// Before notPredicted existed, the notes said what was skipped.
			for _, n := range doc.Notes {
				s.reasons = append(s.reasons, "note: "+n)
			}
		}
	}
	t.Logf("%s --all: exit %d, %d applications rendered", r.Name, code, len(doc.Applications))
	for _, k := range r.Cases {
		dir := cloneAt(t, src, r)
		if err := applyEdits(dir, k.Edits); err != nil {
			t.Errorf("%s case %s: %v", r.Name, k.Name, err)
			continue
		}
		for _, w := range k.Expect {
			if err := declaresAt(dir, w.File, w.Line, w.Path); err != nil {
				t.Errorf("%s case %s: the expectation's line is wrong: %v", r.Name, k.Name, err)
			}
		}
		gitRun(t, dir, "checkout", "-q", "-b", "change")
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "-m", k.Name)
		doc, code, stderr := predictRun(t, "predict", "--repo", dir, "--base", r.Commit, "--head", "change", "-o", "json")
		s.runs++
		aborted := code == exitUsage
		if aborted {
			s.aborted++
			s.reasons = append(s.reasons, fmt.Sprintf("case %s: exit 2: %s", k.Name, firstLine(stderr)))
		}
		result := "clean"
		switch k.Kind {
		case "harmless":
			s.harmless++
			if !aborted && len(doc.Predictions) == 0 {
				s.harmlessClean++
			} else {
				result = "false-alarm"
			}
			for _, p := range doc.Predictions {
				t.Logf("%s harmless %s: predicted %s %s/%s %s %s at %s:%d", r.Name, k.Name, p.Application, p.Resource["kind"], p.Resource["name"], p.Path, p.Cause, p.File, p.Line)
			}
		case "drift":
			result = "exact"
			for _, w := range k.Expect {
				s.drift++
				got, exact := matchWant(doc, w)
				if got {
					s.predicted++
				}
				if exact {
					s.exact++
				}
				switch {
				case !got:
					result = "missed"
				case !exact && result == "exact":
					result = "predicted"
				}
				t.Logf("%s drift %s: %s/%s %s %s: predicted %v, exact %v (exit %d, %d predictions, applications %v)",
					r.Name, k.Name, w.Kind, w.Name, w.Path, w.Cause, got, exact, code, len(doc.Predictions), abbreviate(doc.Applications, 5))
				if got && !exact {
					for _, p := range doc.Predictions {
						if p.Resource["kind"] == w.Kind && p.Resource["name"] == w.Name && p.Path == w.Path {
							t.Logf("  at %s:%d (application %s), want %s:%d (application %s)", p.File, p.Line, p.Application, w.File, w.Line, w.Application)
						}
					}
				}
			}
		}
		if aborted {
			result = "aborted"
		}
		switch was, now := caseResults[k.FirstRun], caseResults[result]; {
		case now > was:
			t.Logf("%s case %s: %s, better than at the first run (%s)", r.Name, k.Name, result, k.FirstRun)
		case now < was:
			t.Logf("%s case %s: %s, worse than at the first run (%s)", r.Name, k.Name, result, k.FirstRun)
		}
		s.results = append(s.results, fmt.Sprintf("%s: %s", k.Name, result))
	}
	for i, h := range r.History {
		// Branches at the parent and the commit, as a pull request's
		// checkout has its base and head at refs.
		base, head := fmt.Sprintf("history-%d-base", i), fmt.Sprintf("history-%d", i)
		gitRun(t, dir, "branch", base, h+"~1")
		gitRun(t, dir, "branch", head, h)
		doc, code, stderr := predictRun(t, "predict", "--repo", dir, "--base", base, "--head", head, "-o", "json")
		s.history++
		if code == exitUsage {
			s.historyAborted++
			s.reasons = append(s.reasons, fmt.Sprintf("commit %.12s: exit 2: %s", h, firstLine(stderr)))
		}
		for _, p := range doc.Predictions {
			t.Logf("%s commit %.12s: predicted %s %s/%s %s %s at %s:%d", r.Name, h, p.Application, p.Resource["kind"], p.Resource["name"], p.Path, p.Cause, p.File, p.Line)
		}
	}
	s.elapsed = time.Since(start)
	return s
}

// matchWant says whether the document predicts the expected drift (its
// resource, path and cause), and whether at the expected application, file
// and line.
func matchWant(doc scoredDoc, w corpusWant) (got, exact bool) {
	for _, p := range doc.Predictions {
		if p.Resource["kind"] != w.Kind || p.Resource["name"] != w.Name || p.Path != w.Path || p.Cause != w.Cause {
			continue
		}
		got = true
		if p.File == w.File && p.Line == w.Line && (w.Application == "" || p.Application == w.Application) {
			exact = true
		}
	}
	return got, exact
}

// declaresAt checks a case's own data: the expected line of the file, after
// the edit, names the path's last key (a Helm value may name it in
// another form: replicaCount for replicas); a path ending in a list index
// is not checked.
func declaresAt(dir, file string, line int, path string) error {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return fmt.Errorf("%s has %d lines, not %d", file, len(lines), line)
	}
	key := path[strings.LastIndex(path, "/")+1:]
	if key == "" || strings.Trim(key, "0123456789") == "" {
		return nil
	}
	if !strings.Contains(strings.ToLower(lines[line-1]), strings.ToLower(strings.TrimSuffix(key, "s"))) {
		return fmt.Errorf("%s:%d is %q, which does not name %s", file, line, strings.TrimSpace(lines[line-1]), key)
	}
	return nil
}

// predictRun runs the CLI as a CI step would and decodes its JSON; a run
// that exits 2 may print no document.
func predictRun(t *testing.T, args ...string) (scoredDoc, int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	code := run(ctx, args, &out, &errb)
	var doc scoredDoc
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Errorf("predict %v: output is not JSON: %v\n%s", args, err, out.String())
		}
	}
	if code != exitClean && code != exitDrift && code != exitUsage {
		t.Errorf("predict %v: exit %d", args, code)
	}
	return doc, code, errb.String()
}

// cloneAt makes a clone of src (objects copied or hard-linked, not
// borrowed: go-git reads no alternates) at the repository's pinned commit, with the
// repository's URL as its origin, as a CI checkout of it has.
func cloneAt(t *testing.T, src string, r corpusRepo) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	gitRun(t, "", "clone", "-q", "--no-checkout", src, dir)
	gitRun(t, dir, "checkout", "-q", "--detach", r.Commit)
	gitRun(t, dir, "remote", "set-url", "origin", r.URL)
	return dir
}

// applyEdits applies a case's edits to the work tree.
func applyEdits(dir string, edits []corpusEdit) error {
	for _, e := range edits {
		p := filepath.Join(dir, filepath.FromSlash(e.File))
		old, err := os.ReadFile(p)
		if err != nil && !(os.IsNotExist(err) && e.Find == "") {
			return fmt.Errorf("edit %s: %w", e.File, err)
		}
		var now string
		if e.Find == "" {
			now = string(old) + e.Append
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return fmt.Errorf("edit %s: %w", e.File, err)
			}
		} else {
			if n := strings.Count(string(old), e.Find); n != 1 {
				return fmt.Errorf("edit %s: %q occurs %d times, want once", e.File, e.Find, n)
			}
			now = strings.Replace(string(old), e.Find, e.Replace, 1)
		}
		if now == string(old) {
			return fmt.Errorf("edit %s: changes nothing", e.File)
		}
		if err := os.WriteFile(p, []byte(now), 0o644); err != nil {
			return fmt.Errorf("edit %s: %w", e.File, err)
		}
	}
	return nil
}

// gitRun runs git in dir with a fixed identity and dates.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=corpus", "-c", "user.email=corpus@example.com", "-c", "commit.gpgsign=false", "-c", "advice.detachedHead=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-12-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-12-01T00:00:00Z")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}

func abbreviate(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string{}, xs[:n]...), fmt.Sprintf("… %d more", len(xs)-n))
}

// report logs the table and totals, writes them with -realrepos.figures
// and checks the floors; over the whole corpus (all), also the figures the
// docs state (docs/figures.yaml, "realrepos").
func report(t *testing.T, scores []repoScore, all bool) {
	t.Helper()
	var tot repoScore
	tot.name = "total"
	for _, s := range scores {
		tot.found += s.found
		tot.foundKnown = tot.foundKnown || s.foundKnown
		tot.rendered += s.rendered
		tot.expected += s.expected
		tot.drift += s.drift
		tot.predicted += s.predicted
		tot.exact += s.exact
		tot.harmless += s.harmless
		tot.harmlessClean += s.harmlessClean
		tot.runs += s.runs
		tot.aborted += s.aborted
		tot.history += s.history
		tot.historyAborted += s.historyAborted
		tot.elapsed += s.elapsed
	}
	var md bytes.Buffer
	fmt.Fprintln(&md, "| repository | applications rendered / found / Argo CD's (--all) | planted drift predicted | at exact file and line | harmless edits clean | runs aborted (exit 2) | real commits aborted |")
	fmt.Fprintln(&md, "|---|---|---|---|---|---|---|")
	var tbl bytes.Buffer
	tw := tabwriter.NewWriter(&tbl, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REPOSITORY\tRENDERED/FOUND/ARGO CD'S\tPREDICTED\tEXACT\tHARMLESS CLEAN\tABORTED/RUNS\tCOMMITS ABORTED\tTIME")
	for _, s := range append(scores, tot) {
		found := fmt.Sprintf("%d/%d/%d", s.rendered, s.found, s.expected)
		if !s.foundKnown {
			found = fmt.Sprintf("%d/-/%d", s.rendered, s.expected)
		}
		if s.allAborted {
			found = fmt.Sprintf("aborted/%d", s.expected)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%d/%d\t%d/%d\t%d/%d\t%s\n", s.name, found, s.predicted, s.drift, s.exact, s.drift, s.harmlessClean, s.harmless, s.aborted, s.runs, s.historyAborted, s.history, s.elapsed.Round(time.Second))
		fmt.Fprintf(&md, "| %s | %s | %d/%d | %d/%d | %d/%d | %d/%d | %d/%d |\n", s.name, found, s.predicted, s.drift, s.exact, s.drift, s.harmlessClean, s.harmless, s.aborted, s.runs, s.historyAborted, s.history)
	}
	tw.Flush()
	t.Logf("real-repository corpus:\n%s", tbl.String())
	for _, s := range scores {
		t.Logf("%s results: %s", s.name, strings.Join(s.results, ", "))
		if len(s.reasons) == 0 {
			continue
		}
		sort.Strings(s.reasons)
		t.Logf("%s: %s", s.name, strings.Join(abbreviate(s.reasons, 12), "\n  "))
	}
	if *realReposFigures != "" {
		if err := os.WriteFile(*realReposFigures, md.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 1
		}
		return float64(a) / float64(b)
	}
	if r := ratio(tot.rendered, max(tot.found, tot.expected)); r < floorRendered {
		t.Errorf("applications rendered: %.0f%%, floor %.0f%%", 100*r, 100*floorRendered)
	}
	if r := ratio(tot.predicted, tot.drift); r < floorPredicted {
		t.Errorf("planted drift predicted: %.0f%%, floor %.0f%%", 100*r, 100*floorPredicted)
	}
	if r := ratio(tot.exact, tot.drift); r < floorExact {
		t.Errorf("planted drift at exact file and line: %.0f%%, floor %.0f%%", 100*r, 100*floorExact)
	}
	if r := ratio(tot.harmlessClean, tot.harmless); r < floorHarmless {
		t.Errorf("harmless edits clean: %.0f%%, floor %.0f%%", 100*r, 100*floorHarmless)
	}
	if tot.aborted+tot.historyAborted > maxAborted {
		t.Errorf("%d runs aborted, at most %d", tot.aborted+tot.historyAborted, maxAborted)
	}
	if !all {
		return
	}
	for key, v := range map[string]int{"repos": len(scores), "drift": tot.drift, "predicted": tot.predicted, "exact": tot.exact,
		"harmless": tot.harmless, "harmless-clean": tot.harmlessClean, "runs": tot.runs, "commits": tot.history,
		"rendered": tot.rendered} {
		docs.Hold(t, "realrepos", key, float64(v))
	}
	docs.HoldCeiling(t, "realrepos", "aborted", float64(tot.aborted))
	docs.HoldCeiling(t, "realrepos", "commits-aborted", float64(tot.historyAborted))
}
