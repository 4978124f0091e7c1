package predict

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/docs"
)

// layoutsDir holds the reduced repositories: one folder per layout of the
// real-repository corpus, with the repository's files under repo/ and the
// case in case.yaml. They are written for the project in the layouts users
// have, not copied from those repositories.
const layoutsDir = "testdata/layouts"

// layoutCase is a layout's case.yaml.
type layoutCase struct {
	Description string `json:"description"`
	// RepoURL is the URL the Applications name for this repository, as
	// the checkout's remote: Options.Repositories.
	RepoURL string `json:"repoURL"`
	// FirstRun is what the layout gave on the engine before issue 40 (pass
	// or fail), kept as the record the accuracy figures start from.
	FirstRun string `json:"firstRun"`
	// Expect is pass when the engine must predict the layout: only then
	// does a miss fail the test (the lead flips it as the engine learns).
	Expect string `json:"expect"`
	// Cluster is the cluster context the run is given, as predict
	// --cluster reads it (Argo CD's cluster Secrets, HPAs, argocd-cm); ""
	// for none, as in the default invocation.
	Cluster  string       `json:"cluster,omitempty"`
	Drift    layoutChange `json:"drift"`
	Harmless layoutChange `json:"harmless"`
}

// layoutChange is one change to the base: its edits and, for drift, the
// predictions it must produce.
type layoutChange struct {
	Edits []layoutEdit   `json:"edits"`
	Want  []layoutWanted `json:"want,omitempty"`
}

// layoutEdit replaces Find (once) by Replace in File, or appends Append to
// File (created when absent).
type layoutEdit struct {
	File    string `json:"file"`
	Find    string `json:"find,omitempty"`
	Replace string `json:"replace,omitempty"`
	Append  string `json:"append,omitempty"`
}

// layoutWanted is one prediction a drift change must produce.
type layoutWanted struct {
	Application string `json:"application"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Path        string `json:"path"`
	Cause       string `json:"cause"`
	File        string `json:"file"`
	Line        int    `json:"line"`
}

// TestLayouts runs predict on each reduced repository as a CI step would:
// the base committed to a real Git repository, the drift (then the
// harmless) edit committed on top, both revisions read through bot/gitrepo
// over file://, and predict.Run asked what the change introduces. A layout
// passes when the drift's predictions are all there, at their file and
// line, and the harmless edit predicts nothing. Every layout's status is
// logged; only those marked expect: pass fail the test.
func TestLayouts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	entries, err := os.ReadDir(layoutsDir)
	if err != nil {
		t.Fatal(err)
	}
	var status []string
	pass, dirs := 0, []string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		dirs = append(dirs, name)
		t.Run(name, func(t *testing.T) {
			c := readLayout(t, filepath.Join(layoutsDir, name))
			problems := runLayout(t, filepath.Join(layoutsDir, name, "repo"), c)
			got := "pass"
			if len(problems) > 0 {
				got = "fail"
			} else {
				pass++
			}
			status = append(status, fmt.Sprintf("%-32s %s (first run %s, expect %s)", name, got, c.FirstRun, c.Expect))
			for _, p := range problems {
				t.Logf("%s: %s", name, p)
			}
			if c.Expect == "pass" && len(problems) > 0 {
				t.Errorf("layout %s is expected to pass: %s", name, strings.Join(problems, "; "))
			}
		})
	}
	sort.Strings(status)
	t.Logf("layouts:\n%s", strings.Join(status, "\n"))
	if len(status) == len(dirs) { // not when -run chose some layouts: the figure is of all
		docs.Hold(t, "layouts", "layouts", float64(len(status)))
		docs.Hold(t, "layouts", "pass", float64(pass))
	}
}

// readLayout reads and checks a layout's case.yaml.
func readLayout(t *testing.T, dir string) layoutCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c layoutCase
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s/case.yaml: %v", dir, err)
	}
	for _, v := range []struct{ key, val string }{{"firstRun", c.FirstRun}, {"expect", c.Expect}} {
		if v.val != "pass" && v.val != "fail" {
			t.Fatalf("%s/case.yaml: %s %q: want pass or fail", dir, v.key, v.val)
		}
	}
	if c.RepoURL == "" || len(c.Drift.Edits) == 0 || len(c.Drift.Want) == 0 || len(c.Harmless.Edits) == 0 || len(c.Harmless.Want) > 0 {
		t.Fatalf("%s/case.yaml: a layout names its repoURL, a drift with edits and predictions, and a harmless change with edits only", dir)
	}
	return c
}

// runLayout builds the layout's repository, runs both changes and returns
// what is missing or wrong; none when the layout passes.
func runLayout(t *testing.T, src string, c layoutCase) []string {
	t.Helper()
	var problems []string
	for _, ch := range []struct {
		kind   string
		change layoutChange
	}{{"drift", c.Drift}, {"harmless", c.Harmless}} {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		gitIn(t, dir, "init", "-q", "-b", "main")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "base")
		base := revParse(t, dir)
		if err := editTree(dir, ch.change.Edits); err != nil {
			t.Fatalf("%s: %v", ch.kind, err)
		}
		for _, w := range ch.change.Want {
			if err := namesKeyAt(dir, w); err != nil {
				t.Fatalf("case.yaml's expectation is wrong: %v", err)
			}
		}
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", ch.kind)
		head := revParse(t, dir)

		url := "file://" + filepath.ToSlash(dir)
		ctx := context.Background()
		bf, err := gitrepo.Files(ctx, url, base, gitrepo.Limits{})
		if err != nil {
			t.Fatalf("read base: %v", err)
		}
		hf, err := gitrepo.Files(ctx, url, head, gitrepo.Limits{})
		if err != nil {
			t.Fatalf("read head: %v", err)
		}
		opt := Options{Repositories: []string{c.RepoURL}}
		if c.Cluster != "" {
			if opt.Cluster, err = ParseCluster([]byte(c.Cluster)); err != nil {
				t.Fatalf("case.yaml cluster: %v", err)
			}
		}
		res, err := Run(context.Background(), Revision{Name: "main", Files: bf}, Revision{Name: ch.kind, Files: hf}, opt)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: predict failed: %v", ch.kind, err))
			continue
		}
		var seen []string
		for _, p := range res.Predictions {
			seen = append(seen, fmt.Sprintf("%s %s %s %s at %s:%d", p.Application, p.Resource, p.Path, p.Cause, p.File, p.Line))
		}
		switch ch.kind {
		case "harmless":
			if len(res.Predictions) > 0 {
				problems = append(problems, fmt.Sprintf("harmless edit predicted %s", strings.Join(seen, "; ")))
			}
		case "drift":
			for _, w := range ch.change.Want {
				if !layoutFound(res.Predictions, w) {
					problems = append(problems, fmt.Sprintf("drift: no prediction %s %s/%s %s %s at %s:%d (applications %v, predicted %v, not predicted %v, notes %v)",
						w.Application, w.Kind, w.Name, w.Path, w.Cause, w.File, w.Line, res.Applications, seen, res.NotPredicted, res.Notes))
				}
			}
		}
	}
	return problems
}

// layoutFound says whether a prediction is the wanted one, at its
// application, resource, path, cause, file and line.
func layoutFound(ps []Prediction, w layoutWanted) bool {
	for _, p := range ps {
		if p.Application == w.Application && p.Resource.Kind == w.Kind && p.Resource.Name == w.Name &&
			p.Path.String() == w.Path && string(p.Cause) == w.Cause && p.File == w.File && p.Line == w.Line {
			return true
		}
	}
	return false
}

// namesKeyAt checks the case's own data: the wanted line of the file, after
// the edit, names the path's last key (a path ending in a list index is
// not checked).
func namesKeyAt(dir string, w layoutWanted) error {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(w.File)))
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	if w.Line < 1 || w.Line > len(lines) {
		return fmt.Errorf("%s has %d lines, not %d", w.File, len(lines), w.Line)
	}
	key := w.Path[strings.LastIndex(w.Path, "/")+1:]
	if strings.Trim(key, "0123456789") != "" && !strings.Contains(lines[w.Line-1], key) {
		return fmt.Errorf("%s:%d is %q, which does not name %s", w.File, w.Line, strings.TrimSpace(lines[w.Line-1]), key)
	}
	return nil
}

// editTree applies edits to the work tree in dir.
func editTree(dir string, edits []layoutEdit) error {
	for _, e := range edits {
		p := filepath.Join(dir, filepath.FromSlash(e.File))
		old, err := os.ReadFile(p)
		if err != nil && !(e.Find == "" && os.IsNotExist(err)) {
			return fmt.Errorf("edit %s: %w", e.File, err)
		}
		var now string
		switch {
		case e.Find != "":
			if n := strings.Count(string(old), e.Find); n != 1 {
				return fmt.Errorf("edit %s: %q occurs %d times, want once", e.File, e.Find, n)
			}
			now = strings.Replace(string(old), e.Find, e.Replace, 1)
		case e.Append != "":
			now = string(old) + e.Append
		default:
			return fmt.Errorf("edit %s: neither find nor append", e.File)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("edit %s: %w", e.File, err)
		}
		if err := os.WriteFile(p, []byte(now), fs.FileMode(0o644)); err != nil {
			return fmt.Errorf("edit %s: %w", e.File, err)
		}
	}
	return nil
}

// gitIn runs git in dir with a fixed identity and date.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=layouts", "-c", "user.email=layouts@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-02T10:00:00Z", "GIT_COMMITTER_DATE=2026-11-02T10:00:00Z")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func revParse(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
