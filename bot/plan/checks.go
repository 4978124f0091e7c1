package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/pipeline"
	"github.com/driftfix/driftfix/bot/proposals"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// checkHead checks the head of the fix's open pull request, when it has one:
// the branch's files rendered and diagnosed against the live state.
func (pl planning) checkHead(ctx context.Context, part *CycleResult, pr *proposals.ProposedPR, r collect.ScanResult, fo pipeline.FixOptions) {
	if pl.opts.Open == nil || pl.in.BranchFiles == nil || !pl.opts.Open(pr.Key) {
		return
	}
	files, sha, err := pl.in.BranchFiles(ctx, pr.RepoURL, pr.Branch)
	if err != nil {
		part.Skipped = append(part.Skipped, fmt.Sprintf("%s/%s %s: the head of %s was not checked: %v", pr.Namespace, pr.App, pr.Plan.Kind, pr.Branch, err))
		return
	}
	head := remediations.Repo{}
	for k, v := range files {
		head[k] = []byte(v)
	}
	c := pipeline.CheckHead(r.Snapshot, r.Report, remediations.RepoFromSnapshot(r.Snapshot), head, pr.Plan, fo)
	hc, err := pl.headCheck(r, c, sha)
	if err != nil {
		part.Errors = append(part.Errors, err)
		return
	}
	pr.Check = &hc
}

// headCheck renders a check for a commit (empty: the plan's own).
func (pl planning) headCheck(r collect.ScanResult, c pipeline.Check, sha string) (proposals.HeadCheck, error) {
	v := templates.CheckView{App: r.App.Name, AppNamespace: r.App.Namespace, ArgoCDURL: pl.in.URL, Head: shortSHA(sha), Planned: sha == "",
		Success: c.Success, Error: c.Error, Files: c.Files}
	for _, row := range c.Rows {
		cr := templates.CheckRow{Resource: row.Resource, Path: row.Path.String(), Cause: row.Cause, Status: row.Status,
			Git: templates.ShownOf(row.Resource, row.Git, row.InGit), Live: templates.ShownOf(row.Resource, row.Live, row.InLive), Evidence: drift.EvidenceTexts(row.Evidence)}
		v.Rows = append(v.Rows, cr)
	}
	summary, text, err := templates.CheckOutput(v)
	if err != nil {
		return proposals.HeadCheck{}, fmt.Errorf("application %s/%s: %w", r.App.Namespace, r.App.Name, err)
	}
	title := templates.CheckTitle(v)
	sum := sha256.Sum256([]byte(fmt.Sprint(c.Success, "\x00", title, "\x00", summary, "\x00", text)))
	return proposals.HeadCheck{SHA: sha, Success: c.Success, Title: title, Summary: summary, Text: text,
		DetailsURL: templates.AppURL(pl.in.URL, r.App.Namespace, r.App.Name), Digest: hex.EncodeToString(sum[:8])}, nil
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
