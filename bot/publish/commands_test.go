package publish

import (
	"strings"
	"testing"
	"time"
)

// TestParseSnooze: /driftfix snooze takes a count of hours, days or weeks up
// to 180 days; anything else is refused with a message saying what to
// write, and a huge count is refused rather than wrapped around to a short
// or negative snooze.
func TestParseSnooze(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want time.Duration
		err  string // part of the error; "" means accepted
	}{
		{"14d", 14 * 24 * time.Hour, ""},
		{"12h", 12 * time.Hour, ""},
		{"2w", 14 * 24 * time.Hour, ""},
		{"14D", 14 * 24 * time.Hour, ""},
		{"180d", 180 * 24 * time.Hour, ""},
		{"4320h", 180 * 24 * time.Hour, ""},
		{"", 0, "say how long"},
		{"d", 0, "say how long"},
		{"181d", 0, "longer than 180 days"},
		{"26w", 0, "longer than 180 days"},
		{"9999999999h", 0, "longer than 180 days"},
		{"2562048w", 0, "longer than 180 days"},
		{"99999999999999999999d", 0, "not a length"},
		{"0d", 0, "not a length"},
		{"-5d", 0, "not a length"},
		{"+5d", 0, "not a length"},
		{"14x", 0, "not a length"},
		{"14days", 0, "not a length"},
		{"1.5d", 0, "not a length"},
		{"٣d", 0, "not a length"},
		{"forever", 0, "not a length"},
	} {
		got, err := parseSnooze(tc.arg)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("parseSnooze(%q) = %v, %v; want %v", tc.arg, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseSnooze(%q) = %v, %v; want an error saying %q", tc.arg, got, err, tc.err)
		}
	}
}

// TestCommand: a command counts at the start of a line, outside fenced code
// blocks (however they are fenced) and quotes; the first one is read.
func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		body, verb, arg string
	}{
		{"/driftfix snooze 14d", "snooze", "14d"},
		{"thanks!\r\n  /driftfix Recheck\r\n", "Recheck", ""},
		{"/driftfix ignore\n/driftfix recheck", "ignore", ""},
		{"> /driftfix ignore\nok", "", ""},
		{"please run `/driftfix ignore`", "", ""},
		{"```\n/driftfix ignore\n```", "", ""},
		{"~~~sh\n/driftfix ignore\n~~~\n", "", ""},
		{"````\n```\n/driftfix ignore\n````\n", "", ""},
		{"```\n/driftfix ignore\n", "", ""}, // an unclosed fence runs to the end
		{"```\nexample\n```\n/driftfix recheck", "recheck", ""},
		{"~~~\n```\n~~~\n/driftfix snooze 2w", "snooze", "2w"},
	} {
		got := command(tc.body)
		switch {
		case tc.verb == "" && got != nil:
			t.Errorf("%q read as %q", tc.body, got)
		case tc.verb != "" && (got == nil || got[1] != tc.verb || got[2] != tc.arg):
			t.Errorf("%q read as %q, want %s %s", tc.body, got, tc.verb, tc.arg)
		}
	}
}
