package publish

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/githost"
	"github.com/driftfix/driftfix/templates"
)

// A repository's side of its pull requests: its own .github/driftfix.yaml
// (labels, reviewers, quiet hours, title style, sign-off, opting out),
// read from its default branch once a cycle and used under the central
// policy; its title style, told from its recent history when the policy
// says auto; and the sign-off trailer of driftfix's commits. A broken file
// is reported (the log, the cycle's result, the repository's Drift
// Dashboard) and the central policy alone applies to that repository.

// repoFileRecheck is how long a repository found without its own file is
// not asked again: GitHub counts a missing file's 404 against the rate
// limit, while a file that is there is read again each cycle for free
// (a conditional request answered 304).
const repoFileRecheck = time.Hour

// historyDepth is how many of the default branch's newest commits tell a
// repository's title style.
const historyDepth = 20

// repoSide is what one repository's own file and history say, read once a cycle.
type repoSide struct {
	own     *config.RepoFile // nil: no file, a broken one, or not read
	problem string           // why the file is not used ("" when it is, or there is none)
	err     error            // the file could not be read: nothing is published there this cycle
	style   *bool            // conventional titles, once told from the history
	signer  string           // the Signed-off-by line, once looked up
}

// side reads a repository's own file once a cycle.
func (r *run) side(ctx context.Context, host RepoHost, repo githost.Repo) *repoSide {
	if s, ok := r.sides[repo.Key()]; ok {
		return s
	}
	s := &repoSide{}
	r.sides[repo.Key()] = s
	fh, ok := host.(FileHost)
	if !ok || !r.Config.Policy.RepoFile.Reads() {
		return s
	}
	if at, ok := r.noRepoFile[repo.Key()]; ok && r.now.Sub(at) < repoFileRecheck && !r.now.Before(at) {
		return s
	}
	base, err := host.DefaultBranch(ctx, repo)
	if err != nil {
		s.err = fmt.Errorf("read %s of %s: %w", config.RepoFilePath, repo, err)
		return s
	}
	b, err := fh.File(ctx, repo, base, config.RepoFilePath)
	switch {
	case err != nil:
		s.err = fmt.Errorf("read %s of %s: %w", config.RepoFilePath, repo, err)
	case b == nil:
		if r.noRepoFile == nil {
			r.noRepoFile = map[string]time.Time{}
		}
		r.noRepoFile[repo.Key()] = r.now
	default:
		delete(r.noRepoFile, repo.Key())
		if s.own, err = r.Config.Policy.ReadRepoFile(b); err != nil {
			s.problem = err.Error()
			r.log.Warn("a repository's driftfix file is not used; the central policy applies", "repo", repo.String(), "file", config.RepoFilePath, "problems", s.problem)
			r.out.RepoFiles = append(r.out.RepoFiles, fmt.Sprintf("%s: %s not used:\n%s", repo, config.RepoFilePath, s.problem))
		}
	}
	return s
}

// policy is the repository's policy for a pull request under pol.
func (s *repoSide) policy(repo githost.Repo, pol config.Policy) config.RepoPolicy {
	return pol.ForRepo(repo.String(), s.own)
}

// conventional says whether the repository's titles are Conventional
// Commits: as its policy says, or, under auto, as most of its default
// branch's newest commits are (driftfix's own left out). A host that
// cannot list commits gets plain titles.
func (r *run) conventional(ctx context.Context, host RepoHost, repo githost.Repo, s *repoSide, style config.TitleStyle) (bool, error) {
	switch style {
	case config.TitleConventional:
		return true, nil
	case config.TitlePlain:
		return false, nil
	}
	if s.style != nil {
		return *s.style, nil
	}
	hh, ok := host.(HistoryHost)
	if !ok {
		return false, nil
	}
	base, err := host.DefaultBranch(ctx, repo)
	if err != nil {
		return false, err
	}
	subjects, err := hh.RecentSubjects(ctx, repo, base, historyDepth)
	if err != nil {
		return false, err
	}
	conv := ConventionalHistory(subjects)
	s.style = &conv
	return conv, nil
}

// conventionalRE is a Conventional Commits header of one of the types
// commitlint's conventional configuration accepts.
var conventionalRE = regexp.MustCompile(`(?i)^(build|chore|ci|docs|feat|fix|perf|refactor|revert|style|test)(\([^()\r\n]+\))?!?: \S`)

// ConventionalHistory says whether commit subjects follow Conventional
// Commits: at least half of them, and at least three, do. Subjects of
// driftfix's own plain titles, and reverts and merges git writes, do not count.
func ConventionalHistory(subjects []string) bool {
	n, conv := 0, 0
	for _, s := range subjects {
		if strings.HasPrefix(s, "driftfix(") || strings.HasPrefix(s, "Merge ") || strings.HasPrefix(s, "Revert \"") {
			continue
		}
		n++
		if conventionalRE.MatchString(s) {
			conv++
		}
	}
	return conv >= 3 && 2*conv >= n
}

// styled is a title and commit message in the repository's style: the
// conventional title on the message's first line too.
func styled(title, message string, conventional bool) (string, string) {
	if !conventional {
		return title, message
	}
	ct := templates.ConventionalTitle(title)
	if rest, ok := strings.CutPrefix(message, title); ok {
		message = ct + rest
	}
	return ct, message
}

// signOff is the Signed-off-by line of driftfix's commits to a repository:
// the name and address the host writes as their author.
func (r *run) signOff(ctx context.Context, host RepoHost, repo githost.Repo, s *repoSide) (string, error) {
	if s.signer != "" {
		return s.signer, nil
	}
	sh, ok := host.(SignerHost)
	if !ok {
		return "", fmt.Errorf("sign-off is on for %s, but %s cannot say which name and email its commits carry", repo, host.Host())
	}
	name, email, err := sh.CommitIdentity(ctx, repo)
	if err != nil {
		return "", err
	}
	s.signer = "Signed-off-by: " + name + " <" + email + ">"
	return s.signer, nil
}

// signed adds a trailer line to a commit message: to its last paragraph
// when that is already trailers (driftfix's own key line), else as a new one.
func signed(message, trailer string) string {
	message = strings.TrimRight(message, "\n")
	paras := strings.Split(message, "\n\n")
	last := paras[len(paras)-1]
	trailers := len(paras) > 1
	for _, l := range strings.Split(last, "\n") {
		if !trailerRE.MatchString(l) {
			trailers = false
		}
	}
	if trailers {
		return message + "\n" + trailer + "\n"
	}
	return message + "\n\n" + trailer + "\n"
}

// trailerRE is a git trailer line: a token, a colon, a value.
var trailerRE = regexp.MustCompile(`^[A-Za-z0-9-]+: \S`)

// repoTerms is what a pull request to one repository takes from its side:
// labels and reviewers, its title and commit message in the repository's
// style and signed off when asked, or why it is held.
type repoTerms struct {
	held              string
	labels, reviewers []string
	title, message    string
}

// terms applies a repository's side to a pull request under pol; fix says
// it is a fix pull request, which a repository can turn off. During quiet
// hours, held says so and the rest is still filled in, for a pull request
// that is only updated.
func (r *run) terms(ctx context.Context, host RepoHost, repo githost.Repo, pol config.Policy, fix bool, title, message string) (repoTerms, error) {
	s := r.side(ctx, host, repo)
	if s.err != nil {
		return repoTerms{}, s.err
	}
	rp := s.policy(repo, pol)
	t := repoTerms{labels: rp.Labels, reviewers: rp.Reviewers}
	if fix && !rp.Fixes {
		t.held = "the repository's " + config.RepoFilePath + " turns fix pull requests off (fixes: false)"
		return t, nil
	}
	if rp.Quiet(r.now) {
		t.held = "quiet hours"
		if s.own != nil && s.own.QuietHours != nil {
			t.held = "quiet hours (the repository's " + config.RepoFilePath + ")"
		}
	}
	conv, err := r.conventional(ctx, host, repo, s, rp.TitleStyle)
	if err != nil {
		return t, err
	}
	t.title, t.message = styled(title, message, conv)
	if rp.SignOff {
		line, err := r.signOff(ctx, host, repo, s)
		if err != nil {
			return t, err
		}
		t.message = signed(t.message, line)
	}
	return t, nil
}
