package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	bad := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("apiVersion: driftfix/v1\nkind: Snapshot\nresources: []\nextra: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no arguments", nil, exitUsage, "Usage:"},
		{"unknown command", []string{"diagnoze"}, exitUsage, `unknown command "diagnoze"`},
		{"missing snapshot flag", []string{"diagnose"}, exitUsage, "--snapshot FILE (or an application name) is required"},
		{"bad format", []string{"diagnose", "--snapshot", "x", "--format", "xml"}, exitUsage, `--format "xml"`},
		{"unknown flag", []string{"diagnose", "--snapshto", "x"}, exitUsage, "unknown flag: --snapshto"},
		{"one dash for a long flag", []string{"diagnose", "-snapshot", "x"}, exitUsage, "-snapshot: a long flag takes two dashes: --snapshot"},
		{"missing file", []string{"diagnose", "--snapshot", "/nonexistent/s.yaml"}, exitUsage, "read snapshot"},
		{"bad snapshot names the field and line", []string{"diagnose", "--snapshot", bad}, exitUsage, bad + `:4: snapshot: unknown field "extra"`},
		{"drift found", []string{"diagnose", "--snapshot", "../../testdata/cases/01-hpa-statefulset.yaml"}, exitDrift, ""},
		{"no drift", []string{"diagnose", "--snapshot", "../../testdata/cases/11-builtin-quantity-hidden.yaml"}, exitClean, ""},
		{"version", []string{"version"}, exitClean, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.inStderr)
			}
		})
	}
}

func TestDiagnoseFormats(t *testing.T) {
	const snap = "../../testdata/cases/27-broad-ignore-system-all.yaml"
	_, jsonOut, _ := runCLI("diagnose", "--snapshot", snap, "--format", "json")
	var fromJSON map[string]any
	if err := json.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, jsonOut)
	}
	golden, err := os.ReadFile("../../testdata/cases/27-broad-ignore-system-all.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if jsonOut != string(golden) {
		t.Errorf("--format json differs from the golden diagnosis")
	}
	_, yamlOut, _ := runCLI("diagnose", "--snapshot", snap, "--format", "yaml")
	var fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(yamlOut), &fromYAML); err != nil {
		t.Fatalf("yaml output does not parse: %v", err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if !bytes.Equal(a, b) {
		t.Errorf("yaml and json outputs carry different data:\n%s\n%s", a, b)
	}
	_, text, _ := runCLI("diagnose", "--snapshot", snap)
	for _, want := range []string{"cause", "owner", "evidence", "fix", "broad-ignore", "hpa-replicas", "kube-controller-manager/scale", "manual-change", "kubectl-set", "remove-field"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	_, wide, _ := runCLI("diagnose", "--snapshot", snap, "-o", "wide")
	for _, want := range []string{"RESOURCE", "CAUSE", "OWNER", "EVIDENCE", "FIX", "broad-ignore", "hpa-replicas", "kube-controller-manager/scale", "manual-change", "kubectl-set", "remove-field"} {
		if !strings.Contains(wide, want) {
			t.Errorf("-o wide output lacks %q:\n%s", want, wide)
		}
	}
}

func TestCleanTextSaysSo(t *testing.T) {
	code, out, _ := runCLI("diagnose", "--snapshot", "../../testdata/cases/26-narrow-ignore-ok.yaml")
	if code != exitClean || !strings.Contains(out, "no drift found") {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

// TestReadmeCommandsExist checks that the snapshot the README runs is there.
func TestReadmeCommandsExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "go run ./cmd/driftfix diagnose --snapshot ") {
			f := strings.Fields(line)[5]
			if _, err := os.Stat("../../" + f); err != nil {
				t.Errorf("README runs %s: %v", f, err)
			}
			return
		}
	}
	t.Error("README does not show a diagnose command")
}

func TestFixDryRunAndWrite(t *testing.T) {
	const snap = "../../remediations/testdata/plain-remove-hpa.yaml"
	code, out, stderr := runCLI("fix", "--snapshot", snap, "--dry-run")
	if code != exitDrift || !strings.Contains(out, "-  replicas: 2   # see platform/hpa.yaml") || !strings.Contains(out, "verified: re-diagnosed") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, _, stderr := runCLI("fix", "--snapshot", snap); code != exitUsage || !strings.Contains(stderr, "--repo DIR is required") {
		t.Fatalf("writing without --repo: exit %d, %s", code, stderr)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/apps/shop", 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Repo struct{ Files map[string]string } `yaml:"repo"`
	}
	if err := yaml.Unmarshal(s, &parsed); err != nil {
		t.Fatal(err)
	}
	before := parsed.Repo.Files["apps/shop/web.yaml"]
	if err := os.WriteFile(dir+"/apps/shop/web.yaml", []byte(before), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runCLI("fix", "--snapshot", snap, "--repo", dir)
	if code != exitDrift || !strings.Contains(out, "wrote "+dir+"/apps/shop/web.yaml") {
		t.Fatalf("write: exit %d\n%s\n%s", code, out, stderr)
	}
	after, err := os.ReadFile(dir + "/apps/shop/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(before, "  # first rollout only; the HPA scales it\n  replicas: 2   # see platform/hpa.yaml\n", "", 1)
	if string(after) != want {
		t.Fatalf("written file:\n%s", after)
	}
	if info, _ := os.Stat(dir + "/apps/shop/web.yaml"); info.Mode().Perm() != 0o640 {
		t.Errorf("file mode changed to %v", info.Mode().Perm())
	}
	code, out, _ = runCLI("fix", "--snapshot", snap, "--repo", dir)
	if strings.Contains(out, "wrote ") || !strings.Contains(out, "already has this fix") {
		t.Fatalf("a second fix run must change nothing (exit %d):\n%s", code, out)
	}
	_, jsonOut, _ := runCLI("fix", "--snapshot", "../../remediations/testdata/plain-set-value.yaml", "--dry-run", "--format", "json")
	var plans struct {
		Plans []struct {
			Kind  string `json:"kind"`
			Edits []struct {
				File string `json:"file"`
				Diff string `json:"diff"`
			} `json:"edits"`
			Verification string `json:"verification"`
		} `json:"plans"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &plans); err != nil || len(plans.Plans) != 1 || plans.Plans[0].Kind != "set-value" ||
		len(plans.Plans[0].Edits) != 1 || !strings.Contains(plans.Plans[0].Edits[0].Diff, `+      cpu: "1"        # one core`) || plans.Plans[0].Verification == "" {
		t.Fatalf("json plans (%v):\n%s", err, jsonOut)
	}
}

func TestConfigValidate(t *testing.T) {
	code, out, stderr := runCLI("config", "validate", "../../deploy/driftfix.example.yaml")
	if code != exitClean || !strings.Contains(out, "valid") {
		t.Fatalf("the example config: exit %d\n%s%s", code, out, stderr)
	}
	bad := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("argocd: [{server: https://a.example.com, token: hunter2}]\nschedule: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI("config", "validate", bad)
	if code != exitUsage || !strings.Contains(stderr, bad+":1: argocd[0].token: secrets are never written") || !strings.Contains(stderr, bad+":2: schedule:") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "hunter2") {
		t.Fatal("the inline secret was echoed")
	}
	if code, _, _ := runCLI("config", "check", bad); code != exitUsage {
		t.Fatal("an unknown config subcommand is a usage error")
	}
}

// runAt runs a command as of now, returning its exit code and the error it
// would print.
func runAt(ctx context.Context, now time.Time, args []string, stdout, stderr io.Writer) (int, error) {
	c := &cli{ctx: ctx, stdout: stdout, stderr: stderr, args: args, now: func() time.Time { return now }}
	code, _, err := c.execute("driftfix")
	return code, err
}

func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	return runAt(ctx, now, append([]string{"scan"}, args...), stdout, stderr)
}

func cmdOnce(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	return runAt(ctx, now, append([]string{"once"}, args...), stdout, stderr)
}

func cmdIgnores(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) (int, error) {
	return runAt(ctx, now, append([]string{"ignores"}, args...), stdout, stderr)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	return runAt(ctx, time.Now(), append([]string{"run"}, args...), stdout, stderr)
}
