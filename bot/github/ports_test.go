package github_test

import (
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/publish"
)

// The GitHub adapter provides every port the publisher asks a Git host
// for, the optional ones included: GitHub can say who labelled a pull
// request, read a file, list commit subjects, name its commits' author and
// post reviews.
var (
	_ publish.GitHost     = (*github.Client)(nil)
	_ publish.RepoHost    = (*github.Client)(nil)
	_ publish.BranchHost  = (*github.Client)(nil)
	_ publish.PullHost    = (*github.Client)(nil)
	_ publish.CheckHost   = (*github.Client)(nil)
	_ publish.SteerHost   = (*github.Client)(nil)
	_ publish.IssueHost   = (*github.Client)(nil)
	_ publish.LabelHost   = (*github.Client)(nil)
	_ publish.FileHost    = (*github.Client)(nil)
	_ publish.HistoryHost = (*github.Client)(nil)
	_ publish.SignerHost  = (*github.Client)(nil)
	_ publish.ReviewHost  = (*github.Client)(nil)
)
