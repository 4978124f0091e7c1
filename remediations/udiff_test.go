package remediations

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// apply applies a unified diff as UnifiedDiff writes it to before, the way
// patch(1) reads one: hunks in order, context and removed lines checked.
func apply(before, diff string) (string, error) {
	if diff == "" {
		return before, nil
	}
	src := lines(before)
	dl := strings.SplitAfter(diff, "\n")
	if len(dl) < 2 || !strings.HasPrefix(dl[0], "--- a/") || !strings.HasPrefix(dl[1], "+++ b/") {
		return "", fmt.Errorf("no file header: %q", diff)
	}
	var out []string
	pos := 0
	for i := 2; i < len(dl) && dl[i] != ""; {
		var a1 int
		h := dl[i]
		if !strings.HasPrefix(h, "@@ -") {
			return "", fmt.Errorf("line %d: not a hunk header: %q", i+1, h)
		}
		a1, _ = strconv.Atoi(strings.Split(strings.TrimPrefix(strings.Fields(h)[1], "-"), ",")[0])
		start := a1 - 1
		if strings.Contains(strings.Fields(h)[1], ",0") {
			start = a1 // an empty range names the line before it
		}
		if start < pos {
			return "", fmt.Errorf("hunk %q overlaps the one before", h)
		}
		out = append(out, src[pos:start]...)
		pos = start
		i++
		for i < len(dl) && dl[i] != "" && !strings.HasPrefix(dl[i], "@@ ") {
			l := dl[i]
			if i+1 < len(dl) && dl[i+1] == `\ No newline at end of file`+"\n" {
				l += dl[i+1]
				i++
			}
			i++
			switch body := l[1:]; l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != body {
					return "", fmt.Errorf("hunk %q: line %d is %q, the diff says %q", h, pos+1, at(src, pos), body)
				}
				pos++
				if l[0] == ' ' {
					out = append(out, body)
				}
			case '+':
				out = append(out, body)
			default:
				return "", fmt.Errorf("unexpected diff line %q", l)
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.ReplaceAll(strings.Join(out, ""), noNewline, ""), nil
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end of file)"
}

// TestUnifiedDiffApplies checks on generated files that the diff, applied
// to the old file, gives the new one exactly (trailing newlines included)
// and is empty only when nothing changed; and, where git is installed, that
// `git apply` accepts it as well.
func TestUnifiedDiffApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		before, after := edited(r)
		d := UnifiedDiff("values.yaml", []byte(before), []byte(after))
		if (d == "") != (before == after) {
			t.Fatalf("case %d: diff %q for a change %v", n, d, before != after)
		}
		got, err := apply(before, d)
		if err != nil {
			t.Fatalf("case %d: %v\nbefore:\n%s\ndiff:\n%s", n, err, before, d)
		}
		if got != after {
			t.Fatalf("case %d: applying the diff gives\n%q\nwant\n%q\ndiff:\n%s", n, got, after, d)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Log("git not installed: the check with git apply is skipped")
		return
	}
	dir := t.TempDir()
	for n := range 20 {
		before, after := edited(r)
		d := UnifiedDiff("values.yaml", []byte(before), []byte(after))
		if d == "" {
			continue
		}
		write(t, filepath.Join(dir, "values.yaml"), before)
		write(t, filepath.Join(dir, "change.patch"), d)
		cmd := exec.Command("git", "apply", "--check", "change.patch")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: git apply refuses the diff: %v\n%s\ndiff:\n%s", n, err, out, d)
		}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// edited returns a generated YAML-like file and a copy with lines changed,
// removed and inserted, repeated lines included, and either side sometimes
// without a final newline.
func edited(r *rand.Rand) (string, string) {
	var a []string
	for range r.IntN(40) {
		if r.IntN(4) == 0 {
			a = append(a, "  enabled: true\n") // a repeated line
		} else {
			a = append(a, fmt.Sprintf("key%d: %d\n", r.IntN(50), r.IntN(5)))
		}
	}
	b := append([]string(nil), a...)
	for range r.IntN(6) {
		i := 0
		if len(b) > 0 {
			i = r.IntN(len(b) + 1)
		}
		switch r.IntN(3) {
		case 0:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		case 1:
			b = append(b[:i], append([]string{fmt.Sprintf("new%d: x\n", r.IntN(9))}, b[i:]...)...)
		default:
			if i < len(b) {
				b[i] = fmt.Sprintf("key%d: changed\n", r.IntN(50))
			}
		}
	}
	trim := func(s []string) string {
		j := strings.Join(s, "")
		if r.IntN(5) == 0 {
			j = strings.TrimSuffix(j, "\n")
		}
		return j
	}
	return trim(a), trim(b)
}

// FuzzUnifiedDiff checks that any diff UnifiedDiff writes applies back.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a: 1\nb: 2\n", "a: 1\nb: 3\n")
	f.Add("a: 1", "a: 1\n")
	f.Add("", "x\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		d := UnifiedDiff("f.yaml", []byte(before), []byte(after))
		got, err := apply(before, d)
		if err != nil {
			t.Fatalf("%v\ndiff:\n%s", err, d)
		}
		if got != after {
			t.Fatalf("applying the diff gives %q, want %q\ndiff:\n%s", got, after, d)
		}
	})
}

// BenchmarkUnifiedDiff5000 diffs a 5,000-line values file with a change
// every 50 lines; its memory follows the lines, not their square.
func BenchmarkUnifiedDiff5000(b *testing.B) {
	var before, after strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&before, "key%d: value%d\n", i, i)
		if i%50 == 0 {
			fmt.Fprintf(&after, "key%d: changed\n", i)
		} else {
			fmt.Fprintf(&after, "key%d: value%d\n", i, i)
		}
	}
	x, y := []byte(before.String()), []byte(after.String())
	b.ReportAllocs()
	for b.Loop() {
		if UnifiedDiff("values.yaml", x, y) == "" {
			b.Fatal("no diff")
		}
	}
}
