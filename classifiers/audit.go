package classifiers

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/driftfix/driftfix/bot/drift"
)

// The audit trail as evidence.
//
// The hook: a snapshot's cluster context may hold one audit.k8s.io/v1
// EventList (bot/audit's Store.Context makes it from the API server's audit
// webhook or log; a snapshot file may carry one as any cluster object,
// with a metadata.name). A field's last managedFields entry (manager,
// operation, subresource, time) is matched to the event of the request
// that wrote it: same object, same field manager (the request's
// fieldManager, else its user agent's first word, as the API server
// derives it), same subresource, a verb the operation allows, and a time
// within auditTolerance of the request. An entry the API server records
// without a time (writes through the scale subresource) is matched to the
// newest such request the audit context holds. The authenticated identity of that
// request then decides, where the manager name alone cannot:
//
//   - a person's identity (neither a service account nor a system:
//     component) makes it a manual change, whatever the manager name
//     (ManualChange asks auditManualChange first), and a manager name of
//     Argo CD or of a catalogued controller under it is reported as a
//     name the identity contradicts;
//   - a service account's or a Kubernetes component's identity makes an
//     unplaced writer a controller (ControllerWrite asks
//     auditControllerWrite), without granting it the field.
//
// The evidence is kind audit, its Manager the manager the request wrote
// under and its Detail the identity (with whom it impersonated). Without
// an EventList, or without one matching event, nothing changes.

// auditTolerance is how far a managedFields time (whole seconds) may lie
// from the request's own times and still be its write.
const auditTolerance = 2 * time.Second

// identityKind is what an authenticated user name shows.
type identityKind int

const (
	// idPerson: a user of the cluster's authenticators (a client
	// certificate, OIDC, a token file): a person, or a client run with a
	// person's credentials.
	idPerson identityKind = iota
	// idServiceAccount: a workload's service account token.
	idServiceAccount
	// idComponent: one of Kubernetes' own identities (system:kube-controller-manager,
	// system:kube-scheduler, system:node:NAME, system:apiserver).
	idComponent
)

// kindOfIdentity places an authenticated user name.
func kindOfIdentity(user string) identityKind {
	switch {
	case strings.HasPrefix(user, "system:serviceaccount:"):
		return idServiceAccount
	case user == "system:anonymous" || user == "":
		return idPerson
	case strings.HasPrefix(user, "system:"):
		return idComponent
	}
	return idPerson
}

// auditWrite is the audit event of the request that made a path's last
// managedFields entry.
type auditWrite struct {
	owner   drift.Owner
	ev      auditv1.Event
	manager string // the manager the request wrote under
	program string // the user agent's first word
	// timeless says the managedFields entry has no time: the request is
	// the newest under its name the audit log holds.
	timeless bool
}

// identity renders who made the request: "oidc:alice", or
// "oidc:alice as system:serviceaccount:shop:deployer".
func (w *auditWrite) identity() string {
	s := w.ev.User.Username
	if s == "" {
		s = "an unnamed user"
	}
	if w.ev.ImpersonatedUser != nil && w.ev.ImpersonatedUser.Username != "" {
		s += " as " + w.ev.ImpersonatedUser.Username
	}
	return s
}

// kind places the authenticated user, who sent the request (an
// impersonator acts through the identity it names, but is the one who
// acted).
func (w *auditWrite) kind() identityKind { return kindOfIdentity(w.ev.User.Username) }

// auditEvents returns the snapshot's audit events about the case's
// resource, decoded; nil without an EventList.
func (c *Case) auditEvents() []auditv1.Event {
	var lists []drift.Object
	for _, o := range c.Snapshot.Cluster {
		if drift.Str(o, "kind") == "EventList" && drift.Str(o, "apiVersion") == "audit.k8s.io/v1" {
			lists = append(lists, o)
		}
	}
	if len(lists) == 0 {
		return nil
	}
	ref := c.Diff.Resource
	var plural string
	if crd := c.CRD(ref); crd != nil {
		plural = drift.Str(crd, "spec", "names", "plural")
	} else {
		gvr, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: ref.Group, Version: "v1", Kind: ref.Kind})
		plural = gvr.Resource
	}
	var out []auditv1.Event
	for _, o := range lists {
		for _, it := range drift.List(o, "items") {
			if drift.Str(it, "objectRef", "name") != ref.Name || drift.Str(it, "objectRef", "namespace") != ref.Namespace ||
				drift.Str(it, "objectRef", "apiGroup") != ref.Group || drift.Str(it, "objectRef", "resource") != plural {
				continue
			}
			raw, err := json.Marshal(it)
			if err != nil {
				continue
			}
			var ev auditv1.Event
			if json.Unmarshal(raw, &ev) == nil {
				out = append(out, ev)
			}
		}
	}
	return out
}

// auditedWrite finds the event of the request that made the case's path's
// last managedFields entry. ok is false without an audit context, without
// a matching event, or when events of more than one identity match.
func (c *Case) auditedWrite() (auditWrite, bool) {
	d := c.Diff
	if d == nil || len(d.Owners) == 0 {
		return auditWrite{}, false
	}
	events := c.auditEvents()
	if len(events) == 0 {
		return auditWrite{}, false
	}
	// The last writer: the owner with the latest time. An entry the API
	// server records without a time (a write through the scale
	// subresource has none) is the last writer when no owner has a time.
	last, at := d.Owners[len(d.Owners)-1], time.Time{}
	for _, o := range d.Owners {
		t, err := time.Parse(time.RFC3339, o.Time)
		if err == nil && !t.Before(at) {
			last, at = o, t
		}
	}
	type cand struct {
		w    auditWrite
		dist time.Duration
	}
	var cands []cand
	for _, ev := range events {
		w := auditWrite{owner: last, ev: ev, program: drift.ManagerOfUserAgent(ev.UserAgent)}
		w.manager = requestManager(ev.RequestURI)
		if w.manager == "" {
			w.manager = w.program
		}
		if w.manager != last.Manager || (ev.ObjectRef != nil && ev.ObjectRef.Subresource != last.Subresource) || !operationAllows(last.Operation, ev.Verb) {
			continue
		}
		from, to := ev.RequestReceivedTimestamp.Time.Truncate(time.Second), ev.StageTimestamp.Time
		if to.Before(from) {
			to = from
		}
		if at.IsZero() {
			// No time to match: the requests under the entry's name,
			// the newest first (dist orders them backwards).
			cands = append(cands, cand{w, time.Duration(-to.UnixNano())})
			continue
		}
		var dist time.Duration
		switch {
		case at.Before(from):
			dist = from.Sub(at)
		case at.After(to):
			dist = at.Sub(to)
		}
		if dist <= auditTolerance {
			cands = append(cands, cand{w, dist})
		}
	}
	if len(cands) == 0 {
		return auditWrite{}, false
	}
	if at.IsZero() {
		// The newest request under the name made the entry as it is; one
		// of another identity within the tolerance of it leaves no proof.
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].dist < cands[j].dist })
		newest := cands[0].w
		newest.timeless = true
		for _, x := range cands[1:] {
			if newest.ev.StageTimestamp.Sub(x.w.ev.StageTimestamp.Time) > auditTolerance {
				break
			}
			if x.w.identity() != newest.identity() {
				return auditWrite{}, false
			}
		}
		return newest, true
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].dist < cands[j].dist })
	for _, x := range cands[1:] {
		if x.w.identity() != cands[0].w.identity() {
			return auditWrite{}, false // two identities wrote under that name then: no proof either way
		}
	}
	return cands[0].w, true
}

// operationAllows reports whether a request's verb can make a
// managedFields entry of the operation: Apply only by a patch (server-side
// apply), Update by a create, update or patch.
func operationAllows(op, verb string) bool {
	switch op {
	case "Apply":
		return verb == "patch"
	case "Update", "":
		return verb == "create" || verb == "update" || verb == "patch"
	}
	return false
}

// requestManager returns the fieldManager a request URI names.
func requestManager(uri string) string {
	_, q, ok := strings.Cut(uri, "?")
	if !ok {
		return ""
	}
	for _, kv := range strings.Split(q, "&") {
		if v, ok := strings.CutPrefix(kv, "fieldManager="); ok {
			if s, err := unescapeQuery(v); err == nil {
				return s
			}
		}
	}
	return ""
}

// auditLine is the evidence that names the request.
func (w *auditWrite) auditLine(d *drift.Difference) drift.Evidence {
	ev := w.ev
	groups := ""
	if len(ev.User.Groups) > 0 {
		groups = " (groups " + strings.Join(ev.User.Groups, ", ") + ")"
	}
	sub := ""
	if ev.ObjectRef != nil && ev.ObjectRef.Subresource != "" {
		sub = " through its " + ev.ObjectRef.Subresource + " subresource"
	}
	text := fmt.Sprintf("the API server's audit log names who wrote %s: %s%s, a %s, sent %s%s at %s with user agent %q under field manager %s",
		d.Path, w.identity(), groups, identityNoun(w.kind()), ev.Verb, sub, ev.StageTimestamp.Time.UTC().Format(time.RFC3339), ev.UserAgent, w.manager)
	if w.timeless {
		text += "; managedFields records no time for this entry, so this is the newest request under that name the audit log holds"
	}
	return drift.Evidence{Kind: drift.EvidenceAudit, Manager: w.manager, Detail: w.identity(), Text: text}
}

func identityNoun(k identityKind) string {
	switch k {
	case idServiceAccount:
		return "service account"
	case idComponent:
		return "Kubernetes component"
	}
	return "user's identity (a person, or a client run with a person's credentials)"
}

// claimed says whose name a manager is, when it names Argo CD or a
// catalogued controller; "" otherwise.
func (c *Case) claimed(manager string) string {
	if drift.ArgoCDManagers[manager] {
		return "Argo CD's application controller"
	}
	if w := lookupWriter(c.Sensitivity.Writers, manager); w != nil && w.Is == drift.WriterController {
		if w.Component != "" {
			return w.Component
		}
		return "a controller"
	}
	return ""
}

// auditManualChange is ManualChange's verdict when the audit log shows a
// person's identity made the path's last write: a manual change whatever
// the manager name says, and a controller's or Argo CD's name under it
// reported as contradicted. ok is false otherwise, and where the client
// names itself consistently as the controller its manager is (a controller
// run with a user's credentials, as on clusters without service accounts
// for their components): then the identity decides nothing.
func (c *Case) auditManualChange() (Verdict, bool) {
	w, ok := c.auditedWrite()
	if !ok || w.kind() != idPerson {
		return Verdict{}, false
	}
	d := c.Diff
	whose := c.claimed(w.manager)
	if whose != "" && (w.program == w.manager || drift.ArgoCDManagers[w.manager] && drift.ArgoCDManagers[w.program]) {
		return Verdict{}, false // the client names itself as that controller: its credentials are a user's
	}
	owned := fmt.Sprintf("%s is owned by %s: the name the request wrote under", d.Path, w.owner)
	if cw := lookupWriter(c.Sensitivity.Writers, w.manager); cw != nil && cw.Is == drift.WriterPerson && cw.How != "" {
		owned = fmt.Sprintf("%s is owned by %s: changed by hand with %s", d.Path, w.owner, cw.How)
	}
	ev := []drift.Evidence{{Kind: drift.EvidenceManager, Manager: w.owner.Manager, Text: owned}, w.auditLine(d)}
	if whose != "" {
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceAudit, Manager: w.manager, Detail: w.identity(),
			Text: fmt.Sprintf("the field manager %s is the name of %s, but the request came from %s with %s: a person wrote under that name, which the authenticated identity contradicts", w.manager, whose, w.identity(), w.program)})
	}
	switch {
	case d.InGit && d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the live object has %s", c.show(d.Git), c.showLive())))
	case d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git does not declare it; the live object has %s", c.showLive())))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: manualReasons[c.revertedWhen()]}, true
}

// auditControllerWrite is ControllerWrite's verdict for a writer nothing
// else places, when the audit log shows a service account or a Kubernetes
// component made the path's last write under its name with a client that
// is no person's tool: a controller wrote it. The identity proves who
// wrote, not a right to the field, so no fix hands it over.
func (c *Case) auditControllerWrite(o drift.Owner) (Verdict, bool) {
	w, ok := c.auditedWrite()
	if !ok || w.kind() == idPerson || w.manager != o.Manager || c.isPerson(w.program) {
		return Verdict{}, false
	}
	d := c.Diff
	ev := []drift.Evidence{
		{Kind: drift.EvidenceManager, Manager: o.Manager, Text: fmt.Sprintf("%s is owned by %s, not by Argo CD", d.Path, o)},
		w.auditLine(d),
	}
	switch {
	case d.InGit && d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s; the controller wrote %s", c.show(d.Git), c.showLive())))
	case d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git does not declare %s; the controller added %s", d.Path, c.showLive())))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: fmt.Sprintf("the audit log proves %s wrote it, which is no right to the field: if it does own it, name it in the policy's writers (manager: %s, is: controller, owns: [%s]) and driftfix proposes the fix", w.identity(), o.Manager, d.Path)}, true
}

// unescapeQuery decodes a query value (percent escapes, + for a space);
// the classifiers import no net package.
func unescapeQuery(v string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch ch := v[i]; {
		case ch == '+':
			b.WriteByte(' ')
		case ch == '%':
			if i+2 >= len(v) || !isHex(v[i+1]) || !isHex(v[i+2]) {
				return "", fmt.Errorf("unescape %q: a bad percent escape", v)
			}
			b.WriteByte(unhex(v[i+1])<<4 | unhex(v[i+2]))
			i += 2
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
