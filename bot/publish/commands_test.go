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
		// what GitHub does not show: HTML comments and <pre> blocks
		{"<!-- /driftfix ignore -->", "", ""},
		{"<!--\n/driftfix ignore\n-->", "", ""},
		{"<!-- a -->\n/driftfix recheck", "recheck", ""},
		{"<!--\n-->\n/driftfix recheck", "recheck", ""},
		{"<!-- a --> /driftfix ignore", "", ""},
		{"<!--\n```\n-->\n/driftfix recheck", "recheck", ""}, // a fence inside a comment opens nothing
		{"<!--\n--> <!--\n/driftfix ignore\n-->", "", ""},    // the closing line opens another
		{"<!--\n/driftfix ignore", "", ""},                   // an unclosed comment runs to the end
		{"hi <!--\n/driftfix ignore\n-->", "", ""},
		{"<pre>\n/driftfix ignore\n</pre>", "", ""},
		{"<PRE class=\"x\">\n/driftfix ignore\n</Pre>\n/driftfix recheck", "recheck", ""},
		{"<pre>/driftfix ignore</pre>", "", ""},
		{"<pre>\n```\n</pre>\n/driftfix snooze 1w", "snooze", "1w"},
		{"<prefix>\n/driftfix recheck", "recheck", ""},       // not a <pre> tag
		{"```\n<!--\n```\n/driftfix recheck", "recheck", ""}, // a comment inside a fence is text
		{"    <!--\n/driftfix recheck", "recheck", ""},       // inside an indented code block too
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

// FuzzCommand: any comment body gives a command only from a line that
// starts with /driftfix (after at most three spaces), and the same body
// inside an HTML comment or a <pre> block gives none.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{"/driftfix ignore", "<!--\n/driftfix ignore\n-->", "<pre>\n/driftfix snooze 1w\n</pre>\n/driftfix recheck",
		"```\n<!--\n```\n/driftfix recheck", "> a\n/driftfix ignore", "<!-- x --> <pre>\n/driftfix ignore", "\t/driftfix ignore\r\n/driftfix recheck"} {
		f.Add(s)
	}
	without := func(s, closer string) string {
		for {
			i := indexASCIIFold(s, closer)
			if i < 0 {
				return s
			}
			s = s[:i] + s[i+len(closer):]
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		got := command(body)
		if got != nil {
			found := false
			for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
				if s, indent := unindent(line); indent <= 3 && strings.HasPrefix(s, "/driftfix") && strings.Contains(s, got[1]) {
					found = true
				}
			}
			if !found {
				t.Fatalf("%q read as %q, which no line starts", body, got)
			}
		}
		for _, wrap := range [][2]string{{"<!--", "-->"}, {"<pre>", "</pre>"}} {
			hidden := wrap[0] + "\n" + without(body, wrap[1]) + "\n" + wrap[1]
			if got := command(hidden); got != nil {
				t.Fatalf("%q read as %q inside %s", hidden, got, wrap[0])
			}
		}
	})
}
