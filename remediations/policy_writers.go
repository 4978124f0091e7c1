package remediations

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations/yamledit"
	"github.com/driftfix/driftfix/templates"
)

// ErrWriterPlaced says the policy file's writers place a field manager
// already: there is nothing to add.
var ErrWriterPlaced = errors.New("the policy's writers place this manager already")

// writersPath is where AddPolicyWriter adds an entry: the global policy's writers.
var writersPath = drift.Pointer{"policy", "writers"}

// PolicyWriters reads a policy file's writers (its global policy's): the
// caller passes the policy's own parser, so that an edit is checked by what
// driftfix will read, while planning reads no policy itself.
type PolicyWriters func(src []byte) ([]drift.Writer, error)

// AddPolicyWriter returns the policy file src with one more entry at the
// end of the global policy's writers: manager, placed as is (controller or
// person, with no owns). The file is edited in place (yamledit): every
// other byte, comments and layout included, stays as it was. The manager
// comes from a cluster and may hold anything, so it is written as a
// double-quoted scalar with the glob characters of a writers entry (* ? [ \)
// escaped: the entry names exactly that manager. comment, if any, goes on a
// line above the entry; it must not hold cluster text. The result is read
// back with the policy's own parser (writers) and returned only when it is a valid
// policy whose writers place manager as is; the file as it was must be one
// too. ErrWriterPlaced: its writers place the manager already.
func AddPolicyWriter(src []byte, writers PolicyWriters, manager string, is drift.WriterKind, comment string) ([]byte, error) {
	if is != drift.WriterController && is != drift.WriterPerson {
		return nil, fmt.Errorf("add %q to the policy's writers: is %q: write controller or person", manager, is)
	}
	if manager == "" || !utf8.ValidString(manager) {
		return nil, fmt.Errorf("add a writer to the policy: the manager name is empty or not UTF-8")
	}
	if strings.ContainsAny(comment, "\r\n") {
		return nil, fmt.Errorf("add %q to the policy's writers: the comment must be one line", manager)
	}
	before, err := writers(src)
	if err != nil {
		return nil, fmt.Errorf("read the policy file before adding a writer: %w", err)
	}
	for _, w := range before {
		if w.MatchesManager(manager) {
			return nil, fmt.Errorf("%w (%s, as a %s)", ErrWriterPlaced, w.Source, w.Is)
		}
	}
	entry := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "manager"},
		{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Tag: "!!str", Value: GlobLiteral(manager)},
		{Kind: yaml.ScalarNode, Value: "is"},
		{Kind: yaml.ScalarNode, Value: string(is)},
	}}
	out, err := yamledit.AppendItem(src, 0, writersPath, entry, comment)
	if err != nil {
		return nil, fmt.Errorf("add %q to the policy's writers: %w", manager, err)
	}
	ws, err := writers(out)
	if err != nil {
		return nil, fmt.Errorf("add %q to the policy's writers: the edited file is not a valid policy: %w", manager, err)
	}
	if len(ws) != len(before)+1 {
		return nil, fmt.Errorf("add %q to the policy's writers: the edited file has %d writers, not %d", manager, len(ws), len(before)+1)
	}
	for _, w := range ws {
		if w.MatchesManager(manager) {
			if w.Is != is || len(w.Owns) > 0 {
				return nil, fmt.Errorf("add %q to the policy's writers: the edited file places it as a %s", manager, w.Is)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("add %q to the policy's writers: the edited file's writers do not name it", manager)
}

// GlobLiteral escapes the characters a writers entry's manager reads as a
// glob (path.Match: * ? [ and the backslash), so the entry matches exactly
// the name s.
func GlobLiteral(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// WriterPR is a pull request that adds a writers entry, chosen on the Drift
// Dashboard, to the policy file.
type WriterPR struct {
	// Key names the manager (WriterKey); Branch comes from it and the
	// kind, so ticking the same box again finds the same pull request, and
	// a person who closed one for the other kind can still have this one.
	Key, Branch, Title, Body string
	Fingerprint              string // the change's content
	Before, After            []byte
}

// WriterKey names a field manager in the dashboard's boxes and in the
// branch of its policy pull request, without its text.
func WriterKey(manager string) string {
	sum := sha256.Sum256([]byte("writer\x00" + manager))
	return hex.EncodeToString(sum[:6])
}

// PlanWriterPR plans the pull request that adds manager, placed as is, to
// the policy file (its path file, its content src) of the branch prefix's
// bot, as the account by ticked on the dashboard issue (owner/name#number),
// checked with the policy's parser writers. Its errors are AddPolicyWriter's.
func PlanWriterPR(prefix, file string, src []byte, writers PolicyWriters, manager string, is drift.WriterKind, dashboard, by string) (WriterPR, error) {
	after, err := AddPolicyWriter(src, writers, manager, is, fmt.Sprintf("a %s, as placed on the Drift Dashboard %s", is, dashboard))
	if err != nil {
		return WriterPR{}, err
	}
	key := WriterKey(manager)
	sum := sha256.Sum256([]byte(file + "\x00" + string(is) + "\x00" + string(after)))
	v := templates.WriterPRView{Manager: manager, Is: string(is), File: file, Dashboard: dashboard, By: by,
		Diff: UnifiedDiff(file, src, after), Fingerprint: hex.EncodeToString(sum[:6])}
	return WriterPR{Key: key, Branch: templates.WriterBranchPrefix(prefix) + key + "-" + string(is), Title: templates.WriterPRTitle(v), Body: templates.WriterPRBody(v) + templates.WriterMarker(key),
		Fingerprint: v.Fingerprint, Before: src, After: after}, nil
}
