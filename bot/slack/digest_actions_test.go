package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/templates"
)

// TestDigestButtons: with buttons, each newly stuck application and each
// opened or updated fix pull request gets Snooze and Recheck buttons
// carrying its key, and a pull request an Open link; merged and closed
// ones get none, and without buttons the digest has no actions block.
func TestDigestButtons(t *testing.T) {
	v := templates.DigestView{
		Instance: "prod",
		NewStuck: []templates.AppLine{{App: "cart", Namespace: "shop", Instance: "prod", Causes: []drift.Cause{"hpa-replicas"}}},
		Opened:   []templates.PRLine{{App: "web", Namespace: "shop", Instance: "prod", Title: "fix web", URL: "https://github.example/o/r/pull/7"}},
		Merged:   []templates.PRLine{{App: "old", Namespace: "shop", Instance: "prod", Title: "fix old", URL: "https://github.example/o/r/pull/3"}},
	}
	if n := len(actionBlocks(Digest(v))); n != 0 {
		t.Fatalf("without buttons the digest has %d actions blocks", n)
	}
	v.Buttons = true
	got := actionBlocks(Digest(v))
	if len(got) != 2 {
		t.Fatalf("got %d actions blocks, want 2 (cart, web): %v", len(got), got)
	}
	type button struct{ id, value, url string }
	read := func(b map[string]any) []button {
		var out []button
		for _, e := range b["elements"].([]map[string]any) {
			u, _ := e["url"].(string)
			val, _ := e["value"].(string)
			out = append(out, button{e["action_id"].(string), val, u})
		}
		return out
	}
	want := [][]button{
		{{ButtonSnooze, "prod/shop/cart", ""}, {ButtonRecheck, "prod/shop/cart", ""}},
		{{ButtonOpenPR, "", "https://github.example/o/r/pull/7"}, {ButtonSnooze, "prod/shop/web", ""}, {ButtonRecheck, "prod/shop/web", ""}},
	}
	for i := range want {
		b := read(got[i])
		if len(b) != len(want[i]) {
			t.Fatalf("block %d: %v, want %v", i, b, want[i])
		}
		for j := range b {
			if b[j] != want[i][j] {
				t.Errorf("block %d button %d: %v, want %v", i, j, b[j], want[i][j])
			}
		}
	}
}

func actionBlocks(msgs []Message) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		for _, a := range m.Attachments {
			for _, b := range a.Blocks {
				if b["type"] == "actions" {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// TestDigestButtonsBounded: a group of many lines gets MaxButtonRows rows
// of buttons and a note saying the rest have none; every line is still there.
func TestDigestButtonsBounded(t *testing.T) {
	v := templates.DigestView{Instance: "prod", Buttons: true}
	for i := 0; i < 40; i++ {
		v.NewStuck = append(v.NewStuck, templates.AppLine{App: fmt.Sprintf("app-%02d", i), Namespace: "argocd", Instance: "prod"})
	}
	msgs := Digest(v)
	if n := len(actionBlocks(msgs)); n != MaxButtonRows {
		t.Errorf("%d rows of buttons, want %d", n, MaxButtonRows)
	}
	raw, _ := json.Marshal(msgs)
	if !strings.Contains(string(raw), "Buttons for the first 15 lines only") {
		t.Error("no note says the other lines have no buttons")
	}
	for i := 0; i < 40; i++ {
		if !strings.Contains(string(raw), fmt.Sprintf("argocd/app-%02d`", i)) {
			t.Errorf("line of app-%02d missing", i)
		}
	}
}
