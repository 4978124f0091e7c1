package diff

import (
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

const sampleFields = `{
 "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
 "f:spec": {
  "f:selector": {},
  "f:template": {"f:spec": {
   "f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}},
   "f:tolerations": {"i:1": {"f:key": {}}}
  }}
 },
 "f:metadata2": {"f:finalizers": {"v:\"example.com/protect\"": {}}}
}`

var sampleLive = map[string]any{
	"metadata":  map[string]any{"labels": map[string]any{"app": "web", "tier": "x"}},
	"metadata2": map[string]any{"finalizers": []any{"other", "example.com/protect"}},
	"spec": map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{"spec": map[string]any{
			"containers": []any{
				map[string]any{"name": "sidecar", "image": "s"},
				map[string]any{"name": "web", "image": "w", "ports": []any{map[string]any{"containerPort": int64(8080), "protocol": "TCP"}}},
			},
			"tolerations": []any{map[string]any{"key": "a"}, map[string]any{"key": "b"}},
		}},
	},
}

func TestFieldSetOwns(t *testing.T) {
	fs, err := ParseFieldsV1JSON([]byte(sampleFields))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want bool
	}{
		{"/metadata/labels/app", true},
		{"/metadata/labels/tier", false},
		{"/metadata/labels", true},
		{"/spec/selector/matchLabels/app", true}, // atomic ownership of an ancestor
		{"/spec/template/spec/containers/1/image", true},
		{"/spec/template/spec/containers/0/image", false}, // the sidecar is matched by key, not index
		{"/spec/template/spec/containers/1/ports/0/containerPort", true},
		{"/spec/template/spec/containers/1", true},
		{"/spec/template/spec/tolerations/1/key", true},
		{"/spec/template/spec/tolerations/0/key", false},
		{"/metadata2/finalizers/1", true},
		{"/metadata2/finalizers/0", false},
		{"/spec/template/spec/containers/7", false},
		{"/status", false},
	}
	for _, tt := range tests {
		if got := fs.Owns(sampleLive, drift.MustPointer(tt.path)); got != tt.want {
			t.Errorf("Owns(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestEmptyFieldSetOwnsNothing: a managedFields entry whose fieldsV1 is {}
// (or only {".":{}}) owns no field, as structured-merge-diff reads it; an
// entry claiming nothing must not be taken for the owner of every field.
func TestEmptyFieldSetOwnsNothing(t *testing.T) {
	for _, raw := range []string{`{}`, `{".":{}}`} {
		fs, err := ParseFieldsV1JSON([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/spec", "/metadata/labels/app", "/spec/template/spec/containers/1/image"} {
			if fs.Owns(sampleLive, drift.MustPointer(path)) || fs.ownsForApply(sampleLive, drift.MustPointer(path)) {
				t.Errorf("%s owns %s", raw, path)
			}
		}
		if why, ok := agreeWithSMD([]byte(raw)); !ok {
			t.Errorf("%s: %s", raw, why)
		}
	}
}

func TestParseFieldsV1Errors(t *testing.T) {
	for in, want := range map[string]string{
		`{"spec": {}}`:                   "no f:, k:, v: or i: prefix",
		`{"x:spec": {}}`:                 "unknown prefix",
		`{"k:notjson": {}}`:              "list keys must be a JSON object",
		`{"v:{": {}}`:                    "set value must be JSON",
		`{"i:-1": {}}`:                   "non-negative integer",
		`{"f:a": "leaf"}`:                "expected an object",
		`[1]`:                            "expected an object",
		`{"f:a": {"f:b": {"k:[]": {}}}}`: "list keys must be a JSON object",
	} {
		if _, err := ParseFieldsV1JSON([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFieldsV1JSON(%s) error = %v, want %q", in, err, want)
		}
	}
}

func TestParseManagedFieldsSkipsBadEntries(t *testing.T) {
	live := map[string]any{"metadata": map[string]any{"managedFields": []any{
		map[string]any{"manager": "good", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:a": map[string]any{}}},
		map[string]any{"manager": "bad", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"zz": map[string]any{}}},
		map[string]any{"manager": "other", "fieldsType": "FieldsV2"},
		"not an entry",
	}}}
	entries, problems := parseManagedFields(live)
	if len(entries) != 1 || entries[0].owner.Manager != "good" {
		t.Fatalf("entries = %+v", entries)
	}
	if len(problems) != 3 {
		t.Fatalf("problems = %q, want 3", problems)
	}
}

// FuzzParseFieldsV1: arbitrary JSON never panics, and a parsed set can be
// asked about any path of any document without panicking.
func FuzzParseFieldsV1(f *testing.F) {
	f.Add([]byte(sampleFields), "/spec/template/spec/containers/1/image")
	f.Add([]byte(`{"f:a":{"k:{\"x\":1}":{"i:0":{}}}}`), "/a/0/0")
	f.Add([]byte(`{".":{}}`), "")
	f.Fuzz(func(t *testing.T, raw []byte, ptr string) {
		fs, err := ParseFieldsV1JSON(raw)
		if err != nil {
			return
		}
		p, err := drift.ParsePointer(ptr)
		if err != nil {
			return
		}
		fs.Owns(sampleLive, p)
		fs.Owns(nil, p)
	})
}
