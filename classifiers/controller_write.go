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

// knownWriter is a well-known component: what it is, and the fields it is
// known to write (empty: any field of the objects it applies).
type knownWriter struct {
	what   string
	fields []string // path suffixes, e.g. "/caBundle"; "" matches every path
}

// knownWriters are components whose field manager name and writes are
// documented. A manager name alone is no evidence for a path outside what the
// component writes: anyone can call themselves cainjector.
var knownWriters = map[string]knownWriter{
	"cainjector":                         {"cert-manager's cainjector injects the CA bundle", []string{"/caBundle"}},
	"cert-manager-cainjector":            {"cert-manager's cainjector injects the CA bundle", []string{"/caBundle"}},
	"kube-controller-manager":            {"a built-in Kubernetes controller writes it", []string{"/spec/replicas", "/metadata/annotations/deployment.kubernetes.io~1revision", "/secrets", "/spec/volumeName"}},
	"clusterrole-aggregation-controller": {"the ClusterRole aggregation controller fills aggregated rules", []string{"/rules"}},
	"kube-webhook-certgen":               {"kube-webhook-certgen patches the CA bundle and failure policy of the webhooks it creates certificates for", []string{"/caBundle", "/failurePolicy"}},
	"pilot-discovery":                    {"istiod patches the CA bundle and failure policy of its validating webhook", []string{"/caBundle", "/failurePolicy"}},
	"vault-k8s":                          {"the Vault agent injector writes its own webhook's CA bundle", []string{"/caBundle"}},
	"helm":                               {"Helm writes it on `helm upgrade`, outside Argo CD", []string{""}},
	"kustomize-controller":               {"Flux's kustomize-controller applies it", []string{""}},
	"helm-controller":                    {"Flux's helm-controller applies it", []string{""}},
}

// controllerEvidence says what in the snapshot shows that a field manager is a
// controller that may own the path, or "" when nothing does: a name is not
// enough.
func (c *Case) controllerEvidence(w drift.Owner) string {
	d := c.Diff
	path := d.Path.String()
	if k, ok := knownWriters[w.Manager]; ok {
		for _, f := range k.fields {
			if strings.HasSuffix(path, f) {
				return k.what
			}
		}
	}
	live := c.Resource().Live
	for _, ref := range drift.List(live, "metadata", "ownerReferences") {
		if drift.Lookup(ref, "controller") == true {
			return fmt.Sprintf("the object is a child of %s %s (ownerReferences, controller: true), which its controller keeps", drift.Str(ref, "kind"), drift.Str(ref, "name"))
		}
	}
	if strings.HasSuffix(path, "/clientConfig/caBundle") {
		switch d.Resource.Kind {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "CustomResourceDefinition":
			return "a webhook's caBundle is written, by design, by the server behind it or by a CA injector, which rotate the certificate"
		}
	}
	if d.Resource.Kind == "ClusterRole" && d.Path.HasPrefix(drift.Pointer{"rules"}) && drift.Map(live, "aggregationRule") != nil {
		return "the ClusterRole has an aggregationRule: Kubernetes fills its rules"
	}
	if wl := c.workloadNamed(w.Manager); wl != "" {
		return fmt.Sprintf("%s runs in the cluster under that name", wl)
	}
	return ""
}

// workloadNamed finds a Deployment, StatefulSet or DaemonSet, in the cluster
// context or among the application's resources, named like a field manager or
// running a container of that name.
func (c *Case) workloadNamed(manager string) string {
	for _, o := range c.context {
		switch drift.Str(o, "kind") {
		case "Deployment", "StatefulSet", "DaemonSet":
		default:
			continue
		}
		ref := drift.RefOf(o)
		if ref.Name == manager {
			return ref.String()
		}
		for _, ct := range drift.List(o, "spec", "template", "spec", "containers") {
			if drift.Str(ct, "name") == manager {
				return fmt.Sprintf("%s (container %s)", ref, manager)
			}
		}
	}
	return ""
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
	shown := c.controllerEvidence(w)
	if shown == "" {
		return Verdict{}, false // unattributed: nothing shows the writer is a controller
	}
	ev := []string{fmt.Sprintf("%s is owned by %s, not by Argo CD: a controller wrote it after the sync", d.Path, ownersText(writers)), shown}
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
