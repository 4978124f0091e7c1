package plan

import (
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// The values a cycle proposes are declared in bot/proposals and the texts
// that find their pull requests again in templates; the publisher names
// them here, where it found them before they moved.
type (
	// ProposedPR is proposals.ProposedPR.
	ProposedPR = proposals.ProposedPR
	// HeadCheck is proposals.HeadCheck.
	HeadCheck = proposals.HeadCheck
	// AppWrites is proposals.AppWrites.
	AppWrites = proposals.AppWrites
	// PlatformPR is proposals.PlatformPR.
	PlatformPR = proposals.PlatformPR
	// IgnorePR is proposals.IgnorePR.
	IgnorePR = proposals.IgnorePR
	// PRHead is proposals.PRHead.
	PRHead = proposals.PRHead
	// PRPrediction is proposals.PRPrediction.
	PRPrediction = proposals.PRPrediction
)

// ErrCycleBudget is proposals.ErrCycleBudget.
var ErrCycleBudget = proposals.ErrCycleBudget

// The markers and branches of templates (prtext.go), for the publisher.
var (
	KeyMarker          = templates.KeyMarker
	KeyMarkerRE        = templates.KeyMarkerRE
	PlatformMarker     = templates.PlatformMarker
	PlatformBranch     = templates.PlatformBranch
	IgnoreMarker       = templates.IgnoreMarker
	IgnoreBranch       = templates.IgnoreBranch
	WriterMarker       = templates.WriterMarker
	WriterBranchPrefix = templates.WriterBranchPrefix
)

// The publisher plans no fix itself (it does not import remediations): what
// it asks of the planners, it asks through the planning stage.

var (
	// ErrWriterPlaced says the policy file's writers place a field manager
	// already (remediations.ErrWriterPlaced).
	ErrWriterPlaced = remediations.ErrWriterPlaced
	// WriterKey names a field manager without its text
	// (remediations.WriterKey).
	WriterKey = remediations.WriterKey
	// RuleAt names an ignore rule by its holder and place
	// (remediations.RuleAt).
	RuleAt = remediations.RuleAt
)

// PlanWriterPR plans the pull request that adds a writers entry to the
// policy file (remediations.PlanWriterPR), checked with the policy's own
// parser.
func PlanWriterPR(prefix, file string, src []byte, manager string, is drift.WriterKind, dashboard, by string) (remediations.WriterPR, error) {
	return remediations.PlanWriterPR(prefix, file, src, policyWriters, manager, is, dashboard, by)
}

// policyWriters reads a policy file's writers with the policy's parser.
func policyWriters(src []byte) ([]drift.Writer, error) {
	cfg, err := config.Parse(src)
	if err != nil {
		return nil, err
	}
	return cfg.Policy.Writers, nil
}
