package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestReportJSONAbbreviatesLongValues(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes, cut on a character boundary
	rep := &Report{Application: "a", SyncStatus: "OutOfSync", Findings: []Finding{
		{Resource: Ref{Kind: "ConfigMap", Name: "c"}, Path: MustPointer("/data/short"), Cause: CauseUnknown, Git: "1", InGit: true, Live: "2", InLive: true},
		{Resource: Ref{Kind: "ConfigMap", Name: "c"}, Path: MustPointer("/data/long"), Cause: CauseUnknown, Git: long, InGit: true, Live: "3", InLive: true},
	}}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Findings []struct {
			Git, Live   any
			Abbreviated map[string]Abbreviated
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	short, lng := out.Findings[0], out.Findings[1]
	if short.Git != "1" || short.Live != "2" || short.Abbreviated != nil || strings.Count(string(raw), "abbreviated") != 1 {
		t.Errorf("short values are written whole and unmarked: %s", raw)
	}
	s, _ := lng.Git.(string)
	full, _ := json.Marshal(long)
	sum := sha256.Sum256(full)
	a := lng.Abbreviated["git"]
	if !strings.HasSuffix(s, "…") || len(s) > abbreviatedPrefix+len("…") || !strings.HasPrefix(string(full), strings.TrimSuffix(s, "…")) {
		t.Errorf("git = %q, want the first bytes of its JSON and …", s)
	}
	if a.Bytes != len(full) || a.SHA256 != hex.EncodeToString(sum[:]) || lng.Live != "3" || len(lng.Abbreviated) != 1 {
		t.Errorf("abbreviated = %+v, live = %v", lng.Abbreviated, lng.Live)
	}
	if len(raw) > 2*MaxJSONValueBytes {
		t.Errorf("output is %d bytes for a 6000-byte value", len(raw))
	}
}

// TestFindingKeyFollowsTheRule: a broad rule keeps its key when removing the
// rule before it moves it from index 1 to 0; other findings keep theirs.
func TestFindingKeyFollowsTheRule(t *testing.T) {
	cm := map[string]any{"kind": "ConfigMap", "jsonPointers": []any{"/data"}}
	dep := map[string]any{"group": "apps", "kind": "Deployment", "jsonPointers": []any{"/spec/replicas"}}
	ref := Ref{Group: "argoproj.io", Kind: "Application", Namespace: "argocd", Name: "shop"}
	rule := func(i string, v any) Finding {
		return Finding{Resource: ref, Path: Pointer{"spec", "ignoreDifferences", i}, Cause: CauseBroadIgnore, Git: v, InGit: true}
	}
	if FindingKey(rule("1", dep)) != FindingKey(rule("0", dep)) {
		t.Error("the Deployment rule moved from 1 to 0 and must keep its key")
	}
	if FindingKey(rule("0", cm)) == FindingKey(rule("0", dep)) {
		t.Error("index 0 holds another rule after the change and must not match")
	}
	a := Finding{Resource: Ref{Kind: "ConfigMap", Namespace: "shop", Name: "c"}, Path: Pointer{"data", "a"}, Cause: CauseWebhookMutation, Git: "1", InGit: true}
	b := a
	b.Git = "2"
	if FindingKey(a) != FindingKey(b) {
		t.Error("a finding on a resource is keyed by resource and path, whatever its values")
	}
}

// TestShownLive: a live value another writer put there is shown only where
// it cannot carry a secret; anything else is its kind, length and hash, in
// the JSON output as in every other.
func TestShownLive(t *testing.T) {
	rows := []struct {
		path      string
		git       any
		inGit     bool
		live      any
		shownLike string
	}{
		{"/spec/replicas", 2, true, 5, ""},
		{"/spec/template/spec/containers/0/resources/limits/cpu", "500m", true, "2", ""},
		{"/spec/template/spec/containers/0/image", "web:1", true, "evil.example.net/web:1", ""},
		{"/spec/duration", "2160h", true, "2160h0m0s", ""},
		{"/spec/paused", false, true, true, ""},
		{"/metadata/labels/team", "web", true, "shop", ""},
		{"/data/timeout", nil, false, "30s", ""},
		{"/rules", []any{}, true, []any{map[string]any{"verbs": []any{"*"}}}, ""},
		{"/data/hive-site.xml", "password: $(db)", true, "password: hunter2", "a 17-byte string another writer put there, sha256 "},
		{"/metadata/annotations/token", nil, false, "ghp_abc", "a 7-byte string"},
		{"/spec/config", nil, false, map[string]any{"port": 80, "user": "admin"}, "an object of 2 keys"},
	}
	for _, r := range rows {
		f := Finding{Path: MustPointer(r.path), Git: r.git, InGit: r.inGit, Live: r.live, InLive: true}
		got := f.ShownLive()
		s, _ := got.(string)
		switch {
		case r.shownLike == "" && !Equal(got, r.live):
			t.Errorf("%s: shown %v, want %v as it is", r.path, got, r.live)
		case r.shownLike != "" && !strings.Contains(s, r.shownLike):
			t.Errorf("%s: shown %v, want a mask like %q", r.path, got, r.shownLike)
		case r.shownLike != "" && strings.Contains(s, fmt.Sprint(r.live)):
			t.Errorf("%s: the mask %q shows the value", r.path, s)
		}
	}
	sum := sha256.Sum256([]byte("hunter2"))
	if m := MaskValue("hunter2"); !strings.Contains(m, hex.EncodeToString(sum[:6])) {
		t.Errorf("MaskValue = %q, want the SHA-256 of the value's bytes", m)
	}
}
