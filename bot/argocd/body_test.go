package argocd

import (
	"encoding/json"
	"reflect"
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
