package pipeline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/internal/corpus"
	"go.yaml.in/yaml/v3"
)

// asYAML writes a snapshot as kubectl writes YAML: block style, two
// spaces, lists at their key's indentation when flat is set.
func asYAML(tb testing.TB, s *drift.Snapshot, indent int) []byte {
	tb.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(indent)
	if err := enc.Encode(tree); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestDiagnoseFileAsWhole diagnoses every snapshot of every corpus part by
// part (as the file is, as JSON and as YAML written two ways, in parts of
// one, three and the default size) and wants the report Diagnose makes of
// the whole snapshot, byte for byte.
func TestDiagnoseFileAsWhole(t *testing.T) {
	dir := t.TempDir()
	parted, whole := 0, 0
	for _, file := range corpus.Files(t, corpus.Corpora...) {
		s, err := drift.LoadSnapshot(file)
		if err != nil {
			continue // the hostile corpus: no report to compare
		}
		want, werr := Diagnose(s, drift.Sensitivity{})
		wantJSON, _ := json.Marshal(want)
		var indented bytes.Buffer
		if werr == nil {
			// The report written a finding at a time is the indented whole.
			var written bytes.Buffer
			json.Indent(&indented, wantJSON, "", "  ")
			indented.WriteByte('\n')
			if err := want.WriteJSON(&written); err != nil || !bytes.Equal(written.Bytes(), indented.Bytes()) {
				t.Errorf("%s: WriteJSON (%v):\n%s\nwant:\n%s", file, err, written.Bytes(), indented.Bytes())
			}
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		forms := map[string][]byte{"json": raw, "yaml2": asYAML(t, s, 2), "yaml4": asYAML(t, s, 4)}
		if orig, err := os.ReadFile(file); err == nil {
			forms["file"] = orig
		}
		for form, data := range forms {
			f := filepath.Join(dir, base+"."+form)
			if err := os.WriteFile(f, data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{1, 3, partSize} {
				got, ok, gerr := reportParts(f, drift.Limits{}, drift.Sensitivity{}, size)
				if !ok {
					whole++
					if form != "file" && werr == nil && uniqueRefs(s) {
						t.Errorf("%s as %s: read whole, want part by part", file, form)
					}
					continue
				}
				parted++
				if (gerr != nil) != (werr != nil) || gerr != nil && gerr.Error() != werr.Error() {
					t.Errorf("%s as %s, parts of %d: error %v, whole %v", file, form, size, gerr, werr)
					continue
				}
				gotJSON, _ := json.Marshal(got)
				if !bytes.Equal(gotJSON, wantJSON) {
					t.Errorf("%s as %s, parts of %d: report differs\npart by part: %s\nwhole:        %s", file, form, size, gotJSON, wantJSON)
				}
				// Held encoded, the report writes what the whole one writes.
				enc, ok, eerr := encodedParts(f, drift.Limits{}, drift.Sensitivity{}, size, drift.EncodeFinding)
				if !ok || (eerr != nil) != (werr != nil) || eerr != nil && eerr.Error() != werr.Error() {
					t.Errorf("%s as %s, parts of %d, encoded: read part by part %v, error %v, whole %v", file, form, size, ok, eerr, werr)
					continue
				}
				if eerr == nil {
					var written bytes.Buffer
					if err := enc.WriteJSON(&written); err != nil || !bytes.Equal(written.Bytes(), indented.Bytes()) {
						t.Errorf("%s as %s, parts of %d: encoded report written (%v):\n%s\nwant:\n%s", file, form, size, err, written.Bytes(), indented.Bytes())
					}
				}
			}
		}
	}
	t.Logf("%d diagnoses part by part, %d read whole", parted, whole)
	if parted == 0 {
		t.Fatal("no snapshot was diagnosed part by part")
	}
}

// uniqueRefs says whether no two resources are the same object (the one
// layout DiagnoseFile leaves to Diagnose on purpose).
func uniqueRefs(s *drift.Snapshot) bool {
	seen := map[drift.Ref]bool{}
	for i := range s.Resources {
		if seen[s.Resources[i].Ref()] {
			return false
		}
		seen[s.Resources[i].Ref()] = true
	}
	return true
}
