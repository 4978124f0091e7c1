package argocd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/driftfix/driftfix/bot/argocd/argocdtest"
	"github.com/driftfix/driftfix/bot/secretfile"
)

// TestTokenRotation: a client reading its token from a file uses a rotated
// token from the next request on, without being built again.
func TestTokenRotation(t *testing.T) {
	srv := argocdtest.NewServer("old-token")
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("old-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := secretfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{BaseURL: srv.URL, TokenFunc: f.Token, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.ListApplications(ctx); err != nil {
		t.Fatal(err)
	}
	srv.SetToken("new-token-after-rotation")
	if _, err := c.ListApplications(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("the old token must be refused now: %v", err)
	}
	if err := os.WriteFile(path, []byte("new-token-after-rotation\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListApplications(ctx); err != nil {
		t.Fatalf("the rotated token must be used without a restart: %v", err)
	}
}
