package templates

import (
	"strings"
)

// Command is one /driftfix command driftfix obeys in a comment on its fix
// pull requests. bot/publish's parser takes its verbs from Commands, and a
// test there fails when it obeys a verb this list lacks or lists one it
// does not obey.
type Command struct {
	Verb    string // the word after /driftfix
	Arg     string // the argument's form, "" for none
	Example string // a whole command as a person writes it
	Does    string // what it does, one sentence
}

// Commands are the commands, in the order pull requests list them.
var Commands = []Command{
	{Verb: "ignore", Example: "/driftfix ignore",
		Does: "closes this pull request and never proposes this fix again (the `driftfix/ignore` label does the same); the drift stays in the digest, and the Drift Dashboard, where it is kept, has a box that proposes it again"},
	{Verb: "recheck", Example: "/driftfix recheck",
		Does: "publishes this pull request's check again on its head"},
	{Verb: "snooze", Arg: "DURATION", Example: "/driftfix snooze 14d",
		Does: "closes this pull request and proposes the fix again after that long if the drift is still there (hours, days or weeks: 12h, 14d, 2w; at most 180d)"},
}

// CommandsFor says, for a pull request body, which pull requests the
// commands steer: FixPR for driftfix's fix pull requests, which obey them;
// OtherPR for its other pull requests (ignore rules, argocd-cm, the policy
// file), which a person answers by merging or closing.
type CommandsFor int

// The kinds of pull request a commands section is written for.
const (
	FixPR CommandsFor = iota
	OtherPR
)

// CommandsSection is the collapsed section every pull request body ends
// with: every command driftfix obeys, and where.
func CommandsSection(on CommandsFor) string {
	var b strings.Builder
	b.WriteString("<details>\n<summary>driftfix commands</summary>\n\n")
	if on == FixPR {
		b.WriteString("Comment on this pull request, as an account that can write to the repository, a command at the start of a line:\n\n")
	} else {
		b.WriteString("This pull request takes no commands: merge it, or close it without merging and driftfix will not propose it again. " +
			"On driftfix's fix pull requests, an account that can write to the repository comments a command at the start of a line:\n\n")
	}
	for _, c := range Commands {
		b.WriteString("- `" + c.Example + "`: " + c.Does + "\n")
	}
	b.WriteString("\ndriftfix reacts 👍 to a command it followed and 😕 to one it could not read. " +
		"A repository's own `.github/driftfix.yaml` sets its labels, reviewers, quiet hours, title style and sign-off, or turns fix pull requests off, as far as driftfix's policy allows.\n\n</details>\n")
	return b.String()
}
