package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/config"
	"github.com/driftfix/driftfix/bot/plan"
	"github.com/driftfix/driftfix/bot/state"
	"github.com/driftfix/driftfix/templates"
)

// digestStore is what the digests remember: when each application was
// first seen stuck, the digests queued and how far each was sent, and
// the thread each fix's news goes in.
type digestStore interface {
	// FirstSeen is when an application was first seen stuck (now, the first time).
	FirstSeen(ctx context.Context, app string, now time.Time) (time.Time, error)
	// Cleared forgets that an application was stuck.
	Cleared(ctx context.Context, app string) error
	// Thread is the thread of the digest that announced a fix in a channel.
	Thread(ctx context.Context, fingerprint, channel string) (string, error)
	// SetThread remembers the thread that announced a fix.
	SetThread(ctx context.Context, fingerprint, channel, ts string) error
	// LastDigest is the fingerprint of the digest last posted to a cursor.
	LastDigest(ctx context.Context, channel string) (string, error)
	// Outboxes are the digests queued and not sent whole, oldest first.
	Outboxes(ctx context.Context) ([]state.Outbox, error)
	// QueueDigest queues a digest.
	QueueDigest(ctx context.Context, o state.Outbox) error
	// DigestPosted records how many of a queued digest's messages were sent, and its thread.
	DigestPosted(ctx context.Context, id int64, thread string, posted int) error
	// DigestDone drops a digest sent whole and remembers it as its cursor's last.
	DigestDone(ctx context.Context, o state.Outbox, now time.Time) error
	// DropDigest drops a queued digest that is not to be sent.
	DropDigest(ctx context.Context, id int64) error
}

// slackChannel reports whether the policy in force names channel ch
// (slack.channel, or a policy's or an override's slackChannel): the only
// channels driftfix posts to, checked as each message is sent, whatever a
// stored row says.
func slackChannel(cfg *config.Config, ch string) bool {
	if ch == "" {
		return false
	}
	if ch == cfg.Slack.Channel || ch == cfg.Policy.SlackChannel {
		return true
	}
	for _, o := range cfg.Overrides {
		if ch == o.Policy.SlackChannel {
			return true
		}
	}
	return false
}

// digests gathers a cycle's digest lines, one view per channel and instance,
// and posts them through the notifier.
type digests struct {
	*run
	views map[string]*templates.DigestView // by channel "\x00" instance
}

// forApp is the view an application's lines go in (a throwaway one when
// its digest goes nowhere).
func (d *digests) forApp(appKey string) *templates.DigestView {
	id := plan.ParseAppKey(appKey)
	ch := d.channel(d.apps[appKey], id)
	if ch == "" {
		return &templates.DigestView{}
	}
	return d.forChannel(ch, id.Instance)
}

func (d *digests) forChannel(ch, instance string) *templates.DigestView {
	k := ch + "\x00" + instance
	if d.views[k] == nil {
		d.views[k] = &templates.DigestView{Instance: instance, ArgoCDURL: d.res.URLs[instance], Buttons: d.buttons()}
	}
	return d.views[k]
}

// channel is where an application's digest lines go.
func (d *digests) channel(a plan.AppState, id plan.AppID) string {
	if ch := d.Config.For(a.App.Project, id.Name, id.Namespace).SlackChannel; ch != "" {
		return ch
	}
	return d.Config.Slack.Channel
}

// prLine reports news of a pull request in its application's digest.
func (d *digests) prLine(appKey, kind string, l templates.PRLine) {
	v := d.forApp(appKey)
	switch kind {
	case "opened":
		v.Opened = append(v.Opened, l)
	case "updated":
		v.Updated = append(v.Updated, l)
	case "merged":
		v.Merged = append(v.Merged, l)
	default:
		v.Closed = append(v.Closed, l)
	}
}

// stuckNews records first-seen times and puts the newly stuck applications,
// the findings left for people, the fleet lines and the applications Argo CD
// cannot compare in the digests.
func (r *run) stuckNews() {
	newStuck := map[string]bool{}
	for key, a := range r.apps {
		if a.App.CannotCompare {
			continue // nothing is known of its drift: its first-seen time stays
		}
		if !a.Stuck {
			if a.Failed {
				continue // a fight's Synced turn (fights.go): it is not fixed either
			}
			if err := r.Store.Cleared(r.ctx, key); err != nil {
				r.fail(err)
			}
			continue
		}
		first := a.FirstSeen // recorded while the cycle planned it
		if first.IsZero() {
			var err error
			if first, err = r.Store.FirstSeen(r.ctx, key, r.now); err != nil {
				r.fail(err)
				continue
			}
		}
		newStuck[key] = first.Equal(r.now)
	}
	for _, l := range r.res.Digest.NewStuck {
		if k := plan.AppKey(l.Instance, l.Namespace, l.App); newStuck[k] {
			v := r.digests.forApp(k)
			v.NewStuck = append(v.NewStuck, l)
		}
	}
	for _, l := range r.res.Digest.ForPeople {
		v := r.digests.forApp(plan.AppKey(l.Instance, l.Namespace, l.App))
		v.ForPeople = append(v.ForPeople, l)
	}
	if ch := r.Config.Slack.Channel; ch != "" {
		for _, l := range r.res.Digest.Fleet { // platform lines go to the platform's channel
			v := r.digests.forChannel(ch, l.Instance)
			v.Fleet = append(v.Fleet, l)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(r.apps)) {
		if a := r.apps[key]; a.App.CannotCompare {
			v := r.digests.forApp(key)
			v.CannotCompare = append(v.CannotCompare, templates.AppLine{App: a.App.Name, Namespace: a.App.Namespace, Instance: a.Instance, Note: a.App.ComparisonError})
		}
	}
}

// sendDigests posts one digest per channel and instance, only when
// something changed; news of a PR a digest announced goes in that digest's
// thread. A digest that stopped half-way goes on where it stopped, before
// anything newer is posted to its channel.
func (r *run) sendDigests() {
	r.dropSnoozed()
	if r.Notifier != nil && r.Config.Policy.Quiet(r.now) {
		r.holdDigests() // sent, merged into one, when the quiet hours end
		return
	}
	quiet := r.Notifier == nil
	if !quiet {
		r.releaseHeld()
		defer r.forgetReleased()
	}
	down := map[string]bool{} // cursors whose queued digest was not taken this cycle
	if !quiet {
		for cursor, err := range r.flush("") {
			down[cursor] = true
			r.fail(err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.digests.views)) {
		v := r.digests.views[k]
		ch, _, _ := strings.Cut(k, "\x00")
		replies, err := r.threaded(ch, v)
		if err != nil {
			r.fail(err)
		}
		if quiet {
			continue
		}
		if !v.Empty() {
			if err := r.queue(ch, v); err != nil {
				r.fail(err)
			}
			if cursor := ch + " " + v.Instance; !down[cursor] {
				for _, err := range r.flush(cursor) {
					r.fail(err)
				}
			}
		}
		r.reply(ch, replies)
	}
}

// reply posts the news for each digest thread, in thread order.
func (r *run) reply(ch string, replies map[string]*templates.DigestView) {
	if len(replies) > 0 && !slackChannel(r.Config, ch) {
		r.log.Warn("dropped news for a Slack channel the policy does not name", "channel", ch, "threads", len(replies))
		return
	}
	for _, ts := range slices.Sorted(maps.Keys(replies)) {
		msgs, err := r.Notifier.Render(*replies[ts])
		if err != nil {
			r.fail(fmt.Errorf("lay out the news for %s: %w", ch, err))
			continue
		}
		for i, m := range msgs {
			if _, err := r.Notifier.Send(context.WithoutCancel(r.ctx), ch, ts, m); err != nil {
				r.fail(fmt.Errorf("post message %d of %d to %s: %w", i+1, len(msgs), ch, err))
				break
			}
			r.out.Digests[ch] = append(r.out.Digests[ch], m)
		}
	}
}

// threaded takes out of v the news of PRs that a digest in channel ch
// announced, grouped by that digest's thread.
func (r *run) threaded(ch string, v *templates.DigestView) (map[string]*templates.DigestView, error) {
	out := map[string]*templates.DigestView{}
	var errs []error
	thread := func(key string) *templates.DigestView {
		if key == "" {
			return nil
		}
		ts, err := r.Store.Thread(r.ctx, key, ch)
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
			if t := thread(l.Key); t != nil {
				*to(t) = append(*to(t), l)
				continue
			}
			kept = append(kept, l)
		}
		return kept
	}
	v.Updated = split(v.Updated, func(t *templates.DigestView) *[]templates.PRLine { return &t.Updated })
	v.Merged = split(v.Merged, func(t *templates.DigestView) *[]templates.PRLine { return &t.Merged })
	v.Closed = split(v.Closed, func(t *templates.DigestView) *[]templates.PRLine { return &t.Closed })
	fixed := v.Fixed[:0]
	for _, l := range v.Fixed {
		if t := thread(l.Key); t != nil {
			t.Fixed = append(t.Fixed, l)
			continue
		}
		fixed = append(fixed, l)
	}
	v.Fixed = fixed
	return out, errors.Join(errs...)
}

// queue queues a channel's digest unless it says what the last one (posted
// or still queued) said; flush posts it. Each message is recorded as the
// notifier accepts it, so a digest that failed half-way is continued where
// it stopped, never posted again from the start.
func (r *run) queue(ch string, v *templates.DigestView) error {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:8])
	cursor := ch + " " + v.Instance
	last, err := r.Store.LastDigest(r.ctx, cursor)
	if err != nil || last == digest {
		return err // or nothing new since the last digest
	}
	queued, err := r.Store.Outboxes(r.ctx)
	if err != nil {
		return err
	}
	for _, o := range queued {
		if o.Cursor == cursor && o.Digest == digest {
			return nil
		}
	}
	ob := state.Outbox{Cursor: cursor, Digest: digest, Channel: ch}
	if ob.Messages, err = r.Notifier.Render(*v); err != nil {
		return fmt.Errorf("lay out the digest for %s: %w", ch, err)
	}
	for _, l := range v.Opened {
		ob.Opened = append(ob.Opened, l.Key)
	}
	return r.Store.QueueDigest(r.ctx, ob)
}

// flush posts the queued digests (of one cursor, or all for ""), in order,
// from the first message the notifier has not accepted; a cursor whose
// digest fails keeps its later ones queued.
func (r *run) flush(cursor string) map[string]error {
	queued, err := r.Store.Outboxes(r.ctx)
	if err != nil {
		return map[string]error{cursor: err}
	}
	errs := map[string]error{}
	for _, o := range queued {
		if errs[o.Cursor] != nil || (cursor != "" && o.Cursor != cursor) {
			continue
		}
		if err := r.post(o); err != nil {
			errs[o.Cursor] = err
		}
	}
	return errs
}

// post sends a queued digest from its first unposted message. A digest
// queued for a channel the policy in force does not name is dropped, not
// sent.
func (r *run) post(o state.Outbox) error {
	if !slackChannel(r.Config, o.Channel) {
		r.log.Warn("dropped a queued digest for a Slack channel the policy does not name", "channel", o.Channel, "cursor", o.Cursor, "id", o.ID)
		return r.Store.DropDigest(r.ctx, o.ID)
	}
	for i := o.Posted; i < len(o.Messages); i++ {
		m := o.Messages[i]
		ts, err := r.Notifier.Send(context.WithoutCancel(r.ctx), o.Channel, o.Thread, m)
		if err != nil {
			return fmt.Errorf("post message %d of %d to %s (the rest follows next cycle): %w", i+1, len(o.Messages), o.Channel, err)
		}
		if o.Thread == "" {
			o.Thread = ts
		}
		if err := r.Store.DigestPosted(r.ctx, o.ID, o.Thread, i+1); err != nil {
			return err
		}
		r.out.Digests[o.Channel] = append(r.out.Digests[o.Channel], m)
	}
	for _, key := range o.Opened {
		if err := r.Store.SetThread(r.ctx, key, o.Channel, o.Thread); err != nil {
			return err
		}
	}
	return r.Store.DigestDone(r.ctx, o, r.now)
}
