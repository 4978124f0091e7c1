package classifiers

import (
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// ControllerWrite finds fields another controller or operator wrote after the
// object was created.
var ControllerWrite = Classifier{
	Name:     drift.CauseControllerWrite,
	Doc:      "a controller or operator wrote it after creation (another field manager), HPAs aside",
	Classify: classifyControllerWrite,
}

// knownWriters explains what well-known controllers write.
var knownWriters = map[string]string{
	"cainjector":                         "cert-manager's cainjector injects the CA bundle",
	"cert-manager-cainjector":            "cert-manager's cainjector injects the CA bundle",
	"kube-controller-manager":            "a built-in Kubernetes controller writes it",
	"clusterrole-aggregation-controller": "the ClusterRole aggregation controller fills aggregated rules",
	"helm":                               "Helm writes it on `helm upgrade`, outside Argo CD",
	"kustomize-controller":               "Flux's kustomize-controller applies it",
	"helm-controller":                    "Flux's helm-controller applies it",
}

func classifyControllerWrite(c *Case) (Verdict, bool) {
	d := c.Diff
	if d == nil || len(d.Path) == 0 {
		return Verdict{}, false
	}
	var writers []drift.Owner
	for _, o := range d.NonArgoOwners() {
		if o.Subresource != "status" && !IsManualManager(o.Manager) {
			writers = append(writers, o)
		}
	}
	if len(writers) == 0 {
		return Verdict{}, false
	}
	w := writers[len(writers)-1]
	ev := []string{fmt.Sprintf("%s is owned by %s, not by Argo CD: a controller wrote it after the sync", d.Path, ownersText(writers))}
	if what, ok := knownWriters[w.Manager]; ok {
		ev = append(ev, what)
	}
	live := c.Resource().Live
	if from := drift.Annotations(live)["cert-manager.io/inject-ca-from"]; from != "" && strings.Contains(d.Path.String(), "caBundle") {
		ev = append(ev, "annotation cert-manager.io/inject-ca-from: "+from+" asks cainjector to copy that Certificate's CA here")
	}
	if d.Path.String() == "/metadata/annotations/deployment.kubernetes.io~1revision" {
		ev = append(ev, "the Deployment controller numbers rollouts in this annotation; a value in Git is a copy of old kubectl output")
	}
	switch {
	case d.InGit && d.InLive:
		ev = append(ev, fmt.Sprintf("Git declares %s; the controller keeps writing %s, and every sync overwrites it until the controller writes it again", c.show(d.Git), c.show(d.Live)))
	case d.InLive:
		ev = append(ev, fmt.Sprintf("Git does not declare %s; the controller adds %s", d.Path, c.show(d.Live)))
	}
	if d.Path.String() == "/spec/replicas" && w.Subresource == "scale" {
		ev = append(ev, fmt.Sprintf("%s writes replicas through the scale subresource, as an autoscaler does, but no HorizontalPodAutoscaler in the snapshot targets %s", w.Manager, d.Resource))
		return Verdict{Evidence: ev, Fix: drift.FixNone,
			Reason: "find the autoscaler that scales it (deleted, or not collected) before removing replicas from Git"}, true
	}
	if d.InGit {
		return Verdict{Evidence: ev, Fix: drift.FixRemoveField}, true
	}
	return Verdict{Evidence: ev, Fix: drift.FixIgnoreDifference}, true
}
