package argocdtest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteListAsEncode: the list is written byte for byte as the encoder
// writes it whole.
func TestWriteListAsEncode(t *testing.T) {
	for _, items := range [][]any{
		{},
		{map[string]any{"metadata": map[string]any{"name": "a<b>&c", "namespace": "argocd"}}},
		{map[string]any{"spec": map[string]any{"project": "default"}, "status": map[string]any{"sync": map[string]any{"status": "Synced"}}},
			map[string]any{"status": map[string]any{"resources": []any{map[string]any{"kind": "Deployment", "n": 1.5}}, "msg": "é\u2028"}}},
	} {
		var want, got bytes.Buffer
		if err := json.NewEncoder(&want).Encode(map[string]any{"metadata": map[string]any{}, "items": items}); err != nil {
			t.Fatal(err)
		}
		writeList(&got, len(items), func(i int) ([]byte, error) { return json.Marshal(items[i]) })
		if got.String() != want.String() {
			t.Errorf("writeList:\n%s\nEncode:\n%s", got.String(), want.String())
		}
	}
}
