package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

func TestReportJSONAbbreviatesLongValues(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes, cut on a character boundary
	rep := &Report{Application: "a", SyncStatus: "OutOfSync", Findings: []Finding{
		{Resource: Ref{Kind: "ConfigMap", Name: "c"}, Path: MustPointer("/data/short"), Cause: CauseUnknown, Git: "1", InGit: true, Live: "2", InLive: true},
		{Resource: Ref{Kind: "ConfigMap", Name: "c"}, Path: MustPointer("/data/long"), Cause: CauseUnknown, Git: "x", InGit: true, Live: long, InLive: true},
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
	s, _ := lng.Live.(string)
	full, _ := json.Marshal(long)
	sum := sha256.Sum256(full)
	a := lng.Abbreviated["live"]
	if !strings.HasSuffix(s, "…") || len(s) > abbreviatedPrefix+len("…") || !strings.HasPrefix(string(full), strings.TrimSuffix(s, "…")) {
		t.Errorf("live = %q, want the first bytes of its JSON and …", s)
	}
	if a.Bytes != len(full) || a.SHA256 != hex.EncodeToString(sum[:]) || lng.Git != "x" || len(lng.Abbreviated) != 1 {
		t.Errorf("abbreviated = %+v, git = %v", lng.Abbreviated, lng.Git)
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
