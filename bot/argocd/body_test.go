package argocd

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// managedSeeds are managed-resources answers: argocd-server's shape, and
// what the quick reader must hand to encoding/json (keys differing in case,
// wrong types, duplicates, nulls, unknown fields, invalid JSON).
var managedSeeds = []string{
	`{"items":[{"group":"apps","kind":"Deployment","namespace":"shop","name":"web","targetState":"{\"a\":1}","liveState":"null","modified":true}]}`,
	`{"items":[{"kind":"ConfigMap","name":"c","normalizedLiveState":"{}","predictedLiveState":"{\"x\":\"\\u00e9\"}","hook":true,"extra":{"y":[1]}}]}`,
	`{"items":null}`, `{}`, `{"items":[]}`, `{"items":[null]}`, `{"metadata":{}}`,
	`{"Items":[{"kind":"K"}]}`, `{"items":[{"Kind":"K"}]}`, `{"items":[{"KIND":"K","kind":"L"}]}`,
	`{"items":[{"kind":1}]}`, `{"items":[{"modified":"yes"}]}`, `{"items":[{"kind":null,"modified":null}]}`,
	`{"items":[{"kind":"a","kind":"b"}]}`, `{"items":{}}`, `{"items":[1]}`, `[]`, `null`, `{"items":[{"kind":"K"}]} x`,
	`{"items":[{"name":"\ud800"}]}`, `{"items":[{"name":"a\u0000b"}]}`, "{\"items\":[{\"name\":\"\xff\"}]}",
}

// FuzzManagedResponse: decoding a managed-resources answer the client's way
// gives what json.Unmarshal gives, error or value.
func FuzzManagedResponse(f *testing.F) {
	for _, s := range managedSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want, got managedResponse
		werr := json.Unmarshal([]byte(s), &want)
		gerr := got.decodeBody([]byte(s))
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: json.Unmarshal error %v, client's %v", s, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: client's %+v, json.Unmarshal %+v", s, got, want)
		}
	})
}

// FuzzAppResponse: an Application answer decodes to what json.RawMessage
// and decodeJSON gave before, error or value.
func FuzzAppResponse(f *testing.F) {
	for _, s := range []string{`{"metadata":{"name":"a"},"spec":{"n":1,"f":1.5}}`, `{"a":1} x`, `{"a":1,"a":2}`, `[1]`, `"s"`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var raw json.RawMessage
		var want any
		werr := json.Unmarshal([]byte(s), &raw)
		if werr == nil {
			want, werr = decodeJSON(raw)
		}
		var got appResponse
		gerr := got.decodeBody([]byte(s))
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: before %v, now %v", s, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(got.v, want) {
			t.Fatalf("%q: now %#v, before %#v", s, got.v, want)
		}
	})
}

// FuzzListResponse: the list read as it streams in gives the summaries
// json.Unmarshal of the whole answer gives, error or value; an answer
// naming items twice is refused.
func FuzzListResponse(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"metadata":{"name":"a","namespace":"argocd"},"spec":{"project":"p","source":{"repoURL":"r","targetRevision":"HEAD"},"syncPolicy":{"automated":{"selfHeal":true}},"ignoreDifferences":[{},{}]},"status":{"sync":{"status":"OutOfSync","revision":"abc"},"operationState":{"phase":"Succeeded","startedAt":"2026-01-01T00:00:00Z","finishedAt":"2026-01-01T00:01:00Z"},"resources":[{"status":"OutOfSync"},{"status":"Synced"}]}}],"metadata":{}}`,
		`{"metadata":{},"items":[{"spec":{"sources":[{"repoURL":"x"}]},"status":{"sync":{"status":"Unknown"}}}]}`,
		`{"items":null}`, `{}`, `null`, `[]`, `{"items":[null]}`, `{"Items":[{"METADATA":{"Name":"a"}}]}`,
		`{"items":[],"items":[]}`, `{"items":[{"metadata":{"name":1}}]}`, `{"items":{}}`, `{"items":[1]}`, `{"items":[]} x`,
		`{"items":[{"status":{"operationState":{"startedAt":"yesterday"}}}]}`, `{"items":[{"spec":{"source":null,"syncPolicy":{}}}]}`,
		`{"items":[{"metadata":{"name":"\ud800"}}]}`, "{\"item\u017f\":[{\"metadata\":{\"name\":\"a\"}}]}", "{\"items\":[{\"metadata\":{\"name\":\"\xff\"}}]}", `{"items":[`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var whole struct{ Items []json.RawMessage }
		werr := json.Unmarshal([]byte(s), &whole)
		var want listResponse
		for _, raw := range whole.Items {
			var it listItem
			if err := json.Unmarshal(raw, &it); err != nil && werr == nil {
				werr = err
			}
			want.add(&it, sha256.Sum256(raw))
		}
		if werr == nil && itemsKeys(s) > 1 {
			werr = errors.New("items twice")
		}
		var got listResponse
		gerr := got.decodeStream(strings.NewReader(s))
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: json.Unmarshal error %v, streamed %v", s, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(got.apps, want.apps) && (len(got.apps) > 0 || len(want.apps) > 0) {
			t.Fatalf("%q: streamed %+v, json.Unmarshal %+v", s, got.apps, want.apps)
		}
	})
}

// itemsKeys counts the top-level keys of a JSON object matching "items"
// without regard to case (0 when s is not an object).
func itemsKeys(s string) int {
	dec := json.NewDecoder(strings.NewReader(s))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return n
		}
		if k, _ := t.(string); strings.EqualFold(k, "items") {
			n++
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return n
		}
	}
	return n
}
