package remediations

import "github.com/driftfix/driftfix/bot/drift"

// What the tests of package remediations_test read of its insides.

// Judgment is why the broad-ignore diagnosis flags a rule, as judge reads it.
type Judgment struct{ Broad, Sensitive string }

// Judge is judge.
func Judge(ev []drift.Evidence) Judgment {
	j := judge(ev)
	return Judgment{Broad: j.broad, Sensitive: j.sensitive}
}

// Verify is verify.
func (g *FleetGroup) Verify(apps map[string]PlatformApp, e PlatformEdit, diagnose Diagnose) (string, string, error) {
	return g.verify(apps, e, diagnose)
}
