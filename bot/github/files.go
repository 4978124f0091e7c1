package github

import (
	"context"
	"fmt"

	"github.com/driftfix/driftfix/bot/githost"
	gh "github.com/google/go-github/v89/github"
)

// File reads a file of the repository at a branch or commit: its content,
// or nil when there is no such file there (nothing, or a directory, a
// symlink or a submodule at that path). GitHub serves files up to 1 MB
// this way; a policy file is far smaller.
func (c *Client) File(ctx context.Context, r githost.Repo, ref, file string) ([]byte, error) {
	cl, err := c.client(ctx, r)
	if err != nil {
		return nil, err
	}
	fc, _, err := fetch(ctx, c, "get file", func(ctx context.Context) (*gh.RepositoryContent, *gh.Response, error) {
		fc, _, resp, err := cl.Repositories.GetContents(ctx, r.Owner, r.Name, file, &gh.RepositoryContentGetOptions{Ref: ref})
		return fc, resp, err
	})
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s at %s of %s: %w", file, ref, r, err)
	}
	if fc == nil || fc.GetType() != "file" {
		return nil, nil // a directory (listed, fc nil), a symlink or a submodule
	}
	s, err := fc.GetContent()
	if err != nil {
		return nil, fmt.Errorf("read %s at %s of %s: %w", file, ref, r, err)
	}
	return []byte(s), nil
}
