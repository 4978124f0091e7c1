package classifiers

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// ControllerWrite finds fields another controller or operator wrote after the
// object was created.
var ControllerWrite = Classifier{
	Name:           drift.CauseControllerWrite,
	Doc:            "a controller or operator wrote it after creation (another field manager), HPAs aside",
	Classify:       classifyControllerWrite,
	MayStayIgnored: true,
	Fleet:          FleetWriter,
	Risk:           "the controller that owns the field keeps writing it; Argo CD stops overwriting it on every sync",
}

func classifyControllerWrite(c *Case) (Verdict, bool) {
	d := c.Diff
	if cause, ev, ok := c.missing(); ok && cause == drift.CauseControllerWrite { // deleted without a person (graph.go)
		return Verdict{Evidence: ev, Fix: drift.FixNone,
			Reason: "a controller, or the application's own automation, deleted it as Git's manifests allow; whether Git should (a hook with a delete policy instead of a TTL, no owner reference, no add-on manager label, no job that deletes it) is a person's choice"}, true
	}
	if d == nil || len(d.Path) == 0 {
		return Verdict{}, false
	}
	var writers []drift.Owner
	for _, o := range d.NonArgoOwners() {
		if !c.writesAsPerson(o.Manager) { // a status update writes the metadata it owns too
			writers = append(writers, o)
		}
	}
	if len(writers) == 0 {
		if lm, v, ok := c.labelledBy(); ok && d.InGit && !d.InLive {
			return Verdict{Evidence: []drift.Evidence{labelledEvidence(lm, v),
				drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s; the live object has no %s: the manager re-applied its own version of the object without it", c.show(d.Git), d.Path))},
				Fix: drift.FixNone, Reason: "Argo CD and the component that manages the object by its label overwrite each other; a person decides which of them owns it"}, true
		}
		return Verdict{}, false
	}
	w := writers[len(writers)-1]
	pl := c.place(w)
	if pl.is != drift.WriterController {
		// unattributed unless the audit log shows a controller's identity wrote it (audit.go)
		return c.auditControllerWrite(w)
	}
	ev := []drift.Evidence{{Kind: drift.EvidenceManager, Manager: w.Manager,
		Text: fmt.Sprintf("%s is owned by %s, not by Argo CD: a controller wrote it after the sync", d.Path, ownersText(writers))}}
	for _, line := range pl.evidence() {
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceManager, Manager: w.Manager, Text: line})
	}
	live := c.Resource().Live
	if from := drift.Annotations(live)["cert-manager.io/inject-ca-from"]; from != "" && strings.Contains(d.Path.String(), "caBundle") {
		ev = append(ev, drift.Say(drift.EvidenceOwner, "annotation cert-manager.io/inject-ca-from: "+from+" asks cainjector to copy that Certificate's CA here"))
	}
	if d.Path.String() == "/metadata/annotations/deployment.kubernetes.io~1revision" {
		ev = append(ev, drift.Say(drift.EvidenceManager, "the Deployment controller numbers rollouts in this annotation; a value in Git is a copy of old kubectl output"))
	}
	switch {
	case d.InGit && d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s; the controller keeps writing %s, and every sync overwrites it until the controller writes it again", c.show(d.Git), c.showLive())))
	case d.InLive:
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git does not declare %s; the controller adds %s", d.Path, c.showLive())))
	}
	if d.Path.String() == "/spec/replicas" && w.Subresource == "scale" {
		ev = append(ev, drift.Say(drift.EvidenceManager, fmt.Sprintf("%s writes replicas through the scale subresource, as an autoscaler does, but no HorizontalPodAutoscaler in the snapshot targets %s", w.Manager, d.Resource)))
		return Verdict{Evidence: ev, Fix: drift.FixNone,
			Reason: "find the autoscaler that scales it (deleted, or not collected) before removing replicas from Git"}, true
	}
	if pl.grant == "" {
		return Verdict{Evidence: ev, Fix: drift.FixNone, Reason: fmt.Sprintf("no rule says %s legitimately owns %s, and what names it a controller proves no right to the field: if it does own it, name it in the policy's writers (manager: %s, is: controller, owns: [%s]) and driftfix proposes the fix", w.Manager, d.Path, w.Manager, d.Path)}, true
	}
	ev = append(ev, drift.Say(drift.EvidenceManager, "it may keep the field: "+pl.grant))
	if d.InGit {
		return Verdict{Evidence: ev, Fix: drift.FixRemoveField, Grant: pl.grant}, true
	}
	return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference, Grant: pl.grant}, true
}
