package argocd

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"unsafe"

	"github.com/driftfix/driftfix/bot/drift"
)

// bodyDecoder is a response that decodes its body itself; do hands it the
// body instead of calling json.Unmarshal. The body is only lent: nothing
// decoded may keep a reference to it.
type bodyDecoder interface {
	decodeBody(body []byte) error
}

// streamDecoder is a response that reads a successful answer as it
// arrives, holding no more of it than it keeps: do hands it the body.
type streamDecoder interface {
	decodeStream(body io.Reader) error
}

// bodies are the buffers responses are read into; a body is decoded and let
// go before its buffer is reused (every decoder here copies what it keeps).
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer put back for reuse; a larger one (a
// big list) is left to the collector rather than held.
const maxPooledBody = 1 << 20

// decodeBody reads a managed-resources answer with the quick reader, the way
// json.Unmarshal would fill managedResponse, or, for anything the quick way
// does not read exactly as encoding/json does (a key differing only in case
// from a field's, a value of the wrong type, a duplicate key, input the quick
// reader refuses), with json.Unmarshal itself.
func (m *managedResponse) decodeBody(body []byte) error {
	if m.quick(body) {
		return nil
	}
	*m = managedResponse{}
	return json.Unmarshal(body, m)
}

var managedFields = []string{"group", "kind", "namespace", "name", "targetState", "liveState", "normalizedLiveState", "predictedLiveState", "modified", "hook"}

// exactKey reports whether k is one of fields, or none of them in any case
// (encoding/json ignores it); false when it matches one only ignoring case.
func exactKey(k string, fields []string) (known, ok bool) {
	for _, f := range fields {
		if k == f {
			return true, true
		}
		if strings.EqualFold(k, f) {
			return false, false
		}
	}
	return false, true
}

func (m *managedResponse) quick(body []byte) bool {
	v, ok := drift.DecodeJSON(body)
	if !ok {
		return false
	}
	top, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k := range top {
		if _, ok := exactKey(k, []string{"items"}); !ok {
			return false
		}
	}
	raw, present := top["items"]
	if !present || raw == nil {
		return true
	}
	list, ok := raw.([]any)
	if !ok {
		return false
	}
	m.Items = make([]managedItem, len(list))
	for i, e := range list {
		if e == nil {
			continue // null leaves the item zero
		}
		obj, ok := e.(map[string]any)
		if !ok {
			return false
		}
		it := &m.Items[i]
		for k, val := range obj {
			known, ok := exactKey(k, managedFields)
			if !ok {
				return false
			}
			if !known || val == nil {
				continue // unknown fields are ignored, null leaves the zero value
			}
			switch k {
			case "modified", "hook":
				b, ok := val.(bool)
				if !ok {
					return false
				}
				if k == "modified" {
					it.Modified = b
				} else {
					it.Hook = b
				}
				continue
			}
			s, ok := val.(string)
			if !ok {
				return false
			}
			switch k {
			case "group":
				it.Group = s
			case "kind":
				it.Kind = s
			case "namespace":
				it.Namespace = s
			case "name":
				it.Name = s
			case "targetState":
				it.TargetState = s
			case "liveState":
				it.LiveState = s
			case "normalizedLiveState":
				it.NormalizedLiveState = s
			case "predictedLiveState":
				it.PredictedLiveState = s
			}
		}
	}
	return true
}

// appResponse is an Application as argocd-server answers it, decoded as
// snapshots are read.
type appResponse struct {
	v any
}

// decodeBody decodes the body at once when the quick reader reads it;
// otherwise as before, through json.RawMessage (which refuses what
// encoding/json refuses) and decodeJSON.
func (a *appResponse) decodeBody(body []byte) error {
	if v, ok := drift.DecodeJSON(body); ok {
		a.v = v
		return nil
	}
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return err
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return err
	}
	a.v = v
	return nil
}

// stringBytes lends a string's bytes to a reader that never writes them and
// keeps no reference to them (drift.DecodeJSON copies what it keeps).
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
