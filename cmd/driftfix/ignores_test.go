package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/ignores"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

var ignoreSnaps = []string{"../../bot/ignores/testdata/shop.yaml", "../../bot/ignores/testdata/platform.yaml"}

func runIgnores(t *testing.T, now time.Time, args ...string) (ignores.Report, string) {
	t.Helper()
	var out, errb strings.Builder
	code, err := cmdIgnores(context.Background(), args, &out, &errb, now)
	if err != nil || code != exitClean {
		t.Fatalf("ignores %v: exit %d, %v\n%s", args, code, err, errb.String())
	}
	var rep ignores.Report
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("ignores %v: %v\n%s", args, err, out.String())
	}
	return rep, errb.String()
}

// gitAt runs git in dir with fixed author, committer and date.
func gitAt(t *testing.T, dir string, when time.Time, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	d := when.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestIgnoresNamesTheCommitAndAge: with a clone of the platform repository
// whose history adds the shop rules in two commits, each rule gets the
// commit that wrote it and its age; a depth-1 clone of the same repository
// names no commit.
func TestIgnoresNamesTheCommitAndAge(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s, err := drift.LoadSnapshot(ignoreSnaps[1])
	if err != nil {
		t.Fatal(err)
	}
	app, cm := s.Repo.Files["apps/shop.yaml"], s.Repo.Files["argocd/argocd-cm.yaml"]
	cut := strings.Index(app, "    - kind: Service")
	if cut < 0 {
		t.Fatal("apps/shop.yaml changed: no Service rule")
	}
	dir := filepath.Join(t.TempDir(), "platform")
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d1, d2 := time.Date(2026, 6, 5, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitAt(t, dir, d1, "init", "-q", "-b", "main")
	write("apps/shop.yaml", app[:cut])
	write("argocd/argocd-cm.yaml", cm)
	gitAt(t, dir, d1, "add", "-A")
	gitAt(t, dir, d1, "commit", "-q", "-m", "shop: first rules")
	c1 := gitAt(t, dir, d1, "rev-parse", "HEAD")
	write("apps/shop.yaml", app)
	gitAt(t, dir, d2, "commit", "-q", "-am", "shop: more rules")
	c2 := gitAt(t, dir, d2, "rev-parse", "HEAD")

	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	rep, _ := runIgnores(t, now, append(append([]string{"--snapshot"}, ignoreSnaps...), "--repo", dir, "--format", "json")...)
	want := map[string]struct {
		commit string
		days   int
	}{
		"Application argocd/shop spec.ignoreDifferences[0]":            {c1, 181},
		"Application argocd/shop spec.ignoreDifferences[2]":            {c1, 181},
		"Application argocd/shop spec.ignoreDifferences[3]":            {c2, 10},
		"Application argocd/shop spec.ignoreDifferences[5]":            {c2, 10},
		"argocd-cm data.resource.customizations.ignoreDifferences.all": {c1, 181},
	}
	for i := range rep.Rules {
		r := &rep.Rules[i]
		w, ok := want[r.Name()]
		if !ok {
			continue
		}
		delete(want, r.Name())
		if d := r.Declared; d.Commit != w.commit || d.AgeDays == nil || *d.AgeDays != w.days {
			t.Errorf("%s: commit %s, age %v; want %s, %d days", r.Name(), d.Commit, d.AgeDays, w.commit, w.days)
		}
	}
	if len(want) > 0 {
		t.Errorf("rules missing from the report: %v", want)
	}

	shallow := filepath.Join(t.TempDir(), "shallow")
	if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "file://"+dir, shallow).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	rep, _ = runIgnores(t, now, append(append([]string{"--snapshot"}, ignoreSnaps...), "--repo", shallow, "--format", "json")...)
	for _, r := range rep.Rules {
		if r.Declared.Commit != "" || r.Declared.AgeDays != nil || !strings.Contains(r.Declared.CommitUnknown, "depth-1") {
			t.Errorf("%s from a depth-1 clone: %+v", r.Name(), r.Declared)
		}
	}
}

// TestIgnoresLiveMatchesOffline: the inventory of a live Argo CD (the
// emulated argocd-server and API server serving the two test snapshots)
// reports the same rules, hidden paths, stale and sensitive rules as the
// inventory of the snapshots themselves.
func TestIgnoresLiveMatchesOffline(t *testing.T) {
	var snaps []*drift.Snapshot
	var objs []drift.Object
	for _, f := range ignoreSnaps {
		s, err := drift.LoadSnapshot(f)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	objs = snaps[0].Cluster // the HPA and argocd-cm; platform's argocd-cm is the same
	srv := argocdtest.NewServer(liveToken, snaps...)
	t.Cleanup(srv.Close)
	ks := kubetest.NewServer(objs)
	t.Cleanup(ks.Close)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(tokenFile, []byte(liveToken), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: " + ks.URL + "}}]\n" +
		"users: [{name: u, user: {token: kube-token}}]\ncontexts: [{name: c, context: {cluster: fake, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	live, stderr := runIgnores(t, now, "--argocd-server", srv.URL, "--plaintext", "--argocd-token-file", tokenFile, "--kubeconfig", kubeconfig, "--repo-files=false", "--format", "json")
	offline, _ := runIgnores(t, now, append(append([]string{"--snapshot"}, ignoreSnaps...), "--format", "json")...)
	// Without repository files nothing is placed in Git.
	for _, r := range live.Rules {
		if r.Declared.File != "" || !strings.Contains(r.Declared.NotInGit, "not among the repository files") {
			t.Errorf("%s: %+v", r.Name(), r.Declared)
		}
	}
	strip := func(r ignores.Report) string {
		r.Rules = append([]ignores.Rule(nil), r.Rules...)
		for i := range r.Rules {
			r.Rules[i].Declared = ignores.Declared{Holder: r.Rules[i].Declared.Holder, Key: r.Rules[i].Declared.Key}
		}
		raw, _ := json.MarshalIndent(r, "", " ")
		return string(raw)
	}
	if l, o := strip(live), strip(offline); l != o {
		t.Errorf("live inventory differs from offline:\n%s\noffline:\n%s", l, o)
	}
	if len(live.Rules) != 11 || live.Stale != 3 || live.Sensitive != 4 {
		t.Errorf("live inventory: %d rules, %d stale, %d sensitive", len(live.Rules), live.Stale, live.Sensitive)
	}
	if strings.Contains(stderr, liveToken) {
		t.Error("the token appeared on stderr")
	}
}

func TestIgnoresUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ignores", "--snapshot", ignoreSnaps[0], "--format", "xml"}, "want text, json or yaml"},
		{[]string{"ignores", "--argocd-server", ""}, "--snapshot FILE"},
		{[]string{"ignores", "stray"}, `unexpected argument "stray"`},
		{[]string{"ignores", "--snapshot", "/nonexistent.yaml"}, "nonexistent"},
	} {
		t.Setenv("ARGOCD_SERVER", "")
		code, _, stderr := runCLI(tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %s", tt.args, code, stderr)
		}
	}
	code, out, _ := runCLI("ignores", "--snapshot", ignoreSnaps[0], ignoreSnaps[1], "--format", "text")
	if code != exitClean || !strings.HasPrefix(out, "11 ignore rules in 2 applications: 3 hide nothing now, 4 cover a sensitive path.") {
		t.Errorf("files listed after --snapshot, flags after them: exit %d\n%s", code, out)
	}
}

// TestDocsIgnoresExample keeps the example of docs/ignore-rules.md a real output: each
// of its lines is a line of `driftfix ignores` on the test snapshots, in order.
func TestDocsIgnoresExample(t *testing.T) {
	ex := strings.TrimSpace(docSection(t, "docs/ignore-rules.md", "ignores"))
	ex = strings.TrimSuffix(strings.TrimPrefix(ex, "```\n"), "\n```")
	code, out, stderr := runCLI("ignores", "--snapshot", ignoreSnaps[0], ignoreSnaps[1])
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := strings.Split(out, "\n")
	at := 0
	for _, line := range strings.Split(ex, "\n") {
		for at < len(got) && got[at] != line {
			at++
		}
		if at == len(got) {
			t.Fatalf("the example line of docs/ignore-rules.md %q is not in the output, in order (replace the example with lines of `go run ./cmd/driftfix ignores --snapshot bot/ignores/testdata/shop.yaml bot/ignores/testdata/platform.yaml`):\n%s", line, out)
		}
		at++
	}
}
