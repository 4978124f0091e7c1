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
		// Normalized: the API server's own values, shown (ShownLive).
		{Resource: Ref{Kind: "ConfigMap", Name: "c"}, Path: MustPointer("/data/short"), Cause: CauseNormalized, Git: "1", InGit: true, Live: "2", InLive: true},
		{Resource: Ref{Kind: "ConfigMap", Name: "c"}, Path: MustPointer("/data/long"), Cause: CauseNormalized, Git: long, InGit: true, Live: "3", InLive: true},
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
// the kind's schema types the path as an integer, number or boolean, or where
// it is Git's own value in another form; anything else is its kind, length
// and hash, in the JSON output as in every other. What the string looks like
// (a number, a quantity, a duration, a label value, a certificate) decides
// nothing.
func TestShownLive(t *testing.T) {
	const pem = "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"
	rows := []struct {
		name   string
		path   string
		scalar bool // the schema types the path as integer, number or boolean
		git    any
		inGit  bool
		live   any
		shown  bool
	}{
		{"replicas, an integer field", "/spec/replicas", true, 2, true, 5, true},
		{"a boolean field", "/spec/paused", true, false, true, true, true},
		{"a number another writer added", "/spec/progressDeadlineSeconds", true, nil, false, 600, true},
		{"a string at an integer path is not an integer", "/spec/replicas", true, 2, true, "5", false},
		{"a string \"3\" at a string path", "/data/pin", false, "1", true, "3", false},
		{"a string \"true\" at a string path", "/data/enabled", false, "false", true, "true", false},
		{"a number at an int-or-string path", "/spec/ports/0/targetPort", false, 80, true, 8080, false},
		{"another writer's quantity", "/spec/template/spec/containers/0/resources/limits/cpu", false, "500m", true, "2", false},
		{"Git's quantity in its stored form", "/spec/template/spec/containers/0/resources/limits/cpu", false, "500m", true, "0.5", true},
		{"Git's duration in another form", "/spec/duration", false, "2160h", true, "2160h0m0s", true},
		{"Git's own value, hidden by a rule", "/data/url", false, "https://a", true, "https://a", true},
		{"a duration another writer added", "/data/timeout", false, nil, false, "30s", false},
		{"an image", "/spec/template/spec/containers/0/image", false, "web:1", true, "evil.example.net/web:1", false},
		{"a label value", "/metadata/labels/team", false, "web", true, "shop", false},
		{"a PEM at a string path", "/webhooks/0/clientConfig/caBundle", false, "", true, pem, false},
		{"RBAC rules", "/rules", false, []any{}, true, []any{map[string]any{"verbs": []any{"*"}}}, false},
		{"a password", "/data/hive-site.xml", false, "password: $(db)", true, "password: hunter2", false},
		{"a token annotation", "/metadata/annotations/token", false, nil, false, "ghp_abc", false},
		{"an object", "/spec/config", false, nil, false, map[string]any{"port": 80, "user": "admin"}, false},
		{"an object at a path typed as a number", "/spec/replicas", true, nil, false, map[string]any{"a": 1}, false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			f := Finding{Path: MustPointer(r.path), Git: r.git, InGit: r.inGit, Live: r.live, InLive: true, SchemaScalar: r.scalar}
			got := f.ShownLive()
			s, _ := got.(string)
			switch {
			case r.shown && !Equal(got, r.live):
				t.Errorf("shown %v, want %v as it is", got, r.live)
			case !r.shown && s != MaskValue(r.live):
				t.Errorf("shown %v, want it masked as %s", got, MaskValue(r.live))
			}
		})
	}
	f := Finding{Path: MustPointer("/data/pin"), Cause: CauseNormalized, Git: "1", InGit: true, Live: "3", InLive: true}
	if f.ShownLive() != "3" {
		t.Error("a normalized value is the API server's own and is shown")
	}
	m := MaskValue("password: hunter2")
	if strings.Contains(m, "hunter2") || !strings.Contains(m, "a 17-byte string another writer put there") {
		t.Errorf("MaskValue = %q, want kind and length, not the value", m)
	}
	// No digest: a four-digit PIN is found again from any hash of it by
	// trying ten thousand values.
	for _, pin := range []string{"4821", "true"} {
		m := MaskValue(pin)
		for _, h := range []string{fmt.Sprintf("%x", sha256.Sum256([]byte(pin))), fmt.Sprintf("%x", sha256.Sum256([]byte(`"`+pin+`"`)))} {
			if strings.Contains(m, h[:8]) || strings.Contains(m, pin) {
				t.Errorf("MaskValue(%q) = %q carries the value or a digest of it", pin, m)
			}
		}
	}
}
