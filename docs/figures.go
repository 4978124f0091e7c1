// Package docs holds the figures README.md and the pages of docs/ state
// (accuracy, recall, agreement with Argo CD, fix kinds, predict's figures),
// in one place: figures.yaml. The test that measures a figure reads its
// floor from there (Hold), and TestStatedFigures reads each figure out of the
// prose and fails where a page states another value, or states a figure
// figures.yaml does not know.
package docs

import (
	_ "embed"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed figures.yaml
var figuresYAML []byte

// Figures is the content of figures.yaml.
type Figures struct {
	// Figures are the measured figures the pages state.
	Figures []Figure `yaml:"figures"`
	// History are statements of past measures (a first run, an earlier
	// day) that no test repeats; they are listed so that every figure on a
	// page is accounted for.
	History []Statement `yaml:"history"`
	// Benchmarks are figures benchmarks measure: not asserted by a unit
	// test, but the page must name the command that produced them.
	Benchmarks []Benchmark `yaml:"benchmarks"`
	// NotFigures are numbers that read as figures and are none (HTTP
	// status codes).
	NotFigures []Statement `yaml:"not-figures"`
}

// A Figure is one measure and the values the pages state of it.
type Figure struct {
	// Name is how the measuring test names the figure.
	Name string `yaml:"name"`
	// Test is the test that measures it, as package and name.
	Test string `yaml:"test"`
	// Exact marks a figure measured offline and deterministically: a
	// measure above the stated value fails too, so the pages stay true.
	Exact bool `yaml:"exact"`
	// Values are the stated values by key, as the pages write them
	// ("0.833", "99.3", "149").
	Values map[string]string `yaml:"values"`
	// Stated are the places a page states the values.
	Stated []Statement `yaml:"stated"`
}

// A Statement is a sentence of a page with the figures in it: Text is the
// page's text with each stated value written as {key} (a key of the
// figure's Values) or {*} (a number not checked: history, benchmarks).
// Runs of white space match any run of white space.
type Statement struct {
	Doc  string `yaml:"doc"`
	Text string `yaml:"text"`
}

// A Benchmark is a section of a page (its heading's text) or a sentence
// that states what a benchmark measured, and the commands that must be
// named in that section.
type Benchmark struct {
	Doc      string   `yaml:"doc"`
	Section  string   `yaml:"section"`
	Text     string   `yaml:"text"`
	Commands []string `yaml:"commands"`
}

var (
	loadOnce sync.Once
	loaded   Figures
	loadErr  error
)

// Load parses figures.yaml.
func Load() (Figures, error) {
	loadOnce.Do(func() {
		dec := yaml.NewDecoder(strings.NewReader(string(figuresYAML)))
		dec.KnownFields(true)
		if err := dec.Decode(&loaded); err != nil {
			loadErr = fmt.Errorf("read docs/figures.yaml: %w", err)
			return
		}
		seen := map[string]bool{}
		for _, f := range loaded.Figures {
			if f.Name == "" || seen[f.Name] {
				loadErr = fmt.Errorf("read docs/figures.yaml: figure name %q is empty or given twice", f.Name)
				return
			}
			seen[f.Name] = true
			for k, v := range f.Values {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					loadErr = fmt.Errorf("read docs/figures.yaml: %s.%s is %q, not a number", f.Name, k, v)
					return
				}
			}
		}
	})
	return loaded, loadErr
}

// Stated returns the stated value of a figure's key, and how many decimals
// the pages give it.
func Stated(name, key string) (value float64, decimals int, err error) {
	fs, err := Load()
	if err != nil {
		return 0, 0, err
	}
	for _, f := range fs.Figures {
		if f.Name != name {
			continue
		}
		s, ok := f.Values[key]
		if !ok {
			return 0, 0, fmt.Errorf("docs/figures.yaml: figure %s has no value %q", name, key)
		}
		v, _ := strconv.ParseFloat(s, 64)
		if i := strings.IndexByte(s, '.'); i >= 0 {
			decimals = len(s) - i - 1
		}
		return v, decimals, nil
	}
	return 0, 0, fmt.Errorf("docs/figures.yaml has no figure %q", name)
}

// Floor returns the stated value of a figure's key, failing the test when
// there is none.
func Floor(tb testing.TB, name, key string) float64 {
	tb.Helper()
	v, _, err := Stated(name, key)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Hold checks a measured value against what the pages state: rounded to
// the decimals the pages give, it must not be below the stated value, and
// for an exact figure it must be the stated value (a rise is a figure to
// update). A percentage is given as a percentage (99.3, not 0.993).
func Hold(tb testing.TB, name, key string, measured float64) {
	tb.Helper()
	hold(tb, name, key, measured, 1)
}

// HoldCeiling is Hold for a count where fewer is better (findings wrong or
// missed): the measure must not be above the stated value, and for an
// exact figure it must be the stated value.
func HoldCeiling(tb testing.TB, name, key string, measured float64) {
	tb.Helper()
	hold(tb, name, key, measured, -1)
}

func hold(tb testing.TB, name, key string, measured float64, better float64) {
	tb.Helper()
	v, dec, err := Stated(name, key)
	if err != nil {
		tb.Fatal(err)
	}
	exact := false
	fs, _ := Load()
	for _, f := range fs.Figures {
		exact = exact || (f.Name == name && f.Exact)
	}
	scale := math.Pow(10, float64(dec))
	got := math.Round(measured*scale) / scale
	format := func(x float64) string { return strconv.FormatFloat(x, 'f', dec, 64) }
	d := (got - v) * better
	if os.Getenv(UpdateFigures) == "1" && (d < -1e-9 || exact && d > 1e-9) {
		if err := update(name, key, format(got)); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("%s %s: docs/figures.yaml now says %s (was %s); `go test ./docs -update` writes it into the pages", name, key, format(got), format(v))
		return
	}
	switch {
	case d < -1e-9:
		tb.Errorf("%s %s measured %s, worse than the stated %s (docs/figures.yaml and the pages that state it)", name, key, format(got), format(v))
	case exact && d > 1e-9:
		tb.Errorf("%s %s measured %s, better than the stated %s: state the new figure in docs/figures.yaml and the pages it lists", name, key, format(got), format(v))
	}
}

// UpdateFigures is the environment variable that, set to 1, makes Hold
// write a figure that moved into docs/figures.yaml instead of failing;
// `go test ./docs -update` then writes figures.yaml's values into the pages.
const UpdateFigures = "DRIFTFIX_UPDATE_FIGURES"

// FiguresFile is the path of figures.yaml in the source tree.
func FiguresFile() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "figures.yaml")
}

// update writes one value of a figure into figures.yaml, under a lock, as
// test processes of several packages may write at once.
func update(name, key, value string) error {
	path := FiguresFile()
	lock := path + ".lock"
	for i := 0; ; i++ {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			break
		}
		if i == 600 {
			return fmt.Errorf("update docs/figures.yaml: %s stayed locked for a minute (remove it if no test runs): %w", lock, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer os.Remove(lock)
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("update docs/figures.yaml: %w", err)
	}
	text := string(raw)
	start := strings.Index(text, "\n- name: "+name+"\n")
	if start < 0 {
		return fmt.Errorf("update docs/figures.yaml: no figure %s", name)
	}
	end := strings.Index(text[start+1:], "\n- name: ")
	if end < 0 {
		end = len(text)
	} else {
		end += start + 1
	}
	if h := strings.Index(text[start+1:end], "\n#"); h >= 0 { // the history and benchmarks below the last figure
		end = start + 1 + h
	}
	re := regexp.MustCompile(`([{,\s])` + regexp.QuoteMeta(key) + `: "[^"]*"`)
	block := text[start:end]
	if len(re.FindAllStringIndex(block, -1)) != 1 {
		return fmt.Errorf("update docs/figures.yaml: figure %s has no single value %s", name, key)
	}
	block = re.ReplaceAllString(block, "${1}"+key+`: "`+value+`"`)
	return os.WriteFile(path, []byte(text[:start]+block+text[end:]), 0o644)
}
