package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
)

// TestTextGolden: diagnose's text (one block per finding) and -o wide, as
// committed under testdata/ (go test -run TestTextGolden -update rewrites).
func TestTextGolden(t *testing.T) {
	for _, tt := range []struct{ golden, snapshot, format string }{
		{"diagnose-01.txt", "01-hpa-statefulset.yaml", "text"},
		{"diagnose-27.txt", "27-broad-ignore-system-all.yaml", "text"},
		{"diagnose-27-wide.txt", "27-broad-ignore-system-all.yaml", "wide"},
		{"diagnose-26-clean.txt", "26-narrow-ignore-ok.yaml", "text"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			_, out, stderr := runCLI("diagnose", "--snapshot", "../../testdata/cases/"+tt.snapshot, "-o", tt.format)
			if out == "" {
				t.Fatalf("no output: %s", stderr)
			}
			checkGolden(t, filepath.Join("testdata", tt.golden), out)
		})
	}
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("output differs from %s (go test -run %s -update rewrites it):\n%s", file, t.Name(), got)
	}
}

// TestTextFits120Columns: no line of diagnose's text output is wider than
// 120 columns, for every case of the corpus.
func TestTextFits120Columns(t *testing.T) {
	cases, err := filepath.Glob("../../testdata/cases/*.yaml")
	if err != nil || len(cases) < 20 {
		t.Fatalf("%d cases, %v", len(cases), err)
	}
	for _, c := range cases {
		if strings.HasSuffix(c, ".golden.yaml") {
			continue
		}
		_, out, _ := runCLI("diagnose", "--snapshot", c)
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > textWidth {
				t.Errorf("%s line %d is %d columns:\n%s", filepath.Base(c), i+1, n, l)
			}
		}
	}
}

// unwrap undoes writeWrapped for a value without spaces: its continuation
// lines, stripped of their indent, follow it directly.
func unwrap(block, prefix string) string {
	i := strings.Index(block, prefix)
	if i < 0 {
		return ""
	}
	lines := strings.Split(block[i+len(prefix):], "\n")
	v := lines[0]
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, strings.Repeat(" ", len(prefix))) {
			break
		}
		v += strings.TrimLeft(l, " ")
	}
	return v
}

// TestValuesNeverCut: two image references that differ only after their
// 28th character (where the table used to cut them), and longer than a
// line, print whole and different. The live one is the API server's own
// (normalized), so it is shown: another writer's would be masked.
func TestValuesNeverCut(t *testing.T) {
	git := "registry.example.com/platform/payments-gateway-service:2026.10.01-build.4711-" + strings.Repeat("a", 60)
	live := "registry.example.com/platform/payments-gateway-service:2026.10.01-build.4711-" + strings.Repeat("a", 59) + "b"
	rep := &drift.Report{Application: "payments", SyncStatus: "OutOfSync", Findings: []drift.Finding{{
		Resource: drift.Ref{Group: "apps", Kind: "Deployment", Namespace: "pay", Name: "gateway"},
		Path:     drift.MustPointer("/spec/template/spec/containers/0/image"),
		Git:      git, InGit: true, Live: live, InLive: true,
		Cause:    drift.CauseNormalized,
		Evidence: []drift.Evidence{drift.Say(drift.EvidenceManager, "stored so by the API server: "+strings.Repeat("word ", 40)+"end-of-evidence")},
	}}}
	out := string(textReport(rep))
	if got := unwrap(out, "  git       "); got != `"`+git+`"` {
		t.Errorf("git value printed as %q\n%s", got, out)
	}
	if got := unwrap(out, "  live      "); got != `"`+live+`"` {
		t.Errorf("live value printed as %q\n%s", got, out)
	}
	if !strings.Contains(out, "end-of-evidence") {
		t.Errorf("evidence cut:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > textWidth {
			t.Errorf("line of %d columns: %s", utf8.RuneCountInString(l), l)
		}
	}
	wide := string(wideReport(rep))
	if !strings.Contains(wide, `"`+git+`"`) || !strings.Contains(wide, `"`+live+`"`) || !strings.Contains(wide, "end-of-evidence") {
		t.Errorf("-o wide cut a value:\n%s", wide)
	}
}

// TestScanCountsOutOfSyncNotStuck: scan says how many applications are
// OutOfSync but not stuck yet, why, and names --stuck-after.
func TestScanCountsOutOfSyncNotStuck(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	now := time.Now().Truncate(time.Second) // Argo CD's times have seconds
	srv, tokenFile := liveServer(t, now)
	scanAt := func(args []string) (int, string, error) {
		var out, errb strings.Builder
		code, err := runAt(t.Context(), now, args, &out, &errb)
		return code, out.String(), err
	}
	base := []string{"scan", "--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--no-kube", "--repo-files=false"}
	code, out, err := scanAt(base)
	if code != exitDrift || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	for _, want := range []string{
		"3 applications scanned, 1 stuck OutOfSync; 1 more OutOfSync but not stuck (yet).",
		"OutOfSync, not stuck (yet), not diagnosed: --stuck-after 10m0s is the wait after a successful sync; 0s skips it:",
		"argocd/orders: OutOfSync for 1m0s since the last sync, less than 10m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scan lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = scanAt(append(base, "-o", "json"))
	if code != exitDrift || !strings.Contains(out, `"outOfSyncNotStuck": [`) || !strings.Contains(out, `"why": "OutOfSync for 1m0s since the last sync, less than 10m0s"`) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
	// -o wide is the table of the stuck applications, as kubectl's is: a
	// header and one line each, not the JSON document.
	code, out, _ = scanAt(append(base, "-o", "wide"))
	if code != exitDrift || !strings.Contains(out, "APPLICATION") || !strings.Contains(out, "FINDINGS") || strings.Contains(out, `"outOfSyncNotStuck"`) {
		t.Errorf("wide: exit %d\n%s", code, out)
	}
	code, out, _ = scanAt(append(base, "--stuck-after", "0s"))
	if code != exitDrift || !strings.Contains(out, "2 stuck OutOfSync.") {
		t.Errorf("--stuck-after 0s: exit %d\n%s", code, out)
	}
}

// partCorpora are the snapshot sets of the repository (as
// bot/internal/corpus.Corpora lists them), from this package.
var partCorpora = []string{
	"../../testdata/cases/*.yaml",
	"../../testdata/realworld/[0-9]*.yaml",
	"../../testdata/heldout/[0-9]*.yaml",
	"../../testdata/real/*.json",
	"../../testdata/differential/*.json",
	"../../testdata/hostile/*.yaml",
	"../../remediations/testdata/*.yaml",
}

// checkPartByPart diagnoses every snapshot of the corpora part by part,
// each finding held as encode makes it, and wants write to give what
// whole gives of the whole diagnosis, byte for byte.
func checkPartByPart(t *testing.T, encode func(*drift.Finding) ([]byte, error), write func(io.Writer, string, string, [][]byte) error, whole func(*drift.Report) ([]byte, error)) {
	t.Helper()
	files, parted := 0, 0
	for _, glob := range partCorpora {
		matches, err := filepath.Glob(glob)
		if err != nil || len(matches) == 0 {
			t.Fatalf("%s: %d files, %v", glob, len(matches), err)
		}
		for _, c := range matches {
			if strings.HasSuffix(c, ".expected.yaml") {
				continue
			}
			files++
			s, err := drift.LoadSnapshot(c)
			if err != nil {
				continue // the hostile corpus: no report to compare
			}
			rep, werr := pipeline.Diagnose(s, drift.Sensitivity{})
			enc, ok, err := pipeline.DiagnoseFileEncoded(c, drift.Limits{}, drift.Sensitivity{}, encode)
			if !ok {
				continue // read whole: the whole report itself
			}
			if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
				t.Errorf("%s: error %v, whole %v", c, err, werr)
				continue
			}
			if err != nil {
				continue
			}
			parted++
			var got bytes.Buffer
			if err := write(&got, enc.Application, enc.SyncStatus, enc.Findings); err != nil {
				t.Fatal(err)
			}
			want, err := whole(rep)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: part by part\n%s\nwhole\n%s", c, got.Bytes(), want)
			}
		}
	}
	if parted < files/2 {
		t.Errorf("only %d of %d snapshots were diagnosed part by part", parted, files)
	}
	t.Logf("%d of %d snapshots diagnosed part by part", parted, files)
}

// TestTextPartByPartAsWhole: the text report of a snapshot file diagnosed a
// part at a time, each finding held as its block, is byte for byte the
// text report of the whole diagnosis, for every snapshot of the corpora.
func TestTextPartByPartAsWhole(t *testing.T) {
	checkPartByPart(t, textBlock, writeText, func(r *drift.Report) ([]byte, error) { return textReport(r), nil })
}

// TestYAMLPartByPartAsWhole: -o yaml of a snapshot file diagnosed a part at
// a time, each finding held as its YAML block, is byte for byte the YAML of
// the whole report, for every snapshot of the corpora.
func TestYAMLPartByPartAsWhole(t *testing.T) {
	checkPartByPart(t, yamlBlock, writeYAML, yamlReport)
}
