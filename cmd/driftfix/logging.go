package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"unicode"

	"k8s.io/klog/v2"
)

// keySynonyms are log keys written under another name in some packages,
// mapped to the name most of the code uses.
var keySynonyms = map[string]string{
	"err":         "error",
	"application": "app",
}

// logKey puts a log key in the one style driftfix's log uses: snake_case,
// with the common name where a package or client-go used a synonym
// (err → error, perHour → per_hour).
func logKey(k string) string {
	if s, ok := keySynonyms[k]; ok {
		return s
	}
	var b strings.Builder
	prevLower := false
	for _, r := range k {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower = false
		case r == '-' || r == ' ' || r == '.':
			b.WriteByte('_')
			prevLower = false
		default:
			b.WriteRune(r)
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		}
	}
	if s, ok := keySynonyms[b.String()]; ok {
		return s
	}
	return b.String()
}

// newLogger is the JSON logger of run and once, each key in logKey's style.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		a.Key = logKey(a.Key)
		return a
	}})), nil
}

// routeLogs sends what other code logs outside log into log: client-go's
// klog, the standard library's log package and slog.Default (an
// http.Server's errors, libraries). Run and once call it once they have
// their logger, so every line on stderr is one JSON object.
func routeLogs(log *slog.Logger) {
	slog.SetDefault(log)
	klog.SetSlogLogger(log)
}

// lineLogger is an io.Writer for code that writes plain-text notes: each
// line becomes one log record at level, its "driftfix: " prefix dropped.
type lineLogger struct {
	log   *slog.Logger
	level slog.Level

	mu  sync.Mutex
	buf []byte
}

func newLineLogger(log *slog.Logger, level slog.Level) *lineLogger {
	return &lineLogger{log: log, level: level}
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimPrefix(strings.TrimSpace(string(w.buf[:i])), "driftfix: ")
		w.buf = w.buf[i+1:]
		if line != "" {
			w.log.Log(context.Background(), w.level, line)
		}
	}
}

// loggedError is an error run or once already wrote to its log: the
// command line does not print it again as plain text.
type loggedError struct{ err error }

func (e loggedError) Error() string { return e.err.Error() }
func (e loggedError) Unwrap() error { return e.err }
