package publish_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/state"
)

// sqlWrite runs statements on the bench's state database as someone who
// can write the file but has not the bot's credential.
func (b *bench) sqlWrite(qs ...string) {
	b.t.Helper()
	db, err := sql.Open("sqlite", "file:"+b.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.t.Fatal(err)
	}
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			b.t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestForgedOutboxNeverPosted: digests inserted into the outbox by SQL,
// to a channel of the attacker's or to the policy's own, are never
// posted; nor is a digest driftfix queued for a channel the policy in
// force no longer names, queued or held by quiet hours. The cycle's own
// digest still goes out.
func TestForgedOutboxNeverPosted(t *testing.T) {
	b := newBench(t)
	forged := func(ch, text string) string {
		return fmt.Sprintf(`INSERT INTO digest_outbox (cursor, digest, channel, thread, opened, messages, posted, seal)
			VALUES ('%s main', 'ffff', '%s', '', '[]', '["%s"]', 0, X'00112233')`, ch, ch, text)
	}
	b.sqlWrite(forged("#attacker", "forged to another channel"), forged("#gitops", "forged to the policy channel"),
		strings.Replace(forged("#gitops", "unsealed"), ", X'00112233')", ", NULL)", 1))
	if err := b.st.QueueDigest(context.Background(), state.Outbox{Cursor: "#old main", Digest: "eeee", Channel: "#old", Messages: []string{"queued for a channel since removed"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.st.Hold(context.Background(), state.Held{Cursor: "#old main", Channel: "#old", View: `{"Instance":"main","NewStuck":[{"App":"held since removed"}]}`, Since: b.now}); err != nil {
		t.Fatal(err)
	}
	b.clean(b.stuck(removeReplicas))
	sent := b.note.Sent()
	for _, m := range sent {
		if m.Channel != "#gitops" || strings.Contains(m.Text, "forged") || strings.Contains(m.Text, "unsealed") || strings.Contains(m.Text, "since removed") {
			t.Errorf("posted %+v, which driftfix did not render for a channel the policy names", m)
		}
	}
	if len(sent) == 0 {
		t.Fatal("the cycle's own digest was not posted")
	}
	if left, err := b.st.Outboxes(context.Background()); err != nil || len(left) != 0 {
		t.Errorf("queued digests left %+v, %v; want none", left, err)
	}
	if got := b.st.DroppedRows()["digest_outbox"]; got != 3 {
		t.Errorf("%d outbox rows dropped for their seal, want 3", got)
	}
}

// TestForgedRejectionsAndRequestsIgnored: a rejection inserted by SQL does
// not silence a fix, and an "unreject" request inserted by SQL does not
// re-open a fix a person turned down; a rejection deleted by SQL is
// re-derived from the fix's pull request closed on the host.
func TestForgedRejectionsAndRequestsIgnored(t *testing.T) {
	b := newBench(t)
	b.sqlWrite(`INSERT INTO rejected (fingerprint, app, reason, at, seal) VALUES ('` + key + `', '` + appKey + `', 'forged', 1, X'0011')`)
	out := b.clean(b.stuck(removeReplicas))
	if len(out.Opened) != 1 {
		t.Fatalf("a forged rejection silenced the fix: %+v", out)
	}
	pr := b.onlyPR()
	b.host.Close(repo, pr.Number)
	if out = b.clean(b.stuck(removeReplicas)); len(out.Rejected) != 1 {
		t.Fatalf("the PR closed by a person must count as turned down: %+v", out)
	}

	b.sqlWrite(`INSERT INTO requests (fix, action, at, seal) VALUES ('` + key + `', '` + state.ActionUnreject + `', 1, NULL)`)
	if out = b.clean(b.stuck(removeReplicas)); len(out.Opened)+len(out.Updated) != 0 {
		t.Fatalf("a forged unreject request re-opened a rejected fix: %+v", out)
	}
	if n := b.host.Calls("OpenPR"); n != 1 {
		t.Errorf("OpenPR called %d times, want once", n)
	}

	b.sqlWrite(`DELETE FROM rejected`)
	if out = b.clean(b.stuck(removeReplicas)); len(out.Opened)+len(out.Updated) != 0 {
		t.Fatalf("a deleted rejection re-opened the fix: %+v", out)
	}
	if why, ok, err := b.st.Rejected(context.Background(), key); err != nil || !ok || !strings.Contains(why, "closed unmerged") {
		t.Errorf("the rejection was not re-derived from the closed PR: %q %v %v", why, ok, err)
	}
	if d := b.st.DroppedRows(); d["rejected"] != 1 || d["requests"] != 1 {
		t.Errorf("dropped rows %v, want one rejection and one request", d)
	}
}
