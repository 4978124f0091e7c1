package main

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/github/githubtest"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/bot/kube/kubetest"
)

// privateGitHub serves over HTTPS on 127.0.0.1 the private repositories
// acme/private and acme/secret and the public acme/public, the App
// installed on acme, each holding files.
func privateGitHub(t *testing.T, files map[string]string) *githubtest.Server {
	t.Helper()
	srv, err := githubtest.NewTLSServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for _, name := range []string{"private", "secret", "public"} {
		if _, err := githubtest.NewRepo(dir, "acme", name, files); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddRepo(dir, "acme", name); err != nil {
			t.Fatal(err)
		}
	}
	srv.SetPrivate("acme", "private", true)
	srv.SetPrivate("acme", "secret", true)
	return srv
}

// trusting adds the emulator's certificate to what access gives, as the
// system's CAs are trusted in production.
func trusting(srv *githubtest.Server, access gitrepo.AccessFunc) gitrepo.AccessFunc {
	return func(ctx context.Context, u string) (gitrepo.Access, error) {
		a, err := access(ctx, u)
		a.CABundle = append(a.CABundle, srv.CertificatePEM()...)
		return a, err
	}
}

// noSecret fails the test when secret is in any of texts or in any file
// under dirs.
func noSecret(t *testing.T, secret string, texts []string, dirs ...string) {
	t.Helper()
	if secret == "" {
		t.Fatal("no secret to look for")
	}
	for _, s := range texts {
		if strings.Contains(s, secret) {
			t.Errorf("the token appears in %q", s)
		}
	}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
					t.Errorf("the token was written to %s", p)
				}
			}
			return nil
		})
	}
}

// TestPrivateRepositoryWithInstallationToken: a private repository on the
// App's host is read with its owner's installation token, minted again
// once it has expired; without credentials the read fails naming the
// repository and why; the token is in no error, log line or file.
func TestPrivateRepositoryWithInstallationToken(t *testing.T) {
	srv := privateGitHub(t, map[string]string{"apps/web/deploy.yaml": "replicas: 2\n", "README.md": "x\n"})
	srv.SetTokenTTL(2 * time.Second)
	var logs bytes.Buffer
	gh, err := github.New(github.Config{AppID: srv.AppID, PrivateKey: srv.PrivateKeyPEM, BaseURL: srv.API, Transport: srv.Client().Transport,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	access, err := repoAccess(nil, gh)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	app := gitrepo.Reader{Cache: gitrepo.NewCache(8, 1<<20), Access: trusting(srv, access)}
	private := srv.GitURL("acme", "private")
	files, err := app.Files(ctx, private, "main")
	if err != nil || files["apps/web/deploy.yaml"] != "replicas: 2\n" {
		t.Fatalf("private repository with the installation token: %v %v", files, err)
	}
	if srv.CallCount("POST /{owner}/{repo}.git/git-upload-pack") == 0 {
		t.Fatal("the repository was not fetched over smart HTTP")
	}
	tok, err := gh.GitToken(ctx, githost.Repo{Owner: "acme", Name: "private"})
	if err != nil {
		t.Fatal(err)
	}
	// The token lives 2s; the branch is resolved on the remote on every read.
	time.Sleep(2100 * time.Millisecond)
	mints := srv.CallCount("POST /app/installations/{id}/access_tokens")
	if _, err := app.Files(ctx, private, "main"); err != nil {
		t.Fatalf("read after the token expired: %v", err)
	}
	if srv.CallCount("POST /app/installations/{id}/access_tokens") <= mints {
		t.Error("the expired token was not minted again")
	}
	if _, err := app.Files(ctx, srv.GitURL("acme", "public"), "main"); err != nil {
		t.Errorf("public repository: %v", err)
	}

	anonymous, err := repoAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	_, err = gitrepo.Reader{Cache: gitrepo.NewCache(8, 1<<20), Access: trusting(srv, anonymous)}.Files(ctx, private, "main")
	if err == nil {
		t.Fatal("a private repository was read without credentials")
	}
	errs = append(errs, err.Error())
	for _, want := range []string{private, "asks for credentials", "no repoCredentials entry matches"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// GitHub answers 404 for the installation of a repository that does not exist.
	_, err = gitrepo.Reader{Cache: gitrepo.NewCache(8, 1<<20), Access: trusting(srv, access)}.Files(ctx, srv.GitURL("acme", "nothing"), "main")
	if err == nil || !strings.Contains(err.Error(), "acme/nothing") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a repository that does not exist: %v", err)
	}
	errs = append(errs, err.Error())

	// A token file the host refuses is said so, by its file.
	wrongFile := filepath.Join(t.TempDir(), "wrong-token")
	if err := os.WriteFile(wrongFile, []byte("ghs_wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong, err := repoAccess([]config.RepoCredential{{URLPrefix: srv.URL + "/acme/", TokenFile: wrongFile, Key: "repoCredentials[0]", Line: 2}}, gh)
	if err != nil {
		t.Fatal(err)
	}
	_, err = gitrepo.Reader{Cache: gitrepo.NewCache(8, 1<<20), Access: trusting(srv, wrong)}.Files(ctx, private, "main")
	if err == nil || !strings.Contains(err.Error(), "refused the token in "+wrongFile) || strings.Contains(err.Error(), "ghs_wrong") {
		t.Errorf("a refused token file: %v", err)
	}
	errs = append(errs, logs.String())
	noSecret(t, tok, errs, t.TempDir())
}

// TestOncePrivateRepositories runs a cycle from a policy whose
// repoCredentials entry names a token file (and the host's CA) for
// acme/private: its application is read and planned, while acme/secret,
// which no entry covers, is reported for its application with the
// repository and why, and the cycle goes on. The token is in no output,
// log line or file, dry run or not.
func TestOncePrivateRepositories(t *testing.T) {
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	now := time.Now()
	load := func(file, name, repoURL string) *drift.Snapshot {
		s, err := drift.LoadSnapshot("../../testdata/cases/" + file)
		if err != nil {
			t.Fatal(err)
		}
		drift.Map(s.Application, "metadata")["name"] = name
		drift.Map(s.Application, "spec", "source")["repoURL"] = repoURL
		st := drift.Map(s.Application, "status")
		st["sync"] = map[string]any{"status": "OutOfSync", "revision": "main"}
		st["operationState"] = map[string]any{"phase": "Succeeded", "startedAt": now.Add(-time.Hour).Format(time.RFC3339), "finishedAt": now.Add(-time.Hour).Format(time.RFC3339)}
		return s
	}
	base, err := drift.LoadSnapshot("../../testdata/cases/01-hpa-statefulset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gh := privateGitHub(t, base.Repo.Files)
	readable := load("01-hpa-statefulset.yaml", "queue", gh.GitURL("acme", "private"))
	unreadable := load("01-hpa-statefulset.yaml", "queue-copy", gh.GitURL("acme", "secret"))
	argo := argocdtest.NewServer(liveToken, readable, unreadable)
	t.Cleanup(argo.Close)
	ks := kubetest.NewServer(readable.Cluster)
	t.Cleanup(ks.Close)

	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	argoToken := write("argo-token", liveToken)
	gitToken := write("git-token", gh.UserToken+"\n")
	ca := write("ca.pem", string(gh.CertificatePEM()))
	kubeconfig := write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: "+ks.URL+"}}]\n"+
		"users: [{name: u, user: {token: kube-token}}]\ncontexts: [{name: c, context: {cluster: fake, user: u}}]\ncurrent-context: c\n")
	cfg := write("driftfix.yaml", "stateFile: "+filepath.Join(dir, "state", "driftfix.db")+"\n"+
		"policy: {minStuckFor: 0s}\n"+
		"argocd:\n  - name: test\n    insecurePlaintext: true\n    server: "+argo.URL+"\n    tokenFile: "+argoToken+"\n    kubeconfig: "+kubeconfig+"\n"+
		"repoCredentials:\n  - urlPrefix: "+gh.URL+"/acme/private\n    tokenFile: "+gitToken+"\n    caFile: "+ca+"\n"+
		"  - {urlPrefix: "+gh.URL+"/, caFile: "+ca+"}\n")

	var texts []string
	for _, args := range [][]string{{"--config", cfg, "--dry-run"}, {"--config", cfg}} {
		var out, errb strings.Builder
		code, err := cmdOnce(context.Background(), args, &out, &errb, now)
		if err != nil || code != exitClean {
			t.Fatalf("%v: exit %d, %v\n%s\n%s", args, code, err, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "2 applications scanned, 2 stuck") {
			t.Errorf("%v: output:\n%s", args, out.String())
		}
		if args[len(args)-1] == "--dry-run" && !strings.Contains(out.String(), "== pull request on branch") {
			t.Errorf("the application on the readable private repository got no fix:\n%s\n%s", out.String(), errb.String())
		}
		stderr := errb.String()
		for _, want := range []string{"queue-copy", gh.GitURL("acme", "secret"), "asks for credentials", "names only the CA file"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: stderr does not say %q:\n%s", args, want, stderr)
			}
		}
		if strings.Contains(stderr, "acme/private.git") {
			t.Errorf("%v: the readable repository was reported:\n%s", args, stderr)
		}
		texts = append(texts, out.String(), stderr)
	}
	if gh.CallCount("POST /{owner}/{repo}.git/git-upload-pack") == 0 {
		t.Fatal("nothing was fetched from the emulator")
	}
	noSecret(t, gh.UserToken, texts, filepath.Join(dir, "state"))
}

// TestRepoAccessNamesTheEntry: a credential file that cannot be used stops
// the start, naming the policy entry and its line.
func TestRepoAccessNamesTheEntry(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "driftfix.yaml")
	policy := "argocd: [{server: https://a.example.com, tokenFile: t}]\nrepoCredentials:\n" +
		"  - {urlPrefix: https://git.example.com/, tokenFile: " + filepath.Join(dir, "token") + "}\n" +
		"  - urlPrefix: git@git.example.com:team/\n    sshKeyFile: " + filepath.Join(dir, "key") + "\n    knownHostsFile: " + filepath.Join(dir, "missing_known_hosts") + "\n"
	if err := os.WriteFile(cfgFile, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("once", "--config", cfgFile, "--dry-run")
	if code != exitUsage || !strings.Contains(stderr, "repoCredentials[1] (line 4)") || !strings.Contains(stderr, "known_hosts") {
		t.Fatalf("exit %d, %s", code, stderr)
	}
}
