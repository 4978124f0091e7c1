package cycle

import (
	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/gitrepo"
	"github.com/driftfix/driftfix/remediations/render"
)

// RenderLimits are the policy's bounds for the renders fixes are verified
// with; fields the policy leaves out keep render.DefaultLimits.
func RenderLimits(l config.Limits) render.Limits {
	return render.Limits{MaxChartBytes: l.ChartBytes, MaxValuesBytes: l.ValuesBytes, MaxRenderedBytes: l.RenderedBytes, Timeout: l.RenderTimeout}
}

// GitLimits are the policy's bounds for reading an application's repository;
// fields the policy leaves out keep gitrepo's defaults.
func GitLimits(l config.Limits) gitrepo.Limits {
	return gitrepo.Limits{MaxFetchBytes: l.RepoFetchBytes, MaxTotalBytes: l.RepoBytes}
}
