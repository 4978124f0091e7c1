package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// FollowOptions tune Follow.
type FollowOptions struct {
	// Poll is how often the end of the file is read again (default 500ms).
	Poll time.Duration
	// FromStart reads the file from its start; by default Follow starts at
	// its end (a log file holds days the retention drops anyway).
	FromStart bool
	// MaxLine bounds one line (default DefaultMaxLine): a longer line is
	// skipped whole and logged.
	MaxLine int
	// Log gets a line per line refused and per rotation (nil: discard).
	Log *slog.Logger
}

// DefaultMaxLine bounds one line of an audit log: an event at Metadata
// level is a few KiB; at RequestResponse level it carries bodies, which
// are not read anyway.
const DefaultMaxLine = 1 << 20

// Follow reads an audit log file (the API server's --audit-log-path with
// --audit-log-format=json: one Event per line; an EventList per line is
// read too) into store until ctx ends, as tail -F does: a file rotated
// away (renamed, a new file in its place) is read to its end and the new
// one from its start; a file truncated in place (copytruncate) is read
// again from its start; a file that does not exist yet is waited for. A
// line that is not an audit event is logged and skipped. It returns
// ctx's error, or the error that stops it reading.
func Follow(ctx context.Context, path string, store *Store, o FollowOptions) error {
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t := &tail{path: path, store: store, o: o, log: log}
	defer t.close()
	fromStart := o.FromStart
	waiting := false
	for {
		if t.f == nil {
			err := t.open(fromStart)
			switch {
			case errors.Is(err, os.ErrNotExist):
				if !waiting {
					log.Info("audit log file does not exist yet: waiting for it", "file", path)
					waiting = true
				}
			case err != nil:
				return fmt.Errorf("follow audit log %s: %w", path, err)
			}
			// A file that appears later is new: read it whole.
			fromStart = true
		}
		if t.f != nil {
			waiting = false
			if err := t.drain(); err != nil {
				return fmt.Errorf("follow audit log %s: %w", path, err)
			}
			if err := t.checkRotation(); err != nil {
				return fmt.Errorf("follow audit log %s: %w", path, err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

type tail struct {
	path  string
	store *Store
	o     FollowOptions
	log   *slog.Logger

	f       *os.File
	r       *bufio.Reader
	offset  int64
	partial []byte // a line read up to the file's end so far
	skip    bool   // the line being read is over MaxLine: drop to its end
}

func (t *tail) open(fromStart bool) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	t.f, t.offset, t.partial, t.skip = f, 0, t.partial[:0], false
	if !fromStart {
		if t.offset, err = f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			t.f = nil
			return err
		}
	}
	t.r = bufio.NewReaderSize(f, 64<<10)
	return nil
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// drain reads every complete line up to the file's end.
func (t *tail) drain() error {
	for {
		chunk, err := t.r.ReadSlice('\n')
		t.offset += int64(len(chunk))
		switch {
		case err == nil:
			switch {
			case t.skip:
			case len(t.partial)+len(chunk) > t.o.MaxLine:
				t.log.Warn("audit log line skipped: longer than its bound", "file", t.path, "max_bytes", t.o.MaxLine)
			default:
				t.partial = append(t.partial, chunk...)
				t.line(t.partial)
			}
			t.partial, t.skip = t.partial[:0], false
		case errors.Is(err, bufio.ErrBufferFull) || errors.Is(err, io.EOF):
			if !t.skip {
				t.partial = append(t.partial, chunk...)
				if len(t.partial) > t.o.MaxLine {
					t.log.Warn("audit log line skipped: longer than its bound", "file", t.path, "max_bytes", t.o.MaxLine)
					t.partial, t.skip = t.partial[:0], true
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
		default:
			return err
		}
	}
}

// line takes one complete line.
func (t *tail) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	events, err := Decode(b)
	if err != nil {
		t.log.Warn("audit log line skipped", "file", t.path, "error", err.Error())
		return
	}
	t.store.Add(events)
}

// checkRotation reopens the path when another file took its place, and
// reads from the start when the file was truncated below what was read.
func (t *tail) checkRotation() error {
	cur, err := t.f.Stat()
	if err != nil {
		return err
	}
	now, err := os.Stat(t.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // rotated away, the new file not made yet: keep the old
	case err != nil:
		return err
	}
	if !os.SameFile(cur, now) {
		// Rotated: the old file is read to its end, then the new one whole.
		if err := t.drain(); err != nil {
			return err
		}
		if len(bytes.TrimSpace(t.partial)) > 0 && !t.skip {
			t.line(t.partial) // the old file's last line had no newline
		}
		t.log.Info("audit log file rotated: reading the new file", "file", t.path)
		t.close()
		if err := t.open(true); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if cur.Size() < t.offset {
		t.log.Info("audit log file truncated: reading it from its start", "file", t.path)
		if _, err := t.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		t.offset, t.partial, t.skip = 0, t.partial[:0], false
		t.r.Reset(t.f)
	}
	return nil
}
