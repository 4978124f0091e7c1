package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/publish"
	"github.com/driftfix/driftfix/bot/publish/publishtest"
	"github.com/driftfix/driftfix/bot/state"
)

// TestPublishThroughPorts runs cycles whose publisher has only an in-memory
// Git host and notifier: the fix PR is opened on that host with the fixed
// file, remembered under the host's name, left alone while unchanged and
// closed when the drift goes; the digest goes to the notifier and the
// PR's news to its thread.
func TestPublishThroughPorts(t *testing.T) {
	w, now := stuckWorld(t, worldConfig, "shop")
	host := &publishtest.Host{}
	note := &publishtest.Notifier{}
	st, err := state.Open(context.Background(), w.dbPath, rowSeal)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, closeDB := w.runner()
	closeDB()
	r.Publisher = &publish.Publisher{Config: w.cfg, Store: st, Hosts: []publish.GitHost{host}, Notifier: note}
	once := func() Outcome {
		t.Helper()
		out, err := r.Once(context.Background(), now)
		if err != nil || len(out.Result.Errors)+len(out.Published.Errors) > 0 {
			t.Fatalf("cycle: %v %v %v", err, out.Result.Errors, out.Published.Errors)
		}
		now = now.Add(15 * time.Minute)
		return out
	}

	out := once()
	prs := host.PRs("acme/shop")
	if len(out.Published.Opened) != 1 || len(prs) != 1 || out.Published.Opened[0] != fmt.Sprintf("acme/shop#%d", prs[0].Number) {
		t.Fatalf("one PR on the in-memory host expected: %+v, host %+v", out.Published, prs)
	}
	pr := prs[0]
	fixed := string(host.Branch("acme/shop", pr.Branch)["apps/shop/web.yaml"])
	if fixed == "" || strings.Contains(fixed, "replicas:") || !strings.HasPrefix(pr.Branch, "driftfix/shop/hpa-replicas-") {
		t.Fatalf("the branch must hold the file without replicas:\n%s", fixed)
	}
	recs, err := st.PRs(context.Background(), state.PROpen)
	if err != nil || len(recs) != 1 || recs[0].Repo != "git.example.org/acme/shop" {
		t.Fatalf("the PR must be remembered under its host: %+v %v", recs, err)
	}
	if sent := note.Sent(); len(sent) != 3 || sent[0].Channel != "#gitops" || sent[0].Thread != "" || sent[1].Text != "newly stuck: argocd/shop" {
		t.Fatalf("one digest through the notifier expected: %+v", sent)
	}
	ghCalls := 0
	for _, n := range w.gh.Calls {
		ghCalls += n
	}
	if ghCalls+len(w.slack.Posts()) != 0 {
		t.Fatalf("nothing may reach GitHub or Slack: %d GitHub requests, %d Slack posts", ghCalls, len(w.slack.Posts()))
	}

	out = once() // unchanged: left alone, no digest
	if len(out.Published.Unchanged) != 1 || len(host.PRs("acme/shop")) != 1 || len(note.Sent()) != 3 {
		t.Fatalf("an unchanged fix must be left alone: %+v, %d PRs, %d messages", out.Published, len(host.PRs("acme/shop")), len(note.Sent()))
	}

	w.setApp("shop", "shop", false, now) // the drift went away
	out = once()
	if len(out.Published.Closed) != 1 || host.PRs("acme/shop")[0].State != "closed" {
		t.Fatalf("the PR must be closed when its drift goes: %+v, %+v", out.Published, host.PRs("acme/shop"))
	}
	sent := note.Sent()
	if last := sent[len(sent)-1]; len(sent) != 5 || !strings.HasPrefix(last.Text, "fix closed") || last.Thread != sent[0].ID {
		t.Fatalf("news of the PR must go in the thread of the digest that announced it: %+v", sent)
	}
}
