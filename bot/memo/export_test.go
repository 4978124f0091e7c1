package memo

import "github.com/driftfix/driftfix/bot/drift"

// What the tests of package memo_test read of a memo's insides.
var (
	EncodeEntry = encodeEntry
	DecodeEntry = decodeEntry
	AppendValue = appendValue
	ReadValue   = readValue
	CountKey    = memoCountKey
)

// Apps returns the entries the memo holds, by application.
func (m *Memo) Apps() map[string]*Entry { return m.apps }

// Cycles returns the memo's count of cycles.
func (m *Memo) Cycles() int { return m.cycles }

// EncodeEvidence is the record of a finding's evidence.
func EncodeEvidence(ev []drift.Evidence) []byte {
	w := &recWriter{}
	w.evidence(ev)
	return w.b
}

// DecodeEvidence reads evidence back from b, saying how many bytes are left.
func DecodeEvidence(b []byte) ([]drift.Evidence, int, error) {
	r := &recReader{b: b}
	ev := r.evidence()
	return ev, len(r.b), r.err
}
