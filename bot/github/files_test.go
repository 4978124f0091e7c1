package github_test

import (
	"context"
	"testing"

	"github.com/driftfix/driftfix/bot/githost"
)

// TestFile: a file is read at a branch as committed; a file or a branch
// that is not there, or a directory where the file was expected, reads as
// no file, not as an error.
func TestFile(t *testing.T) {
	srv, _ := emulator(t)
	c := appClient(t, srv)
	ctx := context.Background()
	repo := githost.Repo{Owner: "acme", Name: "apps"}
	if err := srv.CommitFile("acme", "apps", "main", "shop/deploy.yaml", "replicas: 4 # by hand\n", "dev"); err != nil {
		t.Fatal(err)
	}
	if b, err := c.File(ctx, repo, "main", "shop/deploy.yaml"); err != nil || string(b) != "replicas: 4 # by hand\n" {
		t.Fatalf("read %q %v", b, err)
	}
	for _, at := range [][2]string{{"main", "shop/missing.yaml"}, {"no-such-branch", "shop/deploy.yaml"}, {"main", "shop"}} {
		if b, err := c.File(ctx, repo, at[0], at[1]); err != nil || b != nil {
			t.Errorf("%s at %s: want no file, got %q %v", at[1], at[0], b, err)
		}
	}
}
