package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/templates"
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

// TestCommand: a command counts at the start of a line of running text, as
// CommonMark reads the comment: not in a fenced code block (however it is
// fenced, in a list item too), an indented code block (four columns of
// spaces or a tab) or a quote (with the lines that lazily continue it);
// the first one is read.
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
		{"   /driftfix recheck", "recheck", ""}, // three spaces: still running text
		{"    /driftfix ignore", "", ""},        // four: an indented code block
		{"example:\n\n        /driftfix ignore\n", "", ""},
		{"\t/driftfix ignore", "", ""},
		{"  \t/driftfix ignore", "", ""},
		{"    /driftfix ignore\n/driftfix recheck", "recheck", ""},
		{">/driftfix ignore", "", ""},
		{"   > /driftfix ignore", "", ""},
		{"> she wrote\n/driftfix ignore", "", ""}, // continues the quoted paragraph
		{"> she wrote\n\n/driftfix recheck", "recheck", ""},
		{"> ```\n/driftfix ignore", "", ""},
		{"- ```\n  /driftfix ignore\n  ```", "", ""},
		{"1. ~~~\n/driftfix ignore\n~~~\n/driftfix recheck", "recheck", ""},
		{"    ```\n/driftfix recheck", "recheck", ""}, // an indented fence is code, not a fence
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

// TestCommandsListed: the commands every pull request body lists
// (templates.Commands) are exactly the commands driftfix obeys, and each
// listed example, written as a comment, is read as its command and followed.
func TestCommandsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range templates.Commands {
		listed[c.Verb] = true
		if _, ok := obeyed[c.Verb]; !ok {
			t.Errorf("pull requests list /driftfix %s, which driftfix does not obey", c.Verb)
			continue
		}
		cmd := command("Thanks!\n\n" + c.Example + "\n")
		if cmd == nil || strings.ToLower(cmd[1]) != c.Verb {
			t.Errorf("the listed example %q is not read as /driftfix %s: %q", c.Example, c.Verb, cmd)
			continue
		}
		var a asked
		if err := obeyed[c.Verb](&a, cmd[2], "@maintainer", time.Now()); err != nil {
			t.Errorf("the listed example %q is not followed: %v", c.Example, err)
		}
		if !a.ignore && !a.recheck && a.snooze.IsZero() {
			t.Errorf("the listed example %q asks nothing", c.Example)
		}
	}
	for verb := range obeyed {
		if !listed[verb] {
			t.Errorf("driftfix obeys /driftfix %s, which pull requests do not list (add it to templates.Commands)", verb)
		}
	}
}
