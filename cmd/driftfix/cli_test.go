package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// sameData says whether a JSON and a YAML text carry the same data.
func sameData(t *testing.T, jsonText, yamlText string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(jsonText), &a); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, jsonText)
	}
	if err := yaml.Unmarshal([]byte(yamlText), &b); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, yamlText)
	}
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

// TestOutputFlag: -o and --output take the output format wherever --format
// does (which stays), yaml included for scan and fix; two flags that
// disagree, or a format a command does not write, are refused naming the
// flag as given.
func TestOutputFlag(t *testing.T) {
	const snap = "../../testdata/cases/27-broad-ignore-system-all.yaml"
	const fixSnap = "../../remediations/testdata/kustomize-overlay.yaml"
	ignoreArgs := []string{"ignores", "--snapshot", "../../bot/ignores/testdata/shop.yaml", "../../bot/ignores/testdata/platform.yaml"}
	for _, tt := range []struct {
		name      string
		base      []string
		formats   []string
		wantCodes []int
	}{
		{"diagnose", []string{"diagnose", "--snapshot", snap}, []string{"json", "yaml"}, []int{exitDrift}},
		{"fix", []string{"fix", "--snapshot", fixSnap, "--dry-run"}, []string{"json", "yaml"}, []int{exitDrift}},
		{"ignores", ignoreArgs, []string{"json", "yaml"}, []int{exitClean}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			outs := map[string]string{}
			for _, f := range tt.formats {
				for _, flag := range []string{"--format", "-o", "--output"} {
					code, out, stderr := runCLI(append(append([]string{}, tt.base...), flag, f)...)
					if code != tt.wantCodes[0] {
						t.Fatalf("%s %s: exit %d\n%s", flag, f, code, stderr)
					}
					if prev, ok := outs[f]; ok && prev != out {
						t.Errorf("%s %s prints other output than --format %s", flag, f, f)
					}
					outs[f] = out
				}
			}
			if !sameData(t, outs["json"], outs["yaml"]) {
				t.Errorf("-o json and -o yaml carry different data")
			}
			for _, bad := range []struct {
				args []string
				want string
			}{
				{[]string{"-o", "xml"}, `-o "xml": want text, json`},
				{[]string{"--output", "xml"}, `--output "xml": want text, json`},
				{[]string{"-o", "json", "--format", "yaml"}, `-o "json" and --format "yaml" disagree`},
			} {
				code, _, stderr := runCLI(append(append([]string{}, tt.base...), bad.args...)...)
				if code != exitUsage || !strings.Contains(stderr, bad.want) {
					t.Errorf("%v: exit %d, stderr %q, want %q", bad.args, code, stderr, bad.want)
				}
			}
		})
	}
}

// TestDiagnoseFileWithoutSnapshotFlag: a name without a flag is an
// application, as in argocd and kubectl; when it is a file, diagnose says to
// use --snapshot and reads no Argo CD.
func TestDiagnoseFileWithoutSnapshotFlag(t *testing.T) {
	t.Setenv("ARGOCD_SERVER", "")
	const snap = "../../testdata/cases/01-hpa-statefulset.yaml"
	code, out, stderr := runCLI("diagnose", snap)
	if code != exitUsage || !strings.Contains(stderr, "is a file: to diagnose a snapshot, use --snapshot "+snap) || out != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// With --argocd-server the name is an application, read live.
	t.Chdir(filepath.Dir(snap))
	code, _, stderr = runCLI("diagnose", filepath.Base(snap), "--argocd-server", closedURL(t), "--plaintext", "--no-kube", "--argocd-timeout", "1s")
	if code != exitUsage || strings.Contains(stderr, "is a file") || !strings.Contains(stderr, "argocd") {
		t.Fatalf("with --argocd-server: exit %d, stderr %q", code, stderr)
	}
	// A path is no application name (NAMESPACE/APP has one slash): the
	// answer says how to diagnose the file.
	code, _, stderr = runCLI("diagnose", "./"+filepath.Base(snap), "--argocd-server", closedURL(t), "--plaintext")
	if code != exitUsage || !strings.Contains(stderr, "use driftfix diagnose --snapshot ./"+filepath.Base(snap)) {
		t.Fatalf("a path with --argocd-server: exit %d, stderr %q", code, stderr)
	}
}

// TestSnapshotOutput: snapshot takes the format with -o and the file with
// -f/--output-file; -o json never writes a file named json; an old -o FILE
// is still written there, with a note, and what cannot be told apart is
// refused with what to type.
func TestSnapshotOutput(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	t.Setenv("ARGOCD_SERVER", "")
	srv, tokenFile := liveServer(t, time.Now())
	live := []string{"snapshot", "queue", "--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--no-kube", "--repo-files=false", "--renders=false"}
	dir := t.TempDir()
	t.Chdir(dir)
	// The reference: the JSON snapshot on standard output.
	code, ref, stderr := runCLI(live...)
	if code != exitClean || !json.Valid([]byte(ref)) {
		t.Fatalf("snapshot: exit %d, %s", code, stderr)
	}
	read := func(f string) string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct {
		name     string
		args     []string
		file     string // where the snapshot goes, "" standard output
		yaml     bool
		inStderr string
	}{
		{"-o json", []string{"-o", "json"}, "", false, ""},
		{"--output yaml", []string{"--output", "yaml"}, "", true, ""},
		{"-f", []string{"-f", "a.json"}, "a.json", false, ""},
		{"--output-file with -o yaml", []string{"-o", "yaml", "--output-file", "a.yaml"}, "a.yaml", true, ""},
		{"an old -o FILE", []string{"-o", "old.json"}, "old.json", false, "use -f old.json"},
		{"an old -o FILE.yaml", []string{"-o", filepath.Join(dir, "old.yaml")}, "old.yaml", true, "use -f"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCLI(append(append([]string{}, live...), tt.args...)...)
			if code != exitClean {
				t.Fatalf("exit %d, %s", code, stderr)
			}
			if !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.inStderr)
			}
			got := out
			if tt.file != "" {
				if out != "" {
					t.Errorf("written to a file and printed too")
				}
				got = read(tt.file)
			}
			if tt.yaml {
				if json.Valid([]byte(got)) || !sameData(t, ref, got) {
					t.Errorf("not the snapshot in YAML:\n%.300s", got)
				}
			} else if got != ref {
				t.Errorf("not the JSON snapshot:\n%.300s", got)
			}
		})
	}
	for _, name := range []string{"json", "yaml"} {
		if _, err := os.Stat(name); err == nil {
			t.Errorf("a file named %s was written", name)
		}
	}
	// The YAML snapshot diagnoses as the JSON one.
	_, fromJSON, _ := runCLI("diagnose", "--snapshot", "a.json", "-o", "json")
	_, fromYAML, _ := runCLI("diagnose", "--snapshot", "a.yaml", "-o", "json")
	if fromJSON == "" || fromJSON != fromYAML {
		t.Errorf("the YAML snapshot diagnoses differently:\n%s\n%s", fromJSON, fromYAML)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"-o a name", []string{"-o", "web"}, `-o "web": want json or yaml; to write the snapshot to a file, use -f web`},
		{"-o text", []string{"-o", "text"}, `-o "text": want json or yaml`},
		{"an old -o FILE and -f", []string{"-o", "a.json", "-f", "b.json"}, `-o "a.json" and -f "b.json" both name a file`},
		{"-f and --output-file", []string{"-f", "a.json", "--output-file", "b.json"}, `-f "a.json" and --output-file "b.json" disagree`},
		{"an old -o FILE.yaml and --output json", []string{"-o", "c.yaml", "--output", "json"}, `--output "json" disagrees with the file's extension (yaml)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(append(append([]string{}, live...), tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat("b.json"); err == nil {
		t.Error("a refused command wrote a file")
	}
}

// TestScanOutputYAML: scan -o yaml carries what -o json does.
func TestScanOutputYAML(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	now := time.Now()
	srv, tokenFile := liveServer(t, now)
	base := []string{"scan", "--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--no-kube", "--repo-files=false"}
	code, j, stderr := runCLI(append(base, "-o", "json")...)
	if code != exitDrift {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	code, y, stderr := runCLI(append(base, "--output", "yaml")...)
	if code != exitDrift || json.Valid([]byte(y)) || !sameData(t, j, y) {
		t.Fatalf("exit %d, %s\n%s", code, stderr, y)
	}
	var res struct {
		Scanned int `yaml:"scanned"`
	}
	if err := yaml.Unmarshal([]byte(y), &res); err != nil || res.Scanned != 3 {
		t.Errorf("scanned %d, %v", res.Scanned, err)
	}
}

// TestNoTokenNamesFlagAndVariable: argocd-server refusing a request sent
// without a token is reported with the flag and the variable to give one.
func TestNoTokenNamesFlagAndVariable(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	srv, _ := liveServer(t, time.Now())
	for _, args := range [][]string{
		{"diagnose", "queue"},
		{"snapshot", "queue"},
		{"scan"},
		{"ignores"},
	} {
		code, _, stderr := runCLI(append(args, "--argocd-server", srv.URL, "--plaintext", "--no-kube", "--repo-files=false")...)
		if code != exitUsage || !strings.Contains(stderr, "--argocd-token-file") || !strings.Contains(stderr, "ARGOCD_AUTH_TOKEN") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestOutputFlagHelp: every command that prints a report lists -o and
// --output in its help (--format is kept, not shown).
func TestOutputFlagHelp(t *testing.T) {
	for _, cmd := range []string{"diagnose", "scan", "fix", "ignores", "snapshot"} {
		code, out, _ := runCLI(cmd, "-h")
		if code != exitClean || !strings.Contains(out, "-o, --output string") || strings.Contains(out, "--format") {
			t.Errorf("%s -h: exit %d, want -o, --output and no --format:\n%s", cmd, code, out)
		}
	}
	if !reflect.DeepEqual(orList([]string{"json", "yaml"}), "json or yaml") {
		t.Error(orList([]string{"json", "yaml"}))
	}
}
