package bot

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/events"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
	"github.com/driftfix/driftfix/bot/state"
)

const signingSecret = "slack-signing-secret-of-the-test"

// buttonsConfig names who may press the digest's buttons: alice and bob by
// their GitHub logins, and the members of one user group.
const buttonsConfig = `
argocd: [{name: main, server: https://argocd.example.com, tokenEnv: T}]
slack:
  tokenEnv: S
  channel: "#gitops"
  people: {U0ALICE: alice, U0BOB: bob}
  actors: {userGroups: [S0ONCALL]}
policy: {labels: [driftfix], reviewers: [platform-oncall], draft: true, dashboard: {enabled: true}}
`

// buttonWorld is an event world whose bot serves the digest's buttons on
// 127.0.0.1, as the emulated Slack sends the presses.
type buttonWorld struct {
	*eventWorld
	in     *slack.Interactions
	srv    *httptest.Server
	client *http.Client
}

func newButtonWorld(t *testing.T, maxBody int64) *buttonWorld {
	t.Helper()
	w, now := stuckWorld(t, buttonsConfig, "shop")
	w.addRepo("web")
	w.setApp("web", "web", false, now) // Synced: seen, not stuck
	e := attachEvents(w, now)
	sl, err := slack.New(slack.Config{Token: slackToken, APIURL: w.slack.URL})
	if err != nil {
		t.Fatal(err)
	}
	b := &buttonWorld{eventWorld: e, client: &http.Client{Timeout: 10 * time.Second}}
	b.in = &slack.Interactions{Secret: func() string { return signingSecret }, MaxBody: maxBody, Actors: e.r.SlackActors, Slack: sl,
		Actions: SlackActions{Runner: e.r, Queue: e.q}, ResponseURLPrefix: w.slack.URL + "/response/", Now: func() time.Time { return now }}
	b.srv = httptest.NewServer(b.in)
	t.Cleanup(b.srv.Close)
	w.gh.SetPermission("acme", "shop", "alice", "write")
	w.gh.SetPermission("acme", "web", "alice", "maintain")
	w.gh.SetPermission("acme", "shop", "bob", "read")
	w.slack.SetUserGroup("S0ONCALL", "U0CAROL")
	return b
}

// appKey is the key of the world's application name.
func (b *buttonWorld) appKey(name string) string {
	b.t.Helper()
	for k := range b.r.appRepos {
		if strings.HasSuffix(k, "/"+name) {
			return k
		}
	}
	b.t.Fatalf("no application %s in the last cycle", name)
	return ""
}

// press sends a signed press as Slack does and waits for its reply.
func (b *buttonWorld) press(user, action, app string) (int, string) {
	b.t.Helper()
	before := len(b.slack.Responses())
	resp, err := slacktest.Interact(b.client, b.srv.URL+"/slack/actions", signingSecret, time.Now(),
		b.slack.Payload(slacktest.BlockAction{User: user, ActionID: action, Value: app}))
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	b.in.Wait()
	rs := b.slack.Responses()
	if len(rs) != before+1 {
		return resp.StatusCode, ""
	}
	r := rs[len(rs)-1]
	if r.Body["response_type"] != "ephemeral" {
		b.t.Errorf("the reply is not ephemeral: %v", r.Body)
	}
	text, _ := r.Body["text"].(string)
	return resp.StatusCode, text
}

func (b *buttonWorld) snoozes() map[string]state.AppSnooze {
	b.t.Helper()
	got, err := b.r.Publisher.Store.AppSnoozes(context.Background(), worldNow)
	if err != nil {
		b.t.Fatal(err)
	}
	return got
}

// TestSlackButtonRefusals: a press that is forged (signed with another
// secret), replayed (a timestamp ten minutes old, or the same signed
// request again), unsigned or too large is refused with 401 or 413 saying
// why, gets no reply and changes nothing; so does a press of a person the policy does not map, or maps to
// a GitHub account without write access, except that they are told why.
func TestSlackButtonRefusals(t *testing.T) {
	b := newButtonWorld(t, 64<<10)
	shop := b.appKey("shop")
	payload := b.slack.Payload(slacktest.BlockAction{User: "U0ALICE", ActionID: slack.ButtonSnooze, Value: shop})
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	now := time.Now()
	big := []byte(url.Values{"payload": {string(payload)}, "pad": {strings.Repeat("x", 64<<10)}}.Encode())
	tests := []struct {
		name      string
		ts        string
		signature string
		body      []byte
		code      int
		says      string
	}{
		{"forged", strconv.FormatInt(now.Unix(), 10), slacktest.Sign("another secret", now, body), body, http.StatusUnauthorized, "does not match"},
		{"replayed", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), slacktest.Sign(signingSecret, now.Add(-10*time.Minute), body), body, http.StatusUnauthorized, "five minutes"},
		{"unsigned", strconv.FormatInt(now.Unix(), 10), "", body, http.StatusUnauthorized, "not signed"},
		{"oversized", strconv.FormatInt(now.Unix(), 10), slacktest.Sign(signingSecret, now, big), big, http.StatusRequestEntityTooLarge, "larger than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := slacktest.InteractRaw(b.client, b.srv.URL+"/slack/actions", tt.ts, tt.signature, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			said, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			b.in.Wait()
			if resp.StatusCode != tt.code || !strings.Contains(string(said), tt.says) {
				t.Errorf("answered %d %q, want %d saying %q", resp.StatusCode, said, tt.code, tt.says)
			}
		})
	}
	if rs := b.slack.Responses(); len(rs) != 0 {
		t.Errorf("refused requests got replies: %v", rs)
	}
	// The same signed request twice within five minutes: the copy is refused.
	pressed := b.slack.Payload(slacktest.BlockAction{User: "U0EVE", ActionID: slack.ButtonRecheck, Value: shop})
	signed := []byte(url.Values{"payload": {string(pressed)}}.Encode())
	for i, want := range []int{http.StatusOK, http.StatusUnauthorized} {
		resp, err := slacktest.InteractRaw(b.client, b.srv.URL+"/slack/actions", strconv.FormatInt(now.Unix(), 10), slacktest.Sign(signingSecret, now, signed), signed)
		if err != nil {
			t.Fatal(err)
		}
		said, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.in.Wait()
		if resp.StatusCode != want || (i == 1 && !strings.Contains(string(said), "received before")) {
			t.Errorf("sent %d times: answered %d %q, want %d", i+1, resp.StatusCode, said, want)
		}
	}
	if rs := b.slack.Responses(); len(rs) != 1 {
		t.Errorf("a replayed press was answered again: %d replies", len(rs))
	}
	for _, tt := range []struct{ user, says string }{
		{"U0EVE", "U0EVE is not mapped to a GitHub account in the policy's slack.people"},
		{"U0BOB", "your GitHub account bob has read access"},
	} {
		code, text := b.press(tt.user, slack.ButtonSnooze, shop)
		if code != http.StatusOK || !strings.Contains(text, tt.says) || !strings.Contains(text, "none of the user groups") {
			t.Errorf("%s: answered %d, replied %q; want a reply saying %q", tt.user, code, text, tt.says)
		}
	}
	if got := b.snoozes(); len(got) != 0 {
		t.Errorf("refused presses snoozed: %v", got)
	}
	b.settle()
	if n := b.done.Load(); n != 0 {
		t.Errorf("refused presses did %d units of work", n)
	}
}

// TestSlackButtonSnooze: a person mapped to a GitHub account with write
// access snoozes an application for 7 days and is told until when; the
// next cycle's digest leaves the snoozed application out, and opens no
// fix pull request for it, while another that became stuck with it is
// reported and fixed.
func TestSlackButtonSnooze(t *testing.T) {
	b := newButtonWorld(t, 0)
	web := b.appKey("web")
	code, text := b.press("U0ALICE", slack.ButtonSnooze, web)
	if code != http.StatusOK || !strings.Contains(text, "Snoozed "+web+" until 2026-12-09 12:00 UTC") {
		t.Fatalf("answered %d, replied %q", code, text)
	}
	got := b.snoozes()
	if s, ok := got[web]; len(got) != 1 || !ok || !s.Until.Equal(worldNow.Add(slack.SnoozeFor)) || !strings.Contains(s.By, "alice") {
		t.Fatalf("snoozes = %+v, want %s for 7 days by alice", got, web)
	}
	// web and a new application, api, become stuck: the digest tells api only.
	b.addRepo("api")
	now := worldNow.Add(15 * time.Minute)
	b.setApp("web", "web", true, now)
	b.setApp("api", "api", true, now)
	posted := len(b.slack.Posts())
	if out, err := b.r.Once(context.Background(), now); err != nil || len(out.Published.Errors) > 0 {
		t.Fatalf("cycle: %v %v", err, out.Published.Errors)
	}
	var digest strings.Builder
	for _, p := range b.slack.Posts()[posted:] {
		digest.WriteString(p["attachments"])
	}
	if !strings.Contains(digest.String(), "/api") {
		t.Fatalf("the digest does not tell the newly stuck api: %s", digest.String())
	}
	if strings.Contains(digest.String(), "argocd/web") {
		t.Errorf("the digest tells the snoozed web: %s", digest.String())
	}
	if prs := b.gh.PullRequests("acme", "api"); len(prs) != 1 {
		t.Errorf("api has %d fix pull requests, want 1", len(prs))
	}
	if prs := b.gh.PullRequests("acme", "web"); len(prs) != 0 {
		t.Errorf("a fix pull request was opened for the snoozed web: %v", prs)
	}
	if ds := b.dashboards("web", true); len(ds) == 1 && !strings.Contains(ds[0].Body, "snoozed from the Slack digest by U0ALICE (GitHub alice), until 2026-12-09T12:00:00Z") {
		t.Errorf("web's dashboard does not say its fix is snoozed:\n%s", ds[0].Body)
	} else if len(ds) != 1 {
		t.Errorf("web has %d dashboards, want 1", len(ds))
	}
	if !strings.Contains(digest.String(), `"action_id":"driftfix_snooze"`) {
		t.Errorf("the digest has no buttons though the policy names people: %s", digest.String())
	}
}

// TestSlackButtonRecheck: a member of a named user group, mapped to no
// GitHub account, presses Recheck: a unit of work is queued and done, and
// it asks the next cycle to diagnose that application at once.
func TestSlackButtonRecheck(t *testing.T) {
	b := newButtonWorld(t, 0)
	shop := b.appKey("shop")
	code, text := b.press("U0CAROL", slack.ButtonRecheck, shop)
	if code != http.StatusOK || !strings.Contains(text, "A recheck of "+shop+" is queued") {
		t.Fatalf("answered %d, replied %q", code, text)
	}
	b.settle()
	b.mu.Lock()
	n := len(b.took[events.Recheck])
	b.mu.Unlock()
	if n != 1 {
		t.Fatalf("recheck units done: %d, want 1", n)
	}
	asked, err := b.r.Publisher.Store.Requested(context.Background(), shop, state.ActionRunNow)
	if err != nil || !asked {
		t.Errorf("the recheck did not ask the next cycle to diagnose %s (%v)", shop, err)
	}
	select {
	case <-b.r.soonC():
	default:
		t.Error("the recheck asked for no cycle")
	}
	// A press for an application driftfix never saw does nothing.
	if _, text := b.press("U0CAROL", slack.ButtonRecheck, "main/argocd/nope"); !strings.Contains(text, "did not see") {
		t.Errorf("unknown application: replied %q", text)
	}
}

// TestButtonKeyIsAppKey: the buttons carry an application's key as the bot
// names it, so a press finds its application.
func TestButtonKeyIsAppKey(t *testing.T) {
	for _, id := range []cycle.AppID{{Instance: "main", Namespace: "argocd", Name: "shop"}, {Instance: "https://argocd.example.com", Namespace: "team-a", Name: "web.v2"}} {
		if got, want := slack.ButtonKey(id.Instance, id.Namespace, id.Name), cycle.AppKey(id.Instance, id.Namespace, id.Name); got != want {
			t.Errorf("ButtonKey %q, AppKey %q", got, want)
		}
	}
}

// TestSlackButtonOnStandby: a replica that does not hold the Lease neither
// snoozes nor queues, and says so.
func TestSlackButtonOnStandby(t *testing.T) {
	b := newButtonWorld(t, 0)
	b.in.Actions = SlackActions{Runner: b.r, Queue: b.q, Leading: func() bool { return false }}
	shop := b.appKey("shop")
	for _, action := range []string{slack.ButtonSnooze, slack.ButtonRecheck} {
		if _, text := b.press("U0ALICE", action, shop); !strings.Contains(text, "standby") {
			t.Errorf("%s on a standby: replied %q", action, text)
		}
	}
	b.settle()
	if got := b.snoozes(); len(got) != 0 || b.done.Load() != 0 {
		t.Errorf("a standby acted: snoozes %v, units %d", got, b.done.Load())
	}
}
