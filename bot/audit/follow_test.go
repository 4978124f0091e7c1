package audit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink safe for the follower's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// waitKept waits until the store has kept n writes.
func waitKept(t *testing.T, s *Store, n uint64, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s.Stats().Kept == n {
			return
		}
	}
	t.Fatalf("%s: kept %d writes, want %d", what, s.Stats().Kept, n)
}

func line(i int, user string) string {
	return event(i, user, "patch", "deployments", "shop", fmt.Sprintf("web-%d", i), "", "", t0.Add(time.Duration(i)*time.Second)) + "\n"
}

// TestFollow follows a log file as the API server's log backend writes
// it: through a file that appears late, lines written in pieces, a bad
// line and a long one, a rotation by rename and a truncation in place.
func TestFollow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	store := NewStore(Options{Now: func() time.Time { return t0.Add(time.Hour) }})
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, path, store, FollowOptions{Poll: 10 * time.Millisecond, MaxLine: 4096, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	}()
	time.Sleep(50 * time.Millisecond) // the file does not exist yet
	appendFile(t, path, line(1, "oidc:alice"))
	waitKept(t, store, 1, "a file made after the follower started is read whole")

	l := line(2, "oidc:bob")
	appendFile(t, path, l[:40])
	time.Sleep(50 * time.Millisecond)
	if store.Stats().Kept != 1 {
		t.Fatal("half a line was read as an event")
	}
	appendFile(t, path, l[40:])
	waitKept(t, store, 2, "a line written in two pieces")

	appendFile(t, path, "not json\n"+`{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"patch","requestURI":"`+strings.Repeat("x", 5000)+`"}`+"\n"+line(3, "oidc:carol"))
	waitKept(t, store, 3, "after a bad line and a long one")
	if !strings.Contains(logs.String(), "audit log line skipped") || !strings.Contains(logs.String(), "longer than its bound") {
		t.Errorf("the skipped lines were not logged: %s", logs.String())
	}

	// Rotation by rename: the old file's last line (no newline yet) and
	// the new file are both read.
	appendFile(t, path, strings.TrimSuffix(line(4, "oidc:dave"), "\n"))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, line(5, "oidc:erin"))
	waitKept(t, store, 5, "across a rotation")

	// Truncation in place (copytruncate), then a shorter file.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	appendFile(t, path, line(6, "oidc:frank"))
	waitKept(t, store, 6, "after a truncation")

	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Follow returned %v, want context.Canceled", err)
	}
	for i, user := range []string{"oidc:alice", "oidc:bob", "oidc:carol", "oidc:dave", "oidc:erin", "oidc:frank"} {
		got := store.Writes(Key{Group: "apps", Resource: "deployments", Namespace: "shop", Name: fmt.Sprintf("web-%d", i+1)})
		if len(got) != 1 || got[0].User.User != user {
			t.Errorf("web-%d: writes %+v, want one by %s", i+1, got, user)
		}
	}
}

// TestFollowFromEnd: by default an existing file's past is not read.
func TestFollowFromEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	appendFile(t, path, line(1, "oidc:alice"))
	store := NewStore(Options{Now: func() time.Time { return t0.Add(time.Hour) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Follow(ctx, path, store, FollowOptions{Poll: 10 * time.Millisecond})
	time.Sleep(50 * time.Millisecond)
	appendFile(t, path, line(2, "oidc:bob"))
	waitKept(t, store, 1, "only the line written after the start")
	if got := store.Writes(Key{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web-2"}); len(got) != 1 {
		t.Errorf("writes %+v", got)
	}
}

// TestFollowUnreadable: a path that cannot be read is an error naming it.
func TestFollowUnreadable(t *testing.T) {
	dir := t.TempDir()
	err := Follow(context.Background(), filepath.Join(dir, "x", "..", "audit.log\x00"), NewStore(Options{}), FollowOptions{})
	if err == nil || !strings.Contains(err.Error(), "follow audit log") {
		t.Errorf("error %v", err)
	}
}
