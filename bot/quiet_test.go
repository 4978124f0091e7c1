package bot

import (
	"strings"
	"testing"
)

// TestQuietHoursHoldDigests: no digest is posted in quiet hours; what the
// quiet cycles found is held, across restarts, and sent as one digest when
// the quiet hours end, merged with that cycle's news, each line once.
func TestQuietHoursHoldDigests(t *testing.T) {
	cfg := strings.Replace(worldConfig, "draft: true}", `draft: true, quietHours: {from: "11:00", to: "12:40", timezone: UTC}}`, 1)
	w, now := stuckWorld(t, cfg, "shop") // 12:00, quiet
	w.cycle(&now)
	w.addRepo("cart")
	w.setApp("cart", "cart", true, now)
	w.cycle(&now) // 12:15, quiet
	w.cycle(&now) // 12:30, quiet: nothing new
	if n := len(w.slack.Posts()); n != 0 || len(w.open("shop")) != 0 {
		t.Fatalf("quiet hours: %d posts, PRs %+v", n, w.open("shop"))
	}
	out := w.cycle(&now) // 12:45: the quiet hours are over
	posts := w.slack.Posts()
	if len(posts) != 1 || len(out.Published.Opened) != 2 {
		t.Fatalf("after the quiet hours one digest must say everything: %d posts, %+v", len(posts), out.Published)
	}
	body := posts[0]["attachments"]
	for _, want := range []string{"Newly stuck", "shop", "cart", "opened"} {
		if !strings.Contains(body, want) {
			t.Errorf("the digest lacks %q:\n%s", want, body)
		}
	}
	for _, app := range []string{"shop", "cart"} { // once newly stuck, once opened
		if n := strings.Count(body, "|argocd/"+app); n != 2 {
			t.Errorf("%s appears %d times, want its stuck line and its PR line once each:\n%s", app, n, body)
		}
	}
	w.cycle(&now)
	if n := len(w.slack.Posts()); n != 1 {
		t.Errorf("the held digest must be sent once, not %d times", n)
	}
}
