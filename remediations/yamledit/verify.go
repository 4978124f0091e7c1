package yamledit

import (
	"fmt"
	"strconv"

	"github.com/driftfix/driftfix/bot/drift"
)

// verify checks that after reads exactly as before with mutate applied to
// document doc and every other document unchanged. Every edit is checked this
// way, so an edit that would change anything else is refused, never written.
func verify(before, after []byte, doc int, mutate func(any) (any, bool)) error {
	b, err := Documents(before)
	if err != nil {
		return err
	}
	a, err := Documents(after)
	if err != nil {
		return fmt.Errorf("the edit would leave YAML that does not parse (%v): %w", err, ErrUnsupported)
	}
	if len(a) != len(b) {
		return fmt.Errorf("the edit would change the number of documents: %w", ErrUnsupported)
	}
	for i := range b {
		want := b[i]
		if i == doc {
			var ok bool
			if want, ok = mutate(want); !ok {
				return fmt.Errorf("the edit does not apply to the document: %w", ErrUnsupported)
			}
		}
		if !drift.Equal(drift.NormalizeNumbers(want), drift.NormalizeNumbers(a[i])) {
			return fmt.Errorf("the edit would change more than the intended field: %w", ErrUnsupported)
		}
	}
	return nil
}

// setAt sets v at p in doc, creating maps along the way; it reports false when
// the path runs through something that is not a map or list.
func setAt(doc any, p drift.Pointer, v any) (any, bool) {
	if len(p) == 0 {
		return v, true
	}
	switch x := doc.(type) {
	case map[string]any:
		child, ok := setAt(x[p[0]], p[1:], v)
		if !ok {
			return nil, false
		}
		x[p[0]] = child
		return x, true
	case []any:
		i, err := strconv.Atoi(p[0])
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		child, ok := setAt(x[i], p[1:], v)
		if !ok {
			return nil, false
		}
		x[i] = child
		return x, true
	case nil:
		child, ok := setAt(nil, p[1:], v)
		if !ok {
			return nil, false
		}
		return map[string]any{p[0]: child}, true
	}
	return nil, false
}
