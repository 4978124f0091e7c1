package argocdtest

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
)

func get(t *testing.T, srv *Server, path string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFrozenServesTheSameBytes: a frozen server answers managed-resources
// with exactly the bytes an unfrozen one encodes per request, on the first
// request and on later ones, for every case of the corpus, with resources
// shared between applications and an application without resources.
func TestFrozenServesTheSameBytes(t *testing.T) {
	var snaps []*drift.Snapshot
	for _, f := range corpus.Snapshots(t, "testdata/cases", ".yaml") {
		s, err := drift.LoadSnapshot(f)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	shared := *snaps[0]
	shared.Application = drift.DeepCopy(snaps[0].Application).(map[string]any)
	shared.Application["metadata"].(map[string]any)["name"] = "shares-resources"
	empty := &drift.Snapshot{Application: drift.Object{"metadata": map[string]any{"name": "no-resources", "namespace": "argocd"}}}
	snaps = append(snaps, &shared, empty)
	plain, frozen := NewServer("t", snaps...), NewServer("t", snaps...)
	defer plain.Close()
	defer frozen.Close()
	frozen.Freeze()
	for _, s := range snaps {
		path := "/api/v1/applications/" + s.AppName() + "/managed-resources?appNamespace=" + drift.Str(s.Application, "metadata", "namespace")
		want := get(t, plain, path)
		for i := 0; i < 2; i++ {
			if got := get(t, frozen, path); !bytes.Equal(got, want) {
				t.Fatalf("%s, request %d: frozen server sent\n%s\nunfrozen\n%s", s.AppName(), i+1, got, want)
			}
		}
	}
}
