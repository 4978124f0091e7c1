package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// heldStore keeps the digests quiet hours hold back.
type heldStore interface {
	// HeldDigests are the digests held, by cursor.
	HeldDigests(ctx context.Context) (map[string]state.Held, error)
	// Hold holds a digest (replacing the one held for its cursor).
	Hold(ctx context.Context, h state.Held) error
	// Release drops a held digest once it is queued.
	Release(ctx context.Context, cursor string) error
}

// holdDigests keeps this cycle's digests for after the quiet hours, each
// merged into what earlier quiet cycles held for its channel and instance.
func (r *run) holdDigests() {
	held, err := r.Store.HeldDigests(r.ctx)
	if err != nil {
		r.fail(err)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(r.digests.views)) {
		v := r.digests.views[k]
		if v.Empty() {
			continue
		}
		ch, _, _ := strings.Cut(k, "\x00")
		h := state.Held{Cursor: ch + " " + v.Instance, Channel: ch, Since: r.now}
		var merged templates.DigestView
		if old, ok := held[h.Cursor]; ok {
			if err := json.Unmarshal([]byte(old.View), &merged); err != nil {
				r.fail(fmt.Errorf("read the digest held for %s: %w", ch, err))
				continue
			}
		}
		merged.Merge(*v)
		raw, err := json.Marshal(merged)
		if err != nil {
			r.fail(fmt.Errorf("hold the digest for %s: %w", ch, err))
			continue
		}
		h.View = string(raw)
		if err := r.Store.Hold(r.ctx, h); err != nil {
			r.fail(err)
		}
	}
}

// releaseHeld puts what quiet hours held back in front of this cycle's
// digests, so that one digest per channel and instance says all of it.
func (r *run) releaseHeld() {
	held, err := r.Store.HeldDigests(r.ctx)
	if err != nil {
		r.fail(err)
		return
	}
	for _, c := range slices.Sorted(maps.Keys(held)) {
		h := held[c]
		var v templates.DigestView
		if err := json.Unmarshal([]byte(h.View), &v); err != nil {
			r.fail(fmt.Errorf("read the digest held for %s: %w", h.Channel, err))
			continue
		}
		k := h.Channel + "\x00" + v.Instance
		if now := r.digests.views[k]; now != nil {
			v.Merge(*now)
		}
		r.digests.views[k] = &v
		r.released = append(r.released, c)
	}
}

// forgetReleased drops the held digests once they are queued.
func (r *run) forgetReleased() {
	for _, c := range r.released {
		if err := r.Store.Release(r.ctx, c); err != nil {
			r.fail(err)
		}
	}
}
