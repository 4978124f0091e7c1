package publish

import (
	"context"
	"strings"

	"github.com/driftfix/driftfix/bot/githost"
)

// steers reports whether a comment's author may steer driftfix on the
// repository: only accounts that can write to it. Write access comes only
// with these associations (an owner, an organization member through a
// team, a collaborator), so others are refused without asking; for these the
// host's permission API decides, asked once per account and cycle.
func (r *run) steers(ctx context.Context, host RepoHost, repo githost.Repo, c githost.Comment) (bool, error) {
	switch strings.ToUpper(c.Association) {
	case "OWNER", "MEMBER", "COLLABORATOR":
	default:
		return false, nil
	}
	return r.canWrite(ctx, host, repo, c.Author)
}

// canWrite reports whether an account can write to the repository, as the
// host's permission API says, asked once per account and cycle.
func (r *run) canWrite(ctx context.Context, host RepoHost, repo githost.Repo, login string) (bool, error) {
	key := repo.Key() + " " + strings.ToLower(login)
	if ok, seen := r.writers[key]; seen {
		return ok, nil
	}
	perm, err := host.Permission(ctx, repo, login)
	if err != nil {
		return false, err
	}
	r.writers[key] = githost.CanWrite(perm)
	return r.writers[key], nil
}
