// Package publish turns a cycle's result into pull requests and digests
// through the Git host and notifier ports, remembering what it did in the
// state store. It decides no cause.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/cycle"
	"github.com/driftfix/driftfix/bot/github"
	"github.com/driftfix/driftfix/bot/slack"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// Publisher turns a cycle's result into pull requests, closed pull requests
// and Slack digests, remembering what it did in the state store. It decides
// no cause: it publishes what the cycle planned, under the policy.
type Publisher struct {
	Config *config.Config
	Store  *state.Store
	GitHub *github.Client  // nil: pull requests are only reported
	Slack  *slack.Notifier // nil: digests are only reported
	Log    *slog.Logger    // nil: discard
	// IgnoreLabel on a pull request stops its fix for good (default "driftfix/ignore").
	IgnoreLabel string
	// PerPR bounds the publishing of one pull request; it runs to the end
	// even when the cycle is asked to stop, so no half-made PR is left (default 2m).
	PerPR time.Duration

	adopted bool // driftfix's open PRs were looked up on GitHub since start
}

// Published is what one publishing step did.
type Published struct {
	Opened, Updated, Unchanged, Closed, Merged, Rejected, Fixed []string // "repo#number"
	// Skipped are proposals not published, with why.
	Skipped []string
	// Digests are the messages posted, by channel.
	Digests map[string][]templates.Message
	Errors  []error
}

// closedMarker ends every comment driftfix writes when it closes its own
// pull request, so a closed PR can be told apart from one a person closed
// even when the state database is lost.
const closedMarker = "<!-- driftfix:closed-by-driftfix -->"

var ignoreComment = regexp.MustCompile(`(?m)^\s*/driftfix\s+ignore\b`)
var bodyFingerprint = regexp.MustCompile(`<!-- driftfix:fingerprint=([0-9a-f]+) -->`)

// Publish reconciles the pull requests driftfix opened before, publishes
// the cycle's proposals and posts the digests.
func (p *Publisher) Publish(ctx context.Context, res *cycle.CycleResult, now time.Time) Published {
	log := p.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if p.IgnoreLabel == "" {
		p.IgnoreLabel = "driftfix/ignore"
	}
	if p.PerPR == 0 {
		p.PerPR = 2 * time.Minute
	}
	out := Published{Digests: map[string][]templates.Message{}}
	fail := func(err error) {
		log.Error("publish", "error", err.Error())
		out.Errors = append(out.Errors, err)
	}
	apps := map[string]cycle.AppState{}
	for _, a := range res.Apps {
		apps[cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)] = a
	}
	views := map[string]*templates.DigestView{} // by channel and instance
	view := func(appKey string) *templates.DigestView {
		inst, rest, _ := strings.Cut(appKey, "/")
		ns, name, _ := strings.Cut(rest, "/")
		ch := p.channel(apps[appKey], ns, name)
		if ch == "" {
			return &templates.DigestView{} // nowhere to send it
		}
		k := ch + "\x00" + inst
		if views[k] == nil {
			views[k] = &templates.DigestView{Instance: inst, ArgoCDURL: res.URLs[inst]}
		}
		return views[k]
	}

	// 1. First-seen times: new stuck applications go in the digest.
	newStuck := map[string]bool{}
	for key, a := range apps {
		if !a.Stuck {
			if err := p.Store.Cleared(ctx, key); err != nil {
				fail(err)
			}
			continue
		}
		first := a.FirstSeen // recorded while the cycle planned it
		if first.IsZero() {
			var err error
			if first, err = p.Store.FirstSeen(ctx, key, now); err != nil {
				fail(err)
				continue
			}
		}
		newStuck[key] = first.Equal(now)
	}
	for _, l := range res.Digest.NewStuck {
		if k := cycle.AppKey(l.Instance, l.Namespace, l.App); newStuck[k] {
			v := view(k)
			v.NewStuck = append(v.NewStuck, l)
		}
	}
	for _, l := range res.Digest.ForPeople {
		k := cycle.AppKey(l.Instance, l.Namespace, l.App)
		v := view(k)
		v.ForPeople = append(v.ForPeople, l)
	}
	if ch := p.Config.Slack.Channel; ch != "" {
		for _, l := range res.Digest.Fleet { // platform lines go to the platform's channel
			k := ch + "\x00" + l.Instance
			if views[k] == nil {
				views[k] = &templates.DigestView{Instance: l.Instance, ArgoCDURL: res.URLs[l.Instance]}
			}
			views[k].Fleet = append(views[k].Fleet, l)
		}
	}

	// 2. Pull requests opened before: merged, closed by a person, asked to
	// stop, or no longer needed.
	proposed := map[string]cycle.ProposedPR{}
	for _, pr := range res.PRs {
		proposed[pr.Key] = pr
	}
	known, err := p.Store.PRs(ctx, state.PROpen, state.PRMerged)
	if err != nil {
		fail(err)
	}
	limited := false // GitHub's rate limit is used up: the rest waits for the next cycle
	// A database is fresh or stale only at start (a new pod, a new leader),
	// so the open PRs are looked up on GitHub once, after a cycle that
	// reached every instance; later cycles know what they opened.
	if p.GitHub != nil && !p.adopted {
		adopted, err := p.adopt(ctx, res, known, now)
		if err != nil {
			fail(err)
			limited = errors.Is(err, github.ErrRateLimited)
		}
		p.adopted = err == nil && len(res.FailedInstances) == 0
		known = append(known, adopted...)
	}
	mayClose := p.unlisted(ctx, res, known, now, log, &out, fail)
	openPerRepo := map[string]int{}
	open := 0
	for _, k := range known {
		if ctx.Err() != nil {
			break
		}
		inst, rest, _ := strings.Cut(k.App, "/")
		ns, name, _ := strings.Cut(rest, "/")
		a, listed := apps[k.App]
		line := func(title, url string) templates.PRLine {
			return templates.PRLine{App: name, Namespace: ns, Instance: inst, Title: title, URL: url, Key: k.Fingerprint}
		}
		if k.State == state.PROpen {
			if p.GitHub == nil || limited {
				open++
				openPerRepo[k.Repo]++
				continue
			}
			repo, _ := github.ParseRepo("https://github.com/" + k.Repo)
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.PerPR)
			done, err := p.reconcile(cctx, repo, k, a, listed, mayClose[k.App], !res.Owns(k.App), proposed, now, &out, func(kind string, l templates.PRLine) {
				v := view(k.App)
				if kind == "merged" {
					v.Merged = append(v.Merged, l)
				} else {
					v.Closed = append(v.Closed, l)
				}
			}, line)
			cancel()
			if err != nil {
				fail(err)
			}
			if !done {
				open++
				openPerRepo[k.Repo]++
				continue
			}
			if cur, ok, err := p.Store.PRFor(ctx, k.Fingerprint); err == nil && ok {
				k = cur
			}
		}
		// A merged fix whose application is Synced again: fixed.
		if k.State == state.PRMerged && listed && !a.Stuck && a.App.SyncStatus == "Synced" {
			v := view(k.App)
			v.Fixed = append(v.Fixed, templates.AppLine{App: name, Namespace: ns, Instance: inst, Key: k.Fingerprint, Note: fmt.Sprintf("after %s#%d was merged", k.Repo, k.Number)})
			k.State, k.Updated = state.PRFixed, now
			if err := p.Store.SavePR(ctx, k); err != nil {
				fail(err)
			}
			out.Fixed = append(out.Fixed, fmt.Sprintf("%s#%d", k.Repo, k.Number))
		}
	}

	// 3. This cycle's proposals.
	opened := 0
	for _, pr := range res.PRs {
		if ctx.Err() != nil {
			out.Skipped = append(out.Skipped, pr.Branch+": the cycle was stopped before it was published")
			continue
		}
		if limited {
			out.Skipped = append(out.Skipped, pr.Branch+": GitHub's rate limit is used up; left for the next cycle")
			continue
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.PerPR)
		err := p.propose(cctx, pr, now, &out, &opened, &open, openPerRepo, func(kind string, l templates.PRLine) {
			v := view(cycle.AppKey(pr.Instance, pr.Namespace, pr.App))
			if kind == "opened" {
				v.Opened = append(v.Opened, l)
			} else {
				v.Updated = append(v.Updated, l)
			}
		})
		cancel()
		if err != nil {
			fail(fmt.Errorf("application %s/%s: %w", pr.Namespace, pr.App, err))
			limited = errors.Is(err, github.ErrRateLimited)
		}
	}

	// 4. Digests, one per channel and instance, only when something changed;
	// news of a PR a digest announced goes in that digest's thread.
	keys := make([]string, 0, len(views))
	for k := range views {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	quiet := p.Slack == nil || p.Config.Policy.Quiet(now)
	down := map[string]bool{} // cursors whose queued digest Slack did not take this cycle
	if !quiet {
		// A digest that stopped half-way goes on where it stopped, before
		// anything newer is posted to its channel.
		for cursor, err := range p.flush(ctx, "", now, &out) {
			down[cursor] = true
			fail(err)
		}
	}
	for _, k := range keys {
		v := views[k]
		ch, _, _ := strings.Cut(k, "\x00")
		replies, err := p.threaded(ctx, ch, v)
		if err != nil {
			fail(err)
		}
		if !v.Empty() && !quiet {
			if err := p.digest(ctx, ch, v); err != nil {
				fail(err)
			}
			if cursor := ch + " " + v.Instance; !down[cursor] {
				for _, err := range p.flush(ctx, cursor, now, &out) {
					fail(err)
				}
			}
		}
		for _, ts := range slices.Sorted(maps.Keys(replies)) {
			if quiet {
				break
			}
			msgs := templates.Digest(*replies[ts])
			if _, err := p.Slack.Reply(context.WithoutCancel(ctx), ch, ts, msgs); err != nil {
				fail(err)
				continue
			}
			out.Digests[ch] = append(out.Digests[ch], msgs...)
		}
	}
	return out
}

// adopt finds driftfix's open pull requests on GitHub that the state store
// does not know (a lost or fresh database), by the key marker in their body,
// in the repositories of every listed application and those the store
// remembers. Answers that did not change since the last cycle are 304s.
func (p *Publisher) adopt(ctx context.Context, res *cycle.CycleResult, known []state.PR, now time.Time) ([]state.PR, error) {
	repos := map[string]bool{}
	have := map[string]bool{}
	for _, k := range known {
		repos[k.Repo] = true
		have[fmt.Sprintf("%s#%d", k.Repo, k.Number)] = true
	}
	for _, pr := range res.PRs {
		if r, err := github.ParseRepo(pr.RepoURL); err == nil {
			repos[r.String()] = true
		}
	}
	for _, a := range res.Apps {
		if r, err := github.ParseRepo(a.App.RepoURL); err == nil {
			repos[r.String()] = true
		}
	}
	prefixes := map[string]bool{p.Config.Policy.BranchPrefix + "/": true}
	for _, o := range p.Config.Overrides {
		if o.Policy.BranchPrefix != "" {
			prefixes[o.Policy.BranchPrefix+"/"] = true
		}
	}
	login, err := p.GitHub.Login(ctx)
	if err != nil {
		return nil, err
	}
	var out []state.PR
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(repos)) {
		repo, _ := github.ParseRepo("https://github.com/" + name)
		for prefix := range prefixes {
			prs, err := p.GitHub.OpenPRs(ctx, repo, prefix)
			if errors.Is(err, github.ErrRateLimited) {
				return out, err
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, gpr := range prs {
				if !gpr.Own(repo, login) {
					continue // a fork's, or a person's: never adopted, closed or its branch deleted
				}
				key, app, ok := bodyKey(gpr.Body)
				if !ok || have[fmt.Sprintf("%s#%d", name, gpr.Number)] || !res.Owns(app) {
					continue
				}
				rec := state.PR{Fingerprint: key, App: app, Repo: name, Number: gpr.Number, Branch: gpr.Branch, State: state.PROpen, Updated: now}
				if err := p.Store.SavePR(ctx, rec); err != nil {
					return out, err
				}
				have[fmt.Sprintf("%s#%d", name, gpr.Number)] = true
				out = append(out, rec)
			}
		}
	}
	return out, errors.Join(errs...)
}

// unlisted decides which applications missing from their instance's list
// may have their pull requests closed this cycle: those missing for
// CloseAfterCycles cycles in a row, and none of an instance whose list shrank
// by more than MaxListShrink against its last full list (an RBAC or sharding
// change says nothing about the applications). What waits is said in Skipped.
func (p *Publisher) unlisted(ctx context.Context, res *cycle.CycleResult, known []state.PR, now time.Time, log *slog.Logger, out *Published, fail func(error)) map[string]bool {
	policy := p.Config.Unlisted
	if policy.CloseAfterCycles == 0 {
		policy = config.DefaultUnlisted()
	}
	listed := map[string]bool{}
	perInstance := map[string]int{}
	for _, a := range res.Apps {
		listed[cycle.AppKey(a.Instance, a.App.Namespace, a.App.Name)] = true
		perInstance[a.Instance]++
	}
	shrunk := map[string]bool{}
	for _, inst := range slices.Sorted(maps.Keys(res.URLs)) {
		if slices.Contains(res.FailedInstances, inst) {
			continue
		}
		n := perInstance[inst]
		last, ok, err := p.Store.ListSize(ctx, inst)
		if err != nil {
			fail(err)
			shrunk[inst] = true // unknown: close nothing
			continue
		}
		if ok && float64(n) < float64(last)*(1-policy.MaxListShrink) {
			shrunk[inst] = true
			log.Warn("Argo CD's application list shrank; no pull request is closed as no longer listed this cycle", "instance", inst, "listed", n, "last_full_list", last)
			out.Skipped = append(out.Skipped, fmt.Sprintf("instance %s: Argo CD lists %d applications, down from %d in the last full list (more than %g less); no pull request is closed as no longer listed this cycle", inst, n, last, policy.MaxListShrink))
			continue
		}
		if err := p.Store.SetListSize(ctx, inst, n, now); err != nil {
			fail(err)
		}
	}
	before, err := p.Store.UnlistedApps(ctx)
	if err != nil {
		fail(err)
		return nil
	}
	for app := range before {
		if listed[app] {
			if err := p.Store.Relisted(ctx, app); err != nil {
				fail(err)
			}
		}
	}
	may := map[string]bool{}
	counted := map[string]int{}
	for _, k := range known {
		inst, _, _ := strings.Cut(k.App, "/")
		if k.State != state.PROpen || listed[k.App] || !res.Owns(k.App) || shrunk[inst] {
			continue
		}
		if _, ok := counted[k.App]; !ok {
			n, err := p.Store.Unlisted(ctx, k.App, now)
			if err != nil {
				fail(err)
				continue
			}
			counted[k.App] = n
		}
		if n := counted[k.App]; n >= policy.CloseAfterCycles {
			may[k.App] = true
		} else {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s#%d: its application %s has not been listed by Argo CD for %d cycle(s); closed after %d in a row", k.Repo, k.Number, k.App, n, policy.CloseAfterCycles))
		}
	}
	return may
}

// bodyKey reads the fix key and application from the marker driftfix's
// template ends a PR body with. Only the last marker counts, and only when
// nothing but white space follows it, so a live value quoted earlier in the
// body cannot supply one.
func bodyKey(body string) (key, app string, ok bool) {
	m := lastMarker(cycle.KeyMarkerRE, body)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// lastMarker is the last match of re in body, provided only white space and
// further driftfix markers follow it.
func lastMarker(re *regexp.Regexp, body string) []string {
	all := re.FindAllStringSubmatchIndex(body, -1)
	if len(all) == 0 {
		return nil
	}
	last := all[len(all)-1]
	if rest := strings.TrimSpace(markerRE.ReplaceAllString(body[last[1]:], "")); rest != "" {
		return nil
	}
	out := make([]string, len(last)/2)
	for i := range out {
		out[i] = body[last[2*i]:last[2*i+1]]
	}
	return out
}

// markerRE is any of the markers the template ends a body with.
var markerRE = regexp.MustCompile(`<!-- driftfix:[a-z]+=[^<>]* -->`)

// threaded takes out of v the news of PRs that a digest in channel ch
// announced, grouped by that digest's thread.
func (p *Publisher) threaded(ctx context.Context, ch string, v *templates.DigestView) (map[string]*templates.DigestView, error) {
	out := map[string]*templates.DigestView{}
	var errs []error
	thread := func(key string) *templates.DigestView {
		if key == "" {
			return nil
		}
		ts, err := p.Store.Thread(ctx, key, ch)
		if err != nil {
			errs = append(errs, err)
		}
		if ts == "" {
			return nil
		}
		if out[ts] == nil {
			out[ts] = &templates.DigestView{Instance: v.Instance, ArgoCDURL: v.ArgoCDURL}
		}
		return out[ts]
	}
	split := func(lines []templates.PRLine, to func(*templates.DigestView) *[]templates.PRLine) []templates.PRLine {
		kept := lines[:0]
		for _, l := range lines {
			if r := thread(l.Key); r != nil {
				*to(r) = append(*to(r), l)
				continue
			}
			kept = append(kept, l)
		}
		return kept
	}
	v.Updated = split(v.Updated, func(r *templates.DigestView) *[]templates.PRLine { return &r.Updated })
	v.Merged = split(v.Merged, func(r *templates.DigestView) *[]templates.PRLine { return &r.Merged })
	v.Closed = split(v.Closed, func(r *templates.DigestView) *[]templates.PRLine { return &r.Closed })
	fixed := v.Fixed[:0]
	for _, l := range v.Fixed {
		if r := thread(l.Key); r != nil {
			r.Fixed = append(r.Fixed, l)
			continue
		}
		fixed = append(fixed, l)
	}
	v.Fixed = fixed
	return out, errors.Join(errs...)
}

// digest queues a channel's digest unless it says what the last one (posted
// or still queued) said; flush posts it. Each message is recorded as Slack
// accepts it, so a digest that failed half-way is continued where it
// stopped, never posted again from the start.
func (p *Publisher) digest(ctx context.Context, ch string, v *templates.DigestView) error {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:8])
	cursor := ch + " " + v.Instance
	last, err := p.Store.LastDigest(ctx, cursor)
	if err != nil {
		return err
	}
	if last == digest {
		return nil // nothing new since the last digest
	}
	queued, err := p.Store.Outboxes(ctx)
	if err != nil {
		return err
	}
	for _, o := range queued {
		if o.Cursor == cursor && o.Digest == digest {
			return nil
		}
	}
	ob := state.Outbox{Cursor: cursor, Digest: digest, Channel: ch}
	for _, m := range templates.Digest(*v) {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode the digest for %s: %w", ch, err)
		}
		ob.Messages = append(ob.Messages, string(b))
	}
	for _, l := range v.Opened {
		ob.Opened = append(ob.Opened, l.Key)
	}
	return p.Store.QueueDigest(ctx, ob)
}

// flush posts the queued digests (of one cursor, or all for ""), in order,
// from the first message Slack has not accepted; a cursor whose digest
// fails keeps its later ones queued.
func (p *Publisher) flush(ctx context.Context, cursor string, now time.Time, out *Published) map[string]error {
	queued, err := p.Store.Outboxes(ctx)
	if err != nil {
		return map[string]error{cursor: err}
	}
	errs := map[string]error{}
	for _, o := range queued {
		if errs[o.Cursor] != nil || (cursor != "" && o.Cursor != cursor) {
			continue
		}
		if err := p.post(ctx, o, now, out); err != nil {
			errs[o.Cursor] = err
		}
	}
	return errs
}

func (p *Publisher) post(ctx context.Context, o state.Outbox, now time.Time, out *Published) error {
	for i := o.Posted; i < len(o.Messages); i++ {
		var m templates.Message
		if err := json.Unmarshal([]byte(o.Messages[i]), &m); err != nil {
			return fmt.Errorf("read the queued digest for %s: %w", o.Channel, err)
		}
		ts, err := p.Slack.PostOne(context.WithoutCancel(ctx), o.Channel, o.Thread, m)
		if err != nil {
			return fmt.Errorf("slack: post message %d of %d to %s (the rest follows next cycle): %w", i+1, len(o.Messages), o.Channel, err)
		}
		if o.Thread == "" {
			o.Thread = ts
		}
		if err := p.Store.DigestPosted(ctx, o.ID, o.Thread, i+1); err != nil {
			return err
		}
		out.Digests[o.Channel] = append(out.Digests[o.Channel], m)
	}
	for _, key := range o.Opened {
		if err := p.Store.SetThread(ctx, key, o.Channel, o.Thread); err != nil {
			return err
		}
	}
	return p.Store.DigestDone(ctx, o, now)
}

// heldComment tells a pull request's readers, once per fix, why its branch
// was not updated to the changed fix: people pushed to it, or the file
// changed on the base branch since the synced revision.
func (p *Publisher) heldComment(ctx context.Context, repo github.Repo, number int, fingerprint string, why error) error {
	marker := "<!-- driftfix:held=" + fingerprint + " -->"
	comments, err := p.GitHub.Comments(ctx, repo, number)
	if err != nil {
		return err
	}
	for _, c := range comments {
		if strings.Contains(c, marker) {
			return nil
		}
	}
	var msg string
	if errors.Is(why, github.ErrNotOurs) {
		msg = "The fix changed, but this branch has commits from people, so driftfix does not overwrite it: update the branch by hand."
	} else {
		msg = "The fix changed, but a file it writes changed on the base branch since the revision the fix was computed from, so driftfix does not update this branch (that would revert the change). It is planned again once Argo CD syncs the new revision."
	}
	return p.GitHub.Comment(ctx, repo, number, msg+"\n\n"+marker)
}

// channel is where an application's digest lines go.
func (p *Publisher) channel(a cycle.AppState, ns, name string) string {
	if ch := p.Config.For(a.App.Project, name, ns).SlackChannel; ch != "" {
		return ch
	}
	return p.Config.Slack.Channel
}

// reconcile looks at one pull request driftfix opened: merged, closed by a
// person (never proposed again), asked to stop by label or comment, or no
// longer needed (closed with a comment). It reports whether the PR is done.
func (p *Publisher) reconcile(ctx context.Context, repo github.Repo, k state.PR, a cycle.AppState, listed, closeUnlisted, notOurs bool,
	proposed map[string]cycle.ProposedPR, now time.Time, out *Published, report func(string, templates.PRLine), line func(title, url string) templates.PRLine) (bool, error) {
	ref := fmt.Sprintf("%s#%d", k.Repo, k.Number)
	gpr, err := p.GitHub.GetPR(ctx, repo, k.Number)
	if err != nil {
		return false, err
	}
	save := func(st string) error {
		k.State, k.Updated = st, now
		return p.Store.SavePR(ctx, k)
	}
	login, err := p.GitHub.Login(ctx)
	if err != nil {
		return false, err
	}
	if !gpr.Own(repo, login) {
		out.Skipped = append(out.Skipped, fmt.Sprintf("%s: opened by %s from %s, not by driftfix's account %s from %s; forgotten and left alone", ref, gpr.Author, gpr.HeadRepo, login, repo))
		return true, save(state.PRClosed)
	}
	switch {
	case gpr.Merged:
		report("merged", line(gpr.Title, gpr.URL))
		out.Merged = append(out.Merged, ref)
		return true, save(state.PRMerged)
	case gpr.State == "closed":
		if err := p.Store.Reject(ctx, k.Fingerprint, k.App, "pull request "+ref+" was closed unmerged", now); err != nil {
			return false, err
		}
		report("closed", line(gpr.Title+" (closed by a person; not proposed again)", gpr.URL))
		out.Rejected = append(out.Rejected, ref)
		return true, save(state.PRClosed)
	}
	stop := slices.Contains(gpr.Labels, p.IgnoreLabel)
	if !stop {
		comments, err := p.GitHub.Comments(ctx, repo, k.Number)
		if err != nil {
			return false, err
		}
		for _, c := range comments {
			stop = stop || ignoreComment.MatchString(c)
		}
	}
	if stop {
		if err := p.Store.Reject(ctx, k.Fingerprint, k.App, "asked to stop on "+ref, now); err != nil {
			return false, err
		}
		msg := "driftfix will not propose this fix again, as asked. The drift stays visible in the digest.\n\n" + closedMarker
		if err := p.GitHub.ClosePR(ctx, repo, k.Number, k.Branch, msg); err != nil {
			return false, err
		}
		report("closed", line(gpr.Title+" (asked to stop)", gpr.URL))
		out.Rejected = append(out.Rejected, ref)
		return true, save(state.PRClosed)
	}
	if notOurs || (listed && a.Failed) {
		return false, nil // nothing known about its drift this cycle
	}
	var why string
	switch {
	case !listed && !closeUnlisted:
		return false, nil // not missing long enough, or the whole list shrank
	case !listed:
		why = "The application is no longer listed by Argo CD."
	case !a.Stuck:
		why = fmt.Sprintf("The application is %s without this change.", a.App.SyncStatus)
	case proposed[k.Fingerprint].Key == "":
		why = "The differences this pull request fixes are gone."
	default:
		return false, nil
	}
	if err := p.GitHub.ClosePR(ctx, repo, k.Number, k.Branch, "Closing: "+why+" driftfix opens a new pull request if the drift comes back.\n\n"+closedMarker); err != nil {
		return false, err
	}
	report("closed", line(gpr.Title+" (drift gone)", gpr.URL))
	out.Closed = append(out.Closed, ref)
	return true, save(state.PRClosed)
}

// propose publishes one proposal: skipped when a person turned it down,
// when the policy says dry-run or quiet hours, or past a PR limit; an
// existing PR is updated when the fix changed; otherwise the branch is
// pushed and the PR opened. A PR that cannot be opened takes its new branch
// with it.
func (p *Publisher) propose(ctx context.Context, pr cycle.ProposedPR, now time.Time, out *Published, opened, open *int, perRepo map[string]int, report func(string, templates.PRLine)) error {
	skip := func(why string) { out.Skipped = append(out.Skipped, pr.Branch+": "+why) }
	pol := pr.Policy
	if why, ok, err := p.Store.Rejected(ctx, pr.Key); err != nil {
		return err
	} else if ok {
		skip("turned down before (" + why + ")")
		return nil
	}
	if p.Config.DryRun || (pol.DryRun != nil && *pol.DryRun) {
		skip("dry run by policy")
		return nil
	}
	if pol.Quiet(now) {
		skip("quiet hours")
		return nil
	}
	if p.GitHub == nil {
		skip("no GitHub credentials configured")
		return nil
	}
	repo, err := github.ParseRepo(pr.RepoURL)
	if err != nil {
		return err
	}
	existing, err := p.GitHub.FindPR(ctx, repo, pr.Branch)
	if err != nil {
		return err
	}
	base := pr.Base
	if base == "" || base == "HEAD" {
		if base, err = p.GitHub.DefaultBranch(ctx, repo); err != nil {
			return err
		}
	}
	files := map[string]github.Change{}
	for _, e := range pr.Plan.Edits {
		files[e.File] = github.Change{Synced: e.Before, Content: e.After}
	}
	message := pr.Title + "\n\nPlanned and verified by driftfix for " + pr.Namespace + "/" + pr.App + ".\n\ndriftfix-fix: " + pr.Key
	rec := state.PR{Fingerprint: pr.Key, App: cycle.AppKey(pr.Instance, pr.Namespace, pr.App), Repo: repo.String(), Branch: pr.Branch, State: state.PROpen, Updated: now}
	if existing != nil {
		login, err := p.GitHub.Login(ctx)
		if err != nil {
			return err
		}
		if !existing.Own(repo, login) {
			skip(fmt.Sprintf("%s#%d from this branch was opened by %s, not by driftfix's account %s; left alone", repo, existing.Number, existing.Author, login))
			return nil
		}
	}
	if existing != nil && existing.Merged {
		skip(fmt.Sprintf("merged in %s#%d; waiting for Argo CD to sync it", repo, existing.Number))
		rec.Number, rec.State = existing.Number, state.PRMerged
		if old, ok, _ := p.Store.PRFor(ctx, pr.Key); ok && old.State == state.PRFixed {
			return nil
		}
		return p.Store.SavePR(ctx, rec)
	}
	if existing != nil && existing.State == "closed" {
		comments, err := p.GitHub.Comments(ctx, repo, existing.Number)
		if err != nil {
			return err
		}
		if len(comments) == 0 || !strings.Contains(comments[len(comments)-1], closedMarker) {
			ref := fmt.Sprintf("%s#%d", repo, existing.Number)
			if err := p.Store.Reject(ctx, pr.Key, rec.App, "pull request "+ref+" was closed unmerged", now); err != nil {
				return err
			}
			skip("a person closed " + ref + " unmerged; not proposed again")
			return nil
		}
		existing = nil // driftfix closed it when the drift went away; the drift is back
	}
	if existing != nil {
		rec.Number = existing.Number
		unchanged := existing.Title == pr.Title
		if m := lastMarker(bodyFingerprint, existing.Body); m == nil || m[1] != pr.Fingerprint {
			unchanged = false
		}
		if _, _, err := p.GitHub.Push(ctx, repo, base, pr.Branch, message, files); errors.Is(err, github.ErrNotOurs) || errors.Is(err, github.ErrFileChanged) {
			ref := fmt.Sprintf("%s#%d", repo, existing.Number)
			if !unchanged {
				if cerr := p.heldComment(ctx, repo, existing.Number, pr.Fingerprint, err); cerr != nil {
					return cerr
				}
			}
			skip(fmt.Sprintf("%s not updated: %v", ref, err))
			return p.Store.SavePR(ctx, rec)
		} else if err != nil {
			return err
		}
		if unchanged {
			out.Unchanged = append(out.Unchanged, fmt.Sprintf("%s#%d", repo, existing.Number))
			return p.Store.SavePR(ctx, rec)
		}
		if err := p.GitHub.EditPR(ctx, repo, existing.Number, pr.Title, pr.Body); err != nil {
			return err
		}
		out.Updated = append(out.Updated, fmt.Sprintf("%s#%d", repo, existing.Number))
		report("updated", templates.PRLine{App: pr.App, Namespace: pr.Namespace, Instance: pr.Instance, Title: pr.Title, URL: existing.URL, Key: pr.Key})
		return p.Store.SavePR(ctx, rec)
	}
	switch {
	case pol.PRsPerCycle > 0 && *opened >= pol.PRsPerCycle:
		skip(fmt.Sprintf("the limit of %d new pull requests per cycle is reached", pol.PRsPerCycle))
		return nil
	case pol.OpenPRs > 0 && *open >= pol.OpenPRs:
		skip(fmt.Sprintf("the limit of %d open pull requests is reached", pol.OpenPRs))
		return nil
	case pol.PRsPerRepo > 0 && perRepo[repo.String()] >= pol.PRsPerRepo:
		skip(fmt.Sprintf("the limit of %d open pull requests in %s is reached", pol.PRsPerRepo, repo))
		return nil
	}
	_, created, err := p.GitHub.Push(ctx, repo, base, pr.Branch, message, files)
	if errors.Is(err, github.ErrRace) {
		skip("another driftfix is publishing this fix right now")
		return nil
	}
	if errors.Is(err, github.ErrFileChanged) {
		skip(fmt.Sprintf("not proposed: %v; writing the fix would revert that change (it is planned again once Argo CD syncs it)", err))
		return nil
	}
	if errors.Is(err, github.ErrNotOurs) {
		skip(fmt.Sprintf("not proposed: %v; driftfix does not overwrite it", err))
		return nil
	}
	if errors.Is(err, github.ErrNoBase) {
		skip(fmt.Sprintf("targetRevision %q is not a branch of %s; driftfix proposes fixes to branches only", base, repo))
		return nil
	}
	if err != nil {
		return err
	}
	draft := pol.Draft != nil && *pol.Draft
	gpr, err := p.GitHub.OpenPR(ctx, repo, github.NewPR{Branch: pr.Branch, Base: base, Title: pr.Title, Body: pr.Body, Draft: draft,
		Labels: pol.Labels, Reviewers: pol.Reviewers, Assignees: pol.Assignees})
	if errors.Is(err, github.ErrRace) {
		skip("another driftfix opened this fix's pull request first")
		return nil
	}
	if err != nil {
		if created {
			if derr := p.GitHub.DeleteBranch(ctx, repo, pr.Branch); derr != nil {
				err = errors.Join(err, derr)
			}
		}
		return err
	}
	*opened++
	*open++
	perRepo[repo.String()]++
	rec.Number = gpr.Number
	out.Opened = append(out.Opened, fmt.Sprintf("%s#%d", repo, gpr.Number))
	report("opened", templates.PRLine{App: pr.App, Namespace: pr.Namespace, Instance: pr.Instance, Title: pr.Title, URL: gpr.URL, Key: pr.Key})
	return p.Store.SavePR(ctx, rec)
}
