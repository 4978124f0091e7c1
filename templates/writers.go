package templates

import (
	"fmt"
	"strings"
)

// WriterPRView is a pull request that adds a writers entry to the policy
// file, as a person placed a field manager on the Drift Dashboard.
type WriterPRView struct {
	Manager string // from the cluster: any text
	Is      string // controller or person
	File    string // the policy file's path
	// Dashboard is where the box was ticked (owner/name#number); By is the
	// account whose edit ticked it.
	Dashboard, By string
	Diff          string // the policy file's change, unified
	Fingerprint   string
}

// WriterPRTitle says what a writers pull request does; the manager's name
// is left to the body, where it is escaped.
func WriterPRTitle(v WriterPRView) string {
	return fmt.Sprintf("driftfix(policy): name a field manager a %s in writers", v.Is)
}

// WriterPRBody renders a writers pull request's body.
func WriterPRBody(v WriterPRView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "On the Drift Dashboard (%s), %s placed the field manager %s as a **%s**. This adds it to the policy's `writers:` in %s, so driftfix stops calling what it writes unknown.\n\n",
		v.Dashboard, Code(v.By), Code(v.Manager), Text(v.Is), Code(v.File))
	if v.Is == "controller" {
		b.WriteString("As a controller with no `owns`, a difference it writes becomes `controller-write`; no fix hands a field over to it until the paths it legitimately owns are listed under `owns:`.\n\n")
	} else {
		b.WriteString("As a person, a difference it writes becomes `manual-change`: real drift, which driftfix reports and never fixes.\n\n")
	}
	f := fence(v.Diff)
	fmt.Fprintf(&b, "%sdiff\n%s\n%s\n\n", f, shown(strings.TrimRight(v.Diff, "\n")), f)
	b.WriteString("The manager is written as a quoted name with its glob characters escaped, so the entry names exactly this manager; the file was read back with driftfix's policy parser.\n\n")
	b.WriteString(CommandsSection(OtherPR) + "\n---\n<sub>Opened by driftfix from a box ticked on the Drift Dashboard. Close this pull request without merging and driftfix will not propose this entry again.</sub>\n")
	fmt.Fprintf(&b, "<!-- driftfix:fingerprint=%s -->\n", v.Fingerprint)
	return b.String()
}
