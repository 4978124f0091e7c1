package state

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Sealer authenticates the rows that lead driftfix to act: the digests
// queued for Slack and those held by quiet hours, the last digest posted
// to each channel and the thread that announced each fix, the requests
// people made, the fixes they rejected or snoozed, the cooldown of each
// fix and the applications snoozed from the digest. memo.Seal is the bot's, made
// of its GitHub credential. Whoever can write the database but not the
// credential can delete such rows, not write one driftfix acts on.
type Sealer interface {
	// SealRow returns the seal of a row of table, named by key, whose
	// other fields encode to body.
	SealRow(table, key string, body []byte) []byte
	// OpenRow reports whether seal is that row's seal.
	OpenRow(table, key string, body, seal []byte) bool
}

// sealedRow is a row of a sealed table as read: the places its columns
// scan into, in the order of its table's cols, its key and the fields
// its seal covers.
type sealedRow interface {
	dest() []any
	key() string
	fields() []any
}

// sealedTable is a table whose rows carry a seal (migration 15): the
// columns read back, and what becomes of a row dropped for lack of a good
// seal.
type sealedTable struct {
	name, cols, dropped string
}

var (
	outboxTable    = sealedTable{"digest_outbox", "id, cursor, digest, channel, thread, opened, messages, posted", "the digest is rendered and queued again from the next cycle's findings"}
	heldTable      = sealedTable{"held_digests", "cursor, channel, view, since", "what quiet hours held back is not posted; the next digest says what is still true"}
	requestsTable  = sealedTable{"requests", "fix, action, at", "a person asks again (a ticked dashboard box, a command)"}
	rejectedTable  = sealedTable{"rejected", "fingerprint, app, reason, at", "re-derived from GitHub: when the fix is planned again, its pull request found closed unmerged rejects it again"}
	sightingsTable = sealedTable{"sightings", "fingerprint, first, cycles, last", "the fix's cooldown starts again"}
	snoozedTable   = sealedTable{"snoozed", "fingerprint, until, reason", "the fix's snooze ends"}
	appSnoozeTable = sealedTable{"app_snoozes", "app, until, by", "the application's digest snooze ends"}
	cursorTable    = sealedTable{"digest_cursor", "channel, digest, at", "the next digest is posted even if it says what the last one said"}
	threadsTable   = sealedTable{"slack_threads", "fingerprint, channel, ts", "news of the fix is posted on its own, not in the thread that announced it"}
)

// body encodes a row's fields for its seal: strings length-prefixed,
// integers as varints, so that no two rows share one.
func body(fields ...any) []byte {
	var b []byte
	for _, f := range fields {
		switch v := f.(type) {
		case string:
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case int64:
			b = binary.AppendVarint(b, v)
		case int:
			b = binary.AppendVarint(b, int64(v))
		default:
			panic(fmt.Sprintf("state: cannot seal a %T", f))
		}
	}
	return b
}

// seal is the seal of a row of table.
func (s *Store) seal(t sealedTable, r sealedRow) []byte {
	return s.sealer.SealRow(t.name, r.key(), body(r.fields()...))
}

// dropRow says that a row of a table was dropped, its seal missing or
// wrong, and counts it (DroppedRows).
func (s *Store) dropRow(t sealedTable, key string, seal []byte) {
	why := "its seal does not match: driftfix did not write it with its credential"
	if seal == nil {
		why = "it has no seal: written before rows were sealed, or not by driftfix"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped[t.name]++
	if s.sweeping != nil { // said once per table (sweep)
		s.sweeping[t.name] = append(s.sweeping[t.name], key)
		return
	}
	s.log.Warn("dropped a state row driftfix did not write; it is not acted on", "table", t.name, "key", key, "reason", why, "then", t.dropped)
}

// DroppedRows returns, by table, how many rows this Store dropped because
// their seal was missing or wrong.
func (s *Store) DroppedRows() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.dropped))
	for k, v := range s.dropped {
		out[k] = v
	}
	return out
}

// querier is the database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// readSealed reads the rows of t that where (with args) selects, and
// returns those whose seal holds; the others are deleted, logged and
// counted, never returned.
func readSealed[T any, P interface {
	*T
	sealedRow
}](ctx context.Context, s *Store, q querier, t sealedTable, where string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, `SELECT rowid, `+t.cols+`, seal FROM `+t.name+` `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	var out []T
	var bad []any
	for rows.Next() {
		var v T
		p := P(&v)
		var rowid int64
		var seal []byte
		if err := rows.Scan(append(append([]any{&rowid}, p.dest()...), &seal)...); err != nil {
			return nil, fmt.Errorf("read %s: %w", t.name, err)
		}
		if !s.sealer.OpenRow(t.name, p.key(), body(p.fields()...), seal) {
			s.dropRow(t, p.key(), seal)
			bad = append(bad, rowid)
			continue
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", t.name, err)
	}
	rows.Close()
	if len(bad) > 0 {
		if _, err := q.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE rowid IN (?`+strings.Repeat(", ?", len(bad)-1)+`)`, bad...); err != nil {
			return nil, fmt.Errorf("drop the rows of %s driftfix did not write: %w", t.name, err)
		}
	}
	return out, nil
}

// sweep drops, at open, every row of a sealed table whose seal is missing
// or wrong (after the upgrade that brought seals, those written before
// it), saying per table how many, the first one's key and what becomes of
// them.
func (s *Store) sweep(ctx context.Context) error {
	s.sweeping = map[string][]string{}
	defer func() { s.sweeping = nil }()
	for _, f := range []func() (sealedTable, error){
		sweepOf[outboxRow](ctx, s, outboxTable),
		sweepOf[heldRow](ctx, s, heldTable),
		sweepOf[requestRow](ctx, s, requestsTable),
		sweepOf[rejectionRow](ctx, s, rejectedTable),
		sweepOf[sightingRow](ctx, s, sightingsTable),
		sweepOf[snoozeRow](ctx, s, snoozedTable),
		sweepOf[appSnoozeRow](ctx, s, appSnoozeTable),
		sweepOf[cursorRow](ctx, s, cursorTable),
		sweepOf[threadRow](ctx, s, threadsTable),
	} {
		t, err := f()
		if err != nil {
			return fmt.Errorf("check the seals of %s: %w", t.name, err)
		}
		if keys := s.sweeping[t.name]; len(keys) > 0 {
			s.log.Warn("dropped the rows of a state table driftfix did not write or wrote before rows were sealed; none is acted on",
				"table", t.name, "rows", len(keys), "first_key", keys[0], "then", t.dropped)
		}
	}
	return nil
}

// sweepOf returns the sweep of one table.
func sweepOf[T any, P interface {
	*T
	sealedRow
}](ctx context.Context, s *Store, t sealedTable) func() (sealedTable, error) {
	return func() (sealedTable, error) {
		_, err := readSealed[T, P](ctx, s, s.db, t, "")
		return t, err
	}
}

// The rows of the sealed tables, as read back.
type (
	outboxRow struct {
		o            Outbox
		opened, msgs string
	}
	heldRow struct {
		h     Held
		since int64
	}
	requestRow struct {
		fix, action string
		at          int64
	}
	rejectionRow struct {
		r  Rejection
		at int64
	}
	sightingRow struct {
		fingerprint         string
		first, cycles, last int64
	}
	snoozeRow struct {
		fingerprint, reason string
		until               int64
	}
	appSnoozeRow struct {
		app, by string
		until   int64
	}
	cursorRow struct {
		cursor, digest string
		at             int64
	}
	threadRow struct {
		fingerprint, channel, ts string
	}
)

func (r *outboxRow) dest() []any {
	return []any{&r.o.ID, &r.o.Cursor, &r.o.Digest, &r.o.Channel, &r.o.Thread, &r.opened, &r.msgs, &r.o.Posted}
}
func (r *outboxRow) key() string { return strconv.FormatInt(r.o.ID, 10) }
func (r *outboxRow) fields() []any {
	return []any{r.o.Cursor, r.o.Digest, r.o.Channel, r.o.Thread, r.opened, r.msgs, r.o.Posted}
}

func (r *heldRow) dest() []any   { return []any{&r.h.Cursor, &r.h.Channel, &r.h.View, &r.since} }
func (r *heldRow) key() string   { return r.h.Cursor }
func (r *heldRow) fields() []any { return []any{r.h.Channel, r.h.View, r.since} }

func (r *requestRow) dest() []any   { return []any{&r.fix, &r.action, &r.at} }
func (r *requestRow) key() string   { return r.fix + " " + r.action }
func (r *requestRow) fields() []any { return []any{r.fix, r.action, r.at} }

func (r *rejectionRow) dest() []any   { return []any{&r.r.Fix, &r.r.App, &r.r.Reason, &r.at} }
func (r *rejectionRow) key() string   { return r.r.Fix }
func (r *rejectionRow) fields() []any { return []any{r.r.App, r.r.Reason, r.at} }

func (r *sightingRow) dest() []any   { return []any{&r.fingerprint, &r.first, &r.cycles, &r.last} }
func (r *sightingRow) key() string   { return r.fingerprint }
func (r *sightingRow) fields() []any { return []any{r.first, r.cycles, r.last} }

func (r *snoozeRow) dest() []any   { return []any{&r.fingerprint, &r.until, &r.reason} }
func (r *snoozeRow) key() string   { return r.fingerprint }
func (r *snoozeRow) fields() []any { return []any{r.until, r.reason} }

func (r *appSnoozeRow) dest() []any   { return []any{&r.app, &r.until, &r.by} }
func (r *appSnoozeRow) key() string   { return r.app }
func (r *appSnoozeRow) fields() []any { return []any{r.until, r.by} }

func (r *cursorRow) dest() []any   { return []any{&r.cursor, &r.digest, &r.at} }
func (r *cursorRow) key() string   { return r.cursor }
func (r *cursorRow) fields() []any { return []any{r.digest, r.at} }

func (r *threadRow) dest() []any   { return []any{&r.fingerprint, &r.channel, &r.ts} }
func (r *threadRow) key() string   { return r.fingerprint + " " + r.channel }
func (r *threadRow) fields() []any { return []any{r.fingerprint, r.channel, r.ts} }
