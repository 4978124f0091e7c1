package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemo runs `driftfix demo` as a new user does, from inside the clone:
// with no cluster and no network it prints, within 30 seconds, the Slack
// digest, every fix pull request's title and body, a passing driftfix/verify
// check and the Drift Dashboard, and exits 0.
func TestDemo(t *testing.T) {
	start := time.Now()
	code, out, stderr := runCLI("demo")
	took := time.Since(start)
	if code != exitClean {
		t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
	}
	if took > 30*time.Second {
		t.Errorf("the demo took %s; it should end within 30s", took)
	}
	if !strings.Contains(out, "4 applications scanned, 4 stuck; 4 fix pull requests opened.") {
		t.Errorf("the demo's summary:\n%s", firstLines(out, 3))
	}
	prs := regexp.MustCompile(`(?m)^== Pull request acme/([a-z-]+)#1: driftfix\(([a-z-]+)\): \S`).FindAllStringSubmatch(out, -1)
	if len(prs) != len(demoFleet) {
		t.Fatalf("%d pull requests printed, want %d:\n%s", len(prs), len(demoFleet), out)
	}
	for _, m := range prs {
		if m[1] != m[2] {
			t.Errorf("acme/%s's pull request is titled for %s", m[1], m[2])
		}
	}
	for _, want := range []string{
		"== Slack digest to #gitops-drift", "*Newly stuck OutOfSync*", "*Fix pull requests opened*",
		"### What drifts, and why", "```diff",
		"== Check driftfix/verify on acme/", ": success\n", "| fixed |",
		"Drift Dashboard", "<!-- driftfix:dashboard=all -->", "- [ ] run again now",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo did not print %q", want)
		}
	}
	if strings.Contains(out, "== Warnings the bot logged") || stderr != "" {
		t.Errorf("the demo's bot warned:\n%s\n%s", out[strings.Index(out, "== Warnings"):], stderr)
	}
	t.Logf("the demo took %s and printed %d lines", took.Round(time.Millisecond), strings.Count(out, "\n"))
}

// TestDemoOutsideAClone: without the fleet the demo says where it reads it
// from and how to give it.
func TestDemoOutsideAClone(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, stderr := runCLI("demo")
	if code != exitUsage || !strings.Contains(stderr, "remediations/testdata of a driftfix clone") || !strings.Contains(stderr, "--fleet DIR") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI("demo", "--fleet", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "load the demo fleet") {
		t.Fatalf("an empty --fleet: exit %d: %s", code, stderr)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
