package bot

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/github/githubtest"
)

// TestAppManifestPermissionsExact runs the bot through what it does on
// GitHub (fix pull requests and their lifecycle, checks, the Drift
// Dashboard, commands and reactions, platform and ignore-rule pull requests,
// predict's checks and reviews) against the emulator, which holds every
// installation token to the App manifest's permissions as GitHub does, and
// records what each call needed. The manifest (deploy/github-app.yaml) must
// ask for exactly that: no permission, and no level, that no call needed.
func TestAppManifestPermissionsExact(t *testing.T) {
	manifest, err := githubtest.ManifestPermissions()
	if err != nil {
		t.Fatal(err)
	}
	rec := githubtest.RecordPermissions()
	defer rec.Stop()
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"fix pull requests", TestPublishLifecycle},
		{"verify checks", TestCheckRunFixingPR},
		{"dashboard", TestDashboardCheckboxes},
		{"commands", TestCommandsRecheckAndSnooze},
		{"platform pull requests", TestPlatformPRLifecycle},
		{"ignore-rule pull requests", TestIgnoreRuleStaleRemovalPR},
		{"predict on pull requests", TestPredictOnPullRequests},
	} {
		if !t.Run(sc.name, sc.run) {
			t.Fatalf("%s failed under the manifest's permissions", sc.name)
		}
	}
	needed, routes := rec.Needed()
	var names []string
	for n := range needed {
		names = append(names, n)
	}
	for n := range manifest {
		if needed[n] == "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-14s manifest %-6s needed %-6s by %s", n, manifest[n], needed[n], strings.Join(routes[n], ", "))
		switch {
		case needed[n] == "":
			t.Errorf("the manifest asks for %s=%s, which no call of the bot needed", n, manifest[n])
		case manifest[n] != needed[n]:
			t.Errorf("the manifest asks for %s=%q; the bot's calls need %s=%s (%s)", n, manifest[n], n, needed[n], strings.Join(routes[n], ", "))
		}
	}
}

// TestMissingPermissionNamedToTheUser: an installation that was not given a
// permission the bot needs (checks at read only, as an App created before
// driftfix asked for checks: write) gets no check, and the cycle's error
// (logged, and the cycle counted incomplete) says which permission is
// missing and where to grant it; the rest of the cycle goes on
// (the fix pull request is opened).
func TestMissingPermissionNamedToTheUser(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	perms := w.gh.Permissions()
	perms["checks"] = "read"
	w.gh.SetPermissions(perms)
	r, closeDB := w.runner()
	defer closeDB()
	out, err := r.Once(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.open("shop")) != 1 {
		t.Fatal("the fix pull request must be opened without the check")
	}
	if out.Incomplete() == nil || len(out.Published.Errors) != 1 {
		t.Fatalf("the cycle must be incomplete with one publishing error: %v", out.Published.Errors)
	}
	for _, msg := range []string{out.Published.Errors[0].Error(), w.logs.String()} {
		if !strings.Contains(msg, "checks=write") || !strings.Contains(msg, "lacks a permission") || !strings.Contains(msg, "App's settings") {
			t.Errorf("the error and the log must name the missing permission checks=write and where to grant it:\n%s", msg)
		}
	}
}
