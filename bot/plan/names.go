package plan

import (
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/proposal"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// The values a cycle proposes are declared in bot/proposal, their texts in
// templates and the planning of the writers pull request in remediations;
// the publisher names them here until it imports them from their homes.
type (
	// ProposedPR is proposal.ProposedPR.
	ProposedPR = proposal.ProposedPR
	// HeadCheck is proposal.HeadCheck.
	HeadCheck = proposal.HeadCheck
	// AppWrites is proposal.AppWrites.
	AppWrites = proposal.AppWrites
	// PlatformPR is proposal.PlatformPR.
	PlatformPR = proposal.PlatformPR
	// IgnorePR is proposal.IgnorePR.
	IgnorePR = proposal.IgnorePR
	// PRHead is proposal.PRHead.
	PRHead = proposal.PRHead
	// PRPrediction is proposal.PRPrediction.
	PRPrediction = proposal.PRPrediction
)

var (
	// ErrCycleBudget is proposal.ErrCycleBudget.
	ErrCycleBudget = proposal.ErrCycleBudget
	// ErrWriterPlaced is remediations.ErrWriterPlaced.
	ErrWriterPlaced = remediations.ErrWriterPlaced
	// KeyMarkerRE is templates.KeyMarkerRE.
	KeyMarkerRE = templates.KeyMarkerRE
)

// Functions named here for the publisher (see above).
var (
	RenderLimits       = proposal.RenderLimits
	KeyMarker          = templates.KeyMarker
	PlatformMarker     = templates.PlatformMarker
	PlatformBranch     = templates.PlatformBranch
	IgnoreMarker       = templates.IgnoreMarker
	IgnoreBranch       = templates.IgnoreBranch
	WriterMarker       = templates.WriterMarker
	WriterBranchPrefix = templates.WriterBranchPrefix
	WriterKey          = remediations.WriterKey
	RuleAt             = remediations.RuleAt
)

// PlanWriterPR is remediations.PlanWriterPR, checked with the policy's
// own parser.
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
