package publish

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// requestStore remembers what people asked for, by comment, label or
// dashboard tick, and which of their comments were followed.
type requestStore interface {
	// Request records that a person asked for action on a fix.
	Request(ctx context.Context, fix, action string, at time.Time) error
	// Requested reports whether action was asked for a fix and not cleared since.
	Requested(ctx context.Context, fix, action string) (bool, error)
	// Requests are the fixes one action was asked for, with when.
	Requests(ctx context.Context, action string) (map[string]time.Time, error)
	// ClearRequest forgets a request once acted on.
	ClearRequest(ctx context.Context, fix, action string) error
	// Followed records that a command comment was acted on; true when it had been already.
	Followed(ctx context.Context, repo string, comment int64, now time.Time) (bool, error)
	// WasFollowed reports whether a comment was followed.
	WasFollowed(ctx context.Context, repo string, comment int64) (bool, error)
	// Rejections are the fixes people turned down.
	Rejections(ctx context.Context) ([]state.Rejection, error)
	// Unreject forgets that a fix was turned down; false when it was not.
	Unreject(ctx context.Context, fingerprint string) (bool, error)
}

// commandRE is a /driftfix command at the start of a line (its indent
// already removed): its verb and first argument.
var commandRE = regexp.MustCompile(`(?m)^/driftfix[ \t]+([A-Za-z]+)(?:[ \t]+(\S+))?`)

// command finds the first /driftfix command of a comment: at the start of
// a line of running text, as GitHub's Markdown (CommonMark) shows it. A
// command quoted as an example or pasted output is not one: not inside a
// fenced code block (``` or ~~~, in a list item too), an indented code
// block (four or more columns: spaces, or a tab), nor a quote (a line
// starting with >, and the lines that continue its paragraph up to the
// next blank line). Nor is a command GitHub does not show: inside an HTML
// comment (<!-- -->) or a <pre> block, on one line or many (the line that
// closes one is inert too).
func command(body string) []string {
	fence, quoted, html := "", false, ""
	var kept []string
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		if html != "" {
			// inside a comment or <pre>: no fence, quote or command
			if i := indexASCIIFold(line, html); i >= 0 {
				// the rest of the closing line is inert, but may open another
				_, html = hideHTML(line[i+len(html):])
			}
			continue
		}
		var fenceLine bool
		if fence, fenceLine = fenceStep(fence, line); fence != "" || fenceLine {
			quoted = false
			continue
		}
		t, indent := unindent(line)
		switch {
		case strings.TrimSpace(t) == "":
			quoted = false
		case indent <= 3 && strings.HasPrefix(t, ">"):
			quoted = true
		case quoted: // a lazy continuation of the quote's paragraph
		case indent >= 4: // an indented code block
		default:
			t, html = hideHTML(t)
			kept = append(kept, t)
		}
	}
	return commandRE.FindStringSubmatch(strings.Join(kept, "\n"))
}

// hideHTML removes from a line of running text what GitHub does not show
// as text: HTML comments and <pre> blocks. It returns what is left and, when
// one is left open at the end of the line, the text that closes it ("-->"
// or "</pre>"). A comment or <pre> that starts the line hides the rest of
// the line after it closes too, as an HTML block does.
func hideHTML(t string) (string, string) {
	var b strings.Builder
	for {
		i, closer := htmlOpen(t)
		if i < 0 {
			b.WriteString(t)
			return b.String(), ""
		}
		b.WriteString(t[:i])
		rest := t[i+1:]
		j := indexASCIIFold(rest, closer)
		if j < 0 {
			return b.String(), closer
		}
		if i == 0 && b.Len() == 0 {
			return "", "" // an HTML block: its closing line is all of it
		}
		t = rest[j+len(closer):]
	}
}

// htmlOpen finds the first "<!--" or "<pre" tag (any case) in t: its index
// and the text that closes it; -1 when there is none.
func htmlOpen(t string) (int, string) {
	for i := 0; i < len(t); i++ {
		if t[i] != '<' {
			continue
		}
		if strings.HasPrefix(t[i:], "<!--") {
			return i, "-->"
		}
		if len(t) >= i+4 && strings.EqualFold(t[i+1:i+4], "pre") && (len(t) == i+4 || strings.ContainsRune(" \t>/", rune(t[i+4]))) {
			return i, "</pre>"
		}
	}
	return -1, ""
}

// indexASCIIFold is strings.Index of a lower-case ASCII sub in s, ignoring
// the case of ASCII letters (byte offsets kept, unlike strings.ToLower).
func indexASCIIFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		ok := true
		for k := 0; k < len(sub); k++ {
			c := s[i+k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[k] {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// fenceStep reads one line against the fenced code block open before it
// (fence, "" for none): the block open after it, and whether the line
// itself opens or closes one. A fence opens after up to three spaces of
// indent, in a list item too; only one as long, of the same mark and with
// nothing after it closes it.
func fenceStep(fence, line string) (string, bool) {
	t, indent := unindent(line)
	if indent > 3 {
		return fence, false
	}
	if fence != "" {
		if m := fenceRE.FindString(t); m != "" && m[0] == fence[0] && len(m) >= len(fence) && strings.TrimSpace(t[len(m):]) == "" {
			return "", true
		}
		return fence, false
	}
	if m := fenceRE.FindString(listItemRE.ReplaceAllString(t, "")); m != "" {
		return m, true
	}
	return "", false
}

// unindent returns a line without its leading white space and how many
// columns that space takes, a tab reaching the next multiple of four.
func unindent(line string) (string, int) {
	col := 0
	for i, r := range line {
		switch r {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return line[i:], col
		}
	}
	return "", col
}

// listItemRE is the markers that open list items at the start of a line: a
// fence after them is a fenced code block inside the item.
var listItemRE = regexp.MustCompile(`^(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)+`)

// fenceRE is the run of backticks or tildes that opens or closes a fenced code block.
var fenceRE = regexp.MustCompile("^(`{3,}|~{3,})")

// maxSnooze bounds /driftfix snooze: longer than that is a /driftfix ignore.
const maxSnooze = 180 * 24 * time.Hour

// asked is what a pull request's commands, new this cycle, ask.
type asked struct {
	ignore, recheck bool
	snooze          time.Time // zero: no snooze asked
	by              string    // who asked what is done (the last such command)
	acks            []ack     // the commands acted on, to acknowledge and remember as followed
}

// ack is a command comment and the reaction that acknowledges it.
type ack struct {
	comment  int64
	reaction string
}

// obeyed are the /driftfix commands driftfix follows, by verb: each adds
// what it asks to a (its argument, who asked, when). Pull request bodies
// list templates.Commands; TestCommandsListed holds the two together.
var obeyed = map[string]func(a *asked, arg, by string, now time.Time) error{
	"ignore": func(a *asked, _, by string, _ time.Time) error {
		a.ignore, a.by = true, by
		return nil
	},
	"recheck": func(a *asked, _, _ string, _ time.Time) error {
		a.recheck = true
		return nil
	},
	"snooze": func(a *asked, arg, by string, now time.Time) error {
		d, err := parseSnooze(arg)
		if err != nil {
			return err
		}
		a.snooze, a.by = now.Add(d), by
		return nil
	},
}

// verbs lists the commands' verbs as pull requests list them.
func verbs() string {
	vs := make([]string, len(templates.Commands))
	for i, c := range templates.Commands {
		vs[i] = c.Verb
	}
	return strings.Join(vs, ", ")
}

// parseSnooze reads a snooze length: a number of hours, days or weeks.
func parseSnooze(arg string) (time.Duration, error) {
	if len(arg) < 2 {
		return 0, fmt.Errorf("say how long, such as 14d, 2w or 12h")
	}
	n, err := strconv.Atoi(arg[:len(arg)-1])
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[arg[len(arg)-1]|0x20]
	if err != nil || n <= 0 || unit == 0 || !digits(arg[:len(arg)-1]) {
		return 0, fmt.Errorf("%q is not a length such as 14d, 2w or 12h", arg)
	}
	// compared before multiplying: a huge count must not wrap around to a short or negative snooze
	if n <= int(maxSnooze/unit) {
		return time.Duration(n) * unit, nil
	}
	return 0, fmt.Errorf("%s is longer than %d days; use /driftfix ignore to stop this fix for good", arg, int(maxSnooze.Hours()/24))
}

// digits says whether s is only ASCII digits (no sign).
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// commands reads the pull request's /driftfix commands that were not acted
// on before: not in the state database, and without driftfix's reaction
// (which outlives a lost database), and the ignore label. Only accounts
// that can write to the repository steer driftfix; others are not
// followed, and the cycle says so. A command followed gets a +1 reaction
// once it is done; one that cannot be read gets a confused one.
func (c *followed) commands() (asked, error) {
	var a asked
	comments, err := c.host.Comments(c.ctx, c.repo, c.k.Number)
	if err != nil {
		return a, err
	}
	if slices.Contains(c.pr.Labels, c.IgnoreLabel) {
		by, err := c.labeledByWriter(comments)
		if err != nil {
			return a, err
		}
		if by != "" {
			a.ignore, a.by = true, "@"+by+" with the "+c.IgnoreLabel+" label"
		}
	}
	for _, m := range comments {
		cmd := command(m.Body)
		if cmd == nil {
			continue
		}
		if done, err := c.Store.WasFollowed(c.ctx, c.repo.Key(), m.ID); err != nil || done {
			if err != nil {
				return a, err
			}
			continue
		}
		ok, err := c.steers(c.ctx, c.host, c.repo, m)
		if err != nil {
			return a, err
		}
		verb := strings.ToLower(cmd[1])
		if !ok {
			c.out.Skipped = append(c.out.Skipped, fmt.Sprintf("%s: /driftfix %s from %s (%s) not followed: only accounts that can write to %s steer driftfix", c.ref(), verb, m.Author, m.Association, c.repo))
			continue
		}
		if done, err := c.acknowledged(m.ID); err != nil || done {
			if err != nil {
				return a, err
			}
			if _, err := c.Store.Followed(c.ctx, c.repo.Key(), m.ID, c.now); err != nil {
				return a, err
			}
			continue // followed before this state database
		}
		reaction := "+1"
		if obey, ok := obeyed[verb]; !ok {
			reaction = "confused"
			c.out.Skipped = append(c.out.Skipped, fmt.Sprintf("%s: /driftfix %s from %s is not a command (%s)", c.ref(), verb, m.Author, verbs()))
		} else if err := obey(&a, cmd[2], "@"+m.Author, c.now); err != nil {
			reaction = "confused"
			c.out.Skipped = append(c.out.Skipped, fmt.Sprintf("%s: /driftfix %s from %s not followed: %v", c.ref(), verb, m.Author, err))
		}
		a.acks = append(a.acks, ack{m.ID, reaction})
	}
	return a, nil
}

// labeledByWriter is the account that applied the ignore label to the pull
// request, when it can write to the repository; "" otherwise. A label
// applied by anyone else (a triage or read collaborator, a workflow's
// token) is not followed: the cycle says so, and so does one comment on the
// pull request per labelling, found again by its marker.
func (c *followed) labeledByWriter(comments []githost.Comment) (string, error) {
	lh, ok := c.host.(LabelHost)
	if !ok {
		c.out.Skipped = append(c.out.Skipped, fmt.Sprintf("%s: the %s label not followed: %s cannot say who applied it", c.ref(), c.IgnoreLabel, c.host.Host()))
		return "", nil
	}
	by, event, err := lh.LabeledBy(c.ctx, c.repo, c.k.Number, c.IgnoreLabel)
	if err != nil {
		return "", fmt.Errorf("read who labelled %s %s: %w", c.ref(), c.IgnoreLabel, err)
	}
	if by != "" {
		ok, err := c.canWrite(c.ctx, c.host, c.repo, by)
		if err != nil || ok {
			return by, err
		}
	}
	who := by
	if who == "" {
		who = "an account " + c.host.Host() + " does not name"
	}
	c.out.Skipped = append(c.out.Skipped, fmt.Sprintf("%s: the %s label from %s not followed: only accounts that can write to %s steer driftfix", c.ref(), c.IgnoreLabel, who, c.repo))
	login, err := c.host.Login(c.ctx)
	if err != nil {
		return "", err
	}
	marker := labelRefusedMarker(event)
	for _, m := range comments {
		if strings.EqualFold(m.Author, login) && strings.Contains(m.Body, marker) {
			return "", nil // said so before
		}
	}
	msg := fmt.Sprintf("The %s label was applied by %s, who cannot write to this repository, so driftfix goes on proposing this fix. "+
		"Someone with write access can remove the label and apply it again, or comment `/driftfix ignore`.\n\n%s", templates.Code(c.IgnoreLabel), templates.Code(who), marker)
	return "", c.host.Comment(c.ctx, c.repo, c.k.Number, msg)
}

// acknowledged reports whether driftfix's own account reacted to a comment.
func (c *followed) acknowledged(id int64) (bool, error) {
	login, err := c.host.Login(c.ctx)
	if err != nil {
		return false, err
	}
	return c.host.Reacted(c.ctx, c.repo, id, login)
}

// remember acknowledges the commands acted on and records them as
// followed, once what they asked is done.
func (c *followed) remember(a asked) error {
	for _, k := range a.acks {
		if err := c.host.React(c.ctx, c.repo, k.comment, k.reaction); err != nil {
			c.log.Warn("acknowledge a command", "pr", c.ref(), "error", err.Error()) // it was acted on all the same
		}
		if _, err := c.Store.Followed(c.ctx, c.repo.Key(), k.comment, c.now); err != nil {
			return err
		}
	}
	return nil
}

// steer does what the commands ask; it reports whether the pull request is
// closed by it.
func (c *followed) steer() (bool, error) {
	a, err := c.commands()
	if err != nil {
		return false, err
	}
	switch {
	case a.ignore:
		if err := c.Store.Reject(c.ctx, c.k.Fingerprint, c.k.App, "asked to stop on "+c.ref()+" by "+a.by, c.now); err != nil {
			return false, err
		}
		msg := "driftfix will not propose this fix again, as asked. The drift stays visible in the digest.\n\n" + stoppedMarker + "\n" + closedMarker
		if err := c.host.ClosePR(c.ctx, c.repo, c.k.Number, c.k.Branch, msg); err != nil {
			return false, err
		}
		c.report("closed", " (asked to stop)")
		c.out.Rejected = append(c.out.Rejected, c.ref())
		return true, errors.Join(c.remember(a), c.save(state.PRClosed))
	case !a.snooze.IsZero():
		until := a.snooze.UTC().Format("2006-01-02 15:04 MST")
		if err := c.Store.Snooze(c.ctx, c.k.Fingerprint, a.snooze, "snoozed on "+c.ref()+" by "+a.by); err != nil {
			return false, err
		}
		msg := fmt.Sprintf("Snoozed until %s, as %s asked: driftfix proposes this fix again after that if the drift is still there.\n\n%s\n%s", until, a.by, snoozedMarker(a.snooze), closedMarker)
		if err := c.host.ClosePR(c.ctx, c.repo, c.k.Number, c.k.Branch, msg); err != nil {
			return false, err
		}
		c.report("closed", " (snoozed until "+until+")")
		c.out.Snoozed = append(c.out.Snoozed, c.ref())
		return true, errors.Join(c.remember(a), c.save(state.PRClosed))
	case a.recheck:
		// kept until the check is published again (publishCheck clears
		// it), so a cycle that publishes nothing (quiet hours) loses no recheck
		if err := c.Store.Request(c.ctx, c.k.Fingerprint, state.ActionRecheck, c.now); err != nil {
			return false, err
		}
	}
	return false, c.remember(a)
}
