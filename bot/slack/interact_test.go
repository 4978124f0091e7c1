package slack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/slack/slacktest"
)

// actions records what the buttons asked; every application is known and
// alice may write.
type actions struct {
	mu     sync.Mutex
	asked  []string
	failed error
}

func (a *actions) Known(app string) bool { return app != "" }
func (a *actions) WriteAccess(_ context.Context, _, login string) (string, bool, error) {
	if login == "alice" {
		return "write", true, nil
	}
	return "read", false, nil
}
func (a *actions) Snooze(_ context.Context, app string, until time.Time, by string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, "snooze "+app+" "+until.UTC().Format(time.RFC3339)+" "+by)
	return a.failed
}
func (a *actions) Recheck(_ context.Context, app string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, "recheck "+app)
	return a.failed
}

// TestInteractionsRequests: what is not a signed block_actions POST does
// nothing: a GET (405), no signing secret (503), an interaction of another
// type (200, ignored), the Open link (200, nothing to do), and a press
// whose response_url is not Slack's: acted on, but the reply is never
// posted there.
func TestInteractionsRequests(t *testing.T) {
	sl := slacktest.NewServer(token)
	defer sl.Close()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a reply was posted outside Slack: %s %s", r.Method, r.URL)
	}))
	defer elsewhere.Close()
	secret := "signing"
	acts := &actions{}
	in := &slack.Interactions{Secret: func() string { return secret }, Actions: acts, ResponseURLPrefix: sl.URL + "/response/",
		Actors: func() (map[string]string, []string) { return map[string]string{"U0ALICE": "alice"}, nil },
		Now:    func() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) }}
	srv := httptest.NewServer(in)
	defer srv.Close()
	client := &http.Client{Timeout: 5 * time.Second}
	send := func(payload []byte) (int, string) {
		resp, err := slacktest.Interact(client, srv.URL, "signing", time.Now(), payload)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		in.Wait()
		return resp.StatusCode, string(b)
	}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	if code, _ := send([]byte(`{"type":"view_submission","user":{"id":"U0ALICE"}}`)); code != http.StatusOK {
		t.Errorf("another interaction type: %d", code)
	}
	if code, _ := send(sl.Payload(slacktest.BlockAction{User: "U0ALICE", ActionID: slack.ButtonOpenPR})); code != http.StatusOK {
		t.Errorf("the Open link: %d", code)
	}
	if len(acts.asked) != 0 || len(sl.Responses()) != 0 {
		t.Errorf("acted or replied on what asks nothing: %v %v", acts.asked, sl.Responses())
	}
	code, _ := send(sl.Payload(slacktest.BlockAction{User: "U0ALICE", ActionID: slack.ButtonSnooze, Value: "main/argocd/shop", ResponseURL: elsewhere.URL + "/x"}))
	if code != http.StatusOK || len(acts.asked) != 1 || acts.asked[0] != "snooze main/argocd/shop 2026-12-14T12:00:00Z U0ALICE (GitHub alice)" {
		t.Errorf("press with a foreign response_url: %d, asked %v", code, acts.asked)
	}
	secret = ""
	if code, body := send(sl.Payload(slacktest.BlockAction{User: "U0ALICE", ActionID: slack.ButtonRecheck, Value: "main/argocd/shop"})); code != http.StatusServiceUnavailable || !strings.Contains(body, "no Slack signing secret") {
		t.Errorf("no signing secret: %d %q", code, body)
	}
}

// TestInteractionsUserGroups: a member of a listed user group may act; the
// group's members are read with the bot token; when they cannot be read
// the person is told why.
func TestInteractionsUserGroups(t *testing.T) {
	sl := slacktest.NewServer(token)
	defer sl.Close()
	sl.SetUserGroup("S0ONCALL", "U0CAROL")
	n, err := slack.New(slack.Config{Token: token, APIURL: sl.URL})
	if err != nil {
		t.Fatal(err)
	}
	acts := &actions{}
	groups := []string{"S0ONCALL"}
	in := &slack.Interactions{Secret: func() string { return "signing" }, Actions: acts, Slack: n, ResponseURLPrefix: sl.URL + "/response/",
		Actors: func() (map[string]string, []string) { return nil, groups }}
	srv := httptest.NewServer(in)
	defer srv.Close()
	press := func(user string) string {
		resp, err := slacktest.Interact(http.DefaultClient, srv.URL, "signing", time.Now(), sl.Payload(slacktest.BlockAction{User: user, ActionID: slack.ButtonRecheck, Value: "main/argocd/shop"}))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		in.Wait()
		rs := sl.Responses()
		return rs[len(rs)-1].Body["text"].(string)
	}
	if got := press("U0CAROL"); !strings.Contains(got, "recheck of main/argocd/shop is queued") {
		t.Errorf("group member: %q", got)
	}
	if got := press("U0DAVE"); !strings.Contains(got, "none of the user groups") {
		t.Errorf("not a member: %q", got)
	}
	groups = []string{"S0GONE"}
	if got := press("U0CAROL"); !strings.Contains(got, "could not read the members of user group S0GONE (no_such_subteam") {
		t.Errorf("unknown group: %q", got)
	}
	if len(acts.asked) != 1 {
		t.Errorf("acted %v, want one recheck", acts.asked)
	}
}

// FuzzInteractions: any body Slack's signature covers (a payload driftfix
// did not expect, JSON of another shape, a form that is not one) is
// answered with 200 or 4xx and never panics the handler.
func FuzzInteractions(f *testing.F) {
	sl := slacktest.NewServer(token)
	defer sl.Close()
	f.Add([]byte("payload=" + string(sl.Payload(slacktest.BlockAction{User: "U0ALICE", ActionID: slack.ButtonSnooze, Value: "a/b/c"}))))
	f.Add([]byte(`payload={"type":"block_actions","actions":[{"action_id":"driftfix_recheck","value":""}]}`))
	f.Add([]byte("payload=%zz"))
	f.Add([]byte(`payload={"type":"block_actions","actions":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in := &slack.Interactions{Secret: func() string { return "s" }, Actions: &actions{}, ResponseURLPrefix: "http://127.0.0.1:1/response/",
			Actors: func() (map[string]string, []string) { return map[string]string{"U0ALICE": "alice"}, nil }}
		now := time.Now()
		req := httptest.NewRequest(http.MethodPost, "/slack/actions", strings.NewReader(string(body)))
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("X-Slack-Signature", slacktest.Sign("s", now, body))
		rec := httptest.NewRecorder()
		in.ServeHTTP(rec, req)
		in.Wait()
		if rec.Code != http.StatusOK && rec.Code/100 != 4 {
			t.Errorf("answered %d %q", rec.Code, rec.Body.String())
		}
	})
}
