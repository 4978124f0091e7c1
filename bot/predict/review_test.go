package predict

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var hunk = regexp.MustCompile(`^@@ -[0-9]+(?:,[0-9]+)? \+([0-9]+)(?:,([0-9]+))? @@`)

// gitDiffLines are the head lines of git's own unified diff (three lines of
// context), as GitHub places review comments.
func gitDiffLines(t *testing.T, base, head string) []int {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("git", "diff", "--no-index", "--no-color", "-U3", a, b).Output() // exit 1: they differ
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := hunk.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		from, _ := strconv.Atoi(m[1])
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		for i := from; i < from+n; i++ {
			lines = append(lines, i)
		}
	}
	return lines
}

// TestDiffLinesAsGit: the lines a suggestion may sit on are those of git's
// diff of the file (GitHub refuses a review comment elsewhere).
func TestDiffLinesAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	deploy := deployment("  replicas: 2\n", "500m")
	long := strings.Repeat("# filler\n", 20)
	tests := []struct{ name, base, head string }{
		{"one line changed", deploy, strings.Replace(deploy, "500m", "1000m", 1)},
		{"one line added", deploy, strings.Replace(deploy, "spec:\n", "spec:\n  strategy2: {}\n", 1)},
		{"one line removed", deploy, strings.Replace(deploy, "  replicas: 2\n", "", 1)},
		{"a new file", "", deploy},
		{"two changes far apart", long + deploy + long, "x: 1\n" + long + strings.Replace(deploy, "500m", "1", 1) + long + "y: 2\n"},
		{"a change at the end without a newline", deploy, deploy + "extra: true"},
		{"the same", deploy, deploy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for l := range DiffLines(tc.base, tc.head) {
				got = append(got, l)
			}
			sort.Ints(got)
			want := gitDiffLines(t, tc.base, tc.head)
			if ints(got) != ints(want) {
				t.Errorf("DiffLines %v, git diff's lines %v", got, want)
			}
		})
	}
}

func ints(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ",")
}

// FuzzDiffLines: whatever two files hold, the lines given are head's, and
// every line head adds is among them.
func FuzzDiffLines(f *testing.F) {
	f.Add("a: 1\nb: 2\n", "a: 1\nb: 3\n")
	f.Add("", "x")
	f.Add("a\nb\nc\n", "c\nb\na\n")
	f.Fuzz(func(t *testing.T, base, head string) {
		if len(base) > 4096 || len(head) > 4096 {
			return
		}
		got := DiffLines(base, head)
		n := lines(head)
		for l := range got {
			if l < 1 || l > n {
				t.Fatalf("line %d of a %d-line head", l, n)
			}
		}
		if base == head && len(got) != 0 {
			t.Fatalf("unchanged file, lines %v", got)
		}
		had := map[string]int{}
		for _, l := range strings.Split(base, "\n") {
			had[l]++
		}
		for i, l := range strings.Split(head, "\n") {
			if had[l] == 0 && i < n && !got[i+1] {
				t.Fatalf("added line %d (%q) not among %v", i+1, l, got)
			}
		}
	})
}
