package drift

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxJSONValueBytes is the longest git or live value, as JSON, that the
// diagnosis output writes whole; a longer one is abbreviated (see
// abbreviate).
const MaxJSONValueBytes = 1024

// abbreviatedPrefix is how much of a long value's JSON is kept.
const abbreviatedPrefix = 120

// Abbreviated describes a git or live value left out of the output for its
// size: how long its JSON is and its SHA-256, to compare it with a file.
type Abbreviated struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// abbreviate keeps a value's JSON when it is short; a long one becomes a JSON
// string of its first bytes followed by "…", with its length and hash.
func abbreviate(raw json.RawMessage) (json.RawMessage, *Abbreviated) {
	if len(raw) <= MaxJSONValueBytes {
		return raw, nil
	}
	cut := abbreviatedPrefix
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	short, _ := json.Marshal(string(raw[:cut]) + "…")
	sum := sha256.Sum256(raw)
	return short, &Abbreviated{Bytes: len(raw), SHA256: hex.EncodeToString(sum[:])}
}

type findingJSON struct {
	Resource    Ref             `json:"resource"`
	Path        string          `json:"path"`
	Cause       Cause           `json:"cause"`
	Git         json.RawMessage `json:"git,omitempty"`
	Live        json.RawMessage `json:"live,omitempty"`
	Evidence    []Evidence      `json:"evidence"`
	Remediation Remediation     `json:"remediation"`
	// Abbreviated is set for the sides whose value was too long to write.
	Abbreviated map[string]*Abbreviated `json:"abbreviated,omitempty"`
}

type reportJSON struct {
	Application string        `json:"application"`
	SyncStatus  string        `json:"syncStatus"`
	Findings    []findingJSON `json:"findings"`
}

// MarshalJSON writes the report in the diagnosis output format. A finding's
// "git" or "live" is left out when the path does not exist on that side, and
// abbreviated when its JSON is longer than MaxJSONValueBytes: it becomes a
// string of its first 120 bytes and "…", and "abbreviated" gives, per side,
// the full value's length and SHA-256.
func (r *Report) MarshalJSON() ([]byte, error) {
	out := reportJSON{Application: r.Application, SyncStatus: r.SyncStatus, Findings: make([]findingJSON, 0, len(r.Findings))}
	for _, f := range r.Findings {
		fj, err := findingOf(f)
		if err != nil {
			return nil, err
		}
		out.Findings = append(out.Findings, fj)
	}
	return json.Marshal(out)
}

// WriteJSON writes the report to w as json.Indent (indent two spaces) of
// MarshalJSON writes it, one finding at a time, never holding the whole
// text: a large report is written without its copies.
func (r *Report) WriteJSON(w io.Writer) error {
	return writeJSON(w, r.Application, r.SyncStatus, len(r.Findings), func(i int) ([]byte, error) {
		return EncodeFinding(&r.Findings[i])
	})
}

// EncodeFinding returns f as the JSON report writes it, compact: a report
// of many findings is held this way without the values and objects they
// were read from (EncodedReport).
func EncodeFinding(f *Finding) ([]byte, error) {
	fj, err := findingOf(*f)
	if err != nil {
		return nil, err
	}
	return json.Marshal(fj)
}

// EncodedReport is a Report whose findings are held encoded, in the
// Report's order: as the JSON report writes them (EncodeFinding), or in
// another output format.
type EncodedReport struct {
	Application string
	SyncStatus  string
	Findings    [][]byte
}

// WriteJSON writes the report as Report.WriteJSON writes the report it
// encodes, byte for byte, when its findings were encoded by EncodeFinding.
func (r *EncodedReport) WriteJSON(w io.Writer) error {
	return writeJSON(w, r.Application, r.SyncStatus, len(r.Findings), func(i int) ([]byte, error) {
		return r.Findings[i], nil
	})
}

// writeJSON writes a report of n findings, item(i) the i-th as compact
// JSON, as json.Indent (two spaces) of the whole report writes it.
func writeJSON(w io.Writer, application, syncStatus string, n int, item func(i int) ([]byte, error)) error {
	head, err := json.Marshal(reportJSON{Application: application, SyncStatus: syncStatus, Findings: []findingJSON{}})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, head, "", "  "); err != nil {
		return err
	}
	text := buf.Bytes()
	// "findings" is the last field: its empty list closes the text.
	tail := []byte("[]\n}")
	if !bytes.HasSuffix(text, tail) || n == 0 {
		_, err := w.Write(append(text, '\n'))
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(text[:len(text)-len(tail)])
	bw.WriteString("[\n")
	var one bytes.Buffer
	for i := 0; i < n; i++ {
		raw, err := item(i)
		if err != nil {
			return err
		}
		one.Reset()
		if err := json.Indent(&one, raw, "    ", "  "); err != nil {
			return err
		}
		bw.WriteString("    ")
		bw.Write(one.Bytes())
		if i < n-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}

// findingOf is a finding in the output format.
func findingOf(f Finding) (findingJSON, error) {
	fj := findingJSON{Resource: f.Resource, Path: f.Path.String(), Cause: f.Cause, Evidence: f.Evidence, Remediation: f.Remediation}
	if fj.Evidence == nil {
		fj.Evidence = []Evidence{}
	}
	var err error
	if f.InGit {
		if fj.Git, err = json.Marshal(f.Git); err != nil {
			return fj, fmt.Errorf("encode git value of %s %s: %w", f.Resource, f.Path, err)
		}
	}
	if f.InLive {
		if fj.Live, err = json.Marshal(f.ShownLive()); err != nil {
			return fj, fmt.Errorf("encode live value of %s %s: %w", f.Resource, f.Path, err)
		}
	}
	for side, v := range map[string]*json.RawMessage{"git": &fj.Git, "live": &fj.Live} {
		if *v == nil {
			continue
		}
		var a *Abbreviated
		if *v, a = abbreviate(*v); a != nil {
			if fj.Abbreviated == nil {
				fj.Abbreviated = map[string]*Abbreviated{}
			}
			fj.Abbreviated[side] = a
		}
	}
	return fj, nil
}

// FindingKey identifies a finding across diagnoses and cycles of one
// application: its resource and path, except that a finding on one of the
// Application's own spec.ignoreDifferences rules is known by what the rule
// says (its Git value), since removing or narrowing one rule moves the rules
// after it to other indexes.
func FindingKey(f Finding) string {
	base := f.Resource.String() + "\x00" + f.Path.String()
	if f.Cause != CauseBroadIgnore || !f.InGit || len(f.Path) != 3 || f.Path[0] != "spec" || f.Path[1] != "ignoreDifferences" ||
		f.Resource.Kind != "Application" {
		return base
	}
	b, err := json.Marshal(NormalizeNumbers(f.Git))
	if err != nil {
		return base
	}
	return f.Resource.String() + "\x00rule\x00" + string(b)
}
