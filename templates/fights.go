package templates

import (
	"fmt"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// FightLine is two writers taking turns at the paths of one resource: Argo
// CD's self-heal writing Git's value back and another writer its own. Every
// name in it (resource, paths, writers) is written by the cluster.
type FightLine struct {
	App, Namespace, Instance string
	Resource                 drift.Ref
	Paths                    []string
	// Writers are the two field managers ("" when managedFields name none);
	// Last is when each was last seen holding the paths (zero: not seen).
	Writers [2]string
	Last    [2]time.Time
	// Flips counts the changes of hands seen across cycles (0 when the fight
	// was told from the syncs alone).
	Flips int
	// Syncs counts the self-heal syncs of one revision Argo CD shows (what
	// the fight costs); PerHour is their rate across cycles (0: not known yet).
	Syncs, PerHour int
	// Cause and Fix are the other writer's cause as the diagnosis names it,
	// and the fix it suggests for it ("" when no cycle diagnosed it yet).
	Cause drift.Cause
	Fix   drift.FixKind
}

// writer names a field manager for people.
func writer(m string) string {
	if m == "" {
		return "a writer managedFields do not name"
	}
	return m
}

// Summary says, in plain words, who fights, how often and what it costs;
// code renders cluster-written names safely for the target (Slack or markdown).
func (f FightLine) Summary(code func(any) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s and %s take turns at %s", code(writer(f.Writers[0])), code(writer(f.Writers[1])), joinCode(f.Paths, code))
	var parts []string
	if f.Flips > 0 {
		parts = append(parts, fmt.Sprintf("%d changes of hands", f.Flips))
	}
	for i, at := range f.Last {
		if !at.IsZero() {
			parts = append(parts, fmt.Sprintf("%s last at %s", code(writer(f.Writers[i])), at.UTC().Format("2006-01-02 15:04 UTC")))
		}
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	fmt.Fprintf(&b, "; cost: %d self-heal %s of one revision", f.Syncs, plural(f.Syncs, "sync", "syncs"))
	if f.PerHour > 0 {
		fmt.Fprintf(&b, ", about %d an hour", f.PerHour)
	}
	if f.Fix != "" {
		fmt.Fprintf(&b, ". Fix: %s, the one for the other writer's cause %s", code(f.Fix), code(f.Cause))
	} else if f.Cause != "" {
		fmt.Fprintf(&b, ". The other writer's cause is %s; the diagnosis names no fix for it", code(f.Cause))
	} else {
		b.WriteString(". No cycle has diagnosed the other writer's cause yet")
	}
	return b.String()
}

func joinCode(ps []string, code func(any) string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = code(p)
	}
	return strings.Join(out, ", ")
}

// MarkdownSummary is Summary for GitHub markdown (the Drift Dashboard).
func (f FightLine) MarkdownSummary() string { return f.Summary(Code) }
