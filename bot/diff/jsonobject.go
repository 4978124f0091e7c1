package diff

import (
	"encoding/json"

	"github.com/driftfix/driftfix/bot/drift"
)

// decodeJSONObject decodes a JSON object (kubectl's last-applied
// configuration) as json.Unmarshal into a map[string]any does, with the
// snapshot's own quick reader (drift.DecodeJSONFloats): objects as
// map[string]any, arrays as []any, numbers as float64, strings, bools and
// nulls. ok is false where that reader leaves the decision to encoding/json
// (a repeated key, invalid UTF-8, a number out of range, deep nesting, any
// syntax error) and for a value that is not an object.
func decodeJSONObject(s string) (m map[string]any, ok bool) {
	v, ok := drift.DecodeJSONFloats([]byte(s))
	if !ok {
		return nil, false
	}
	m, ok = v.(map[string]any)
	return m, ok
}

// unmarshalObject is json.Unmarshal of s into a map[string]any, through
// decodeJSONObject where it can.
func unmarshalObject(s string) (map[string]any, error) {
	if m, ok := decodeJSONObject(s); ok {
		return m, nil
	}
	var o map[string]any
	err := json.Unmarshal([]byte(s), &o)
	return o, err
}
