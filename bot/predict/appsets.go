package predict

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/appset"
	"github.com/driftfix/driftfix/bot/drift"
)

// resolveSet is the Applications an ApplicationSet generates at the
// revision (bot/appset resolves its generators as Argo CD's controller
// does; a git generator of this repository reads the revision's files,
// whatever revision it names, so the change is what is predicted), what it
// could not resolve, with what that needs, and notes naming the generators
// resolved from what Git tells alone. declared are the cluster Secrets the
// revision declares for the Argo CD that holds the set.
func resolveSet(s application, rev Revision, opt Options, declared []drift.Object) ([]application, []NotPredicted, []string) {
	name := drift.Str(s.obj, "metadata", "name")
	files := func(repoURL, _ string) (map[string]string, bool) {
		if len(opt.Repositories) == 0 || SameRepository(repoURL, opt.Repositories...) {
			return rev.Files, true
		}
		return nil, false
	}
	res, err := appset.Resolve(s.obj, appset.Options{Files: files, Cluster: opt.Cluster, Declared: declared})
	if err != nil {
		return nil, []NotPredicted{{Application: name, Kind: "ApplicationSet", File: s.manifest, Reason: err.Error()}}, nil
	}
	var not []NotPredicted
	for _, u := range res.Unresolved {
		not = append(not, NotPredicted{Application: name, Kind: "ApplicationSet", File: s.manifest,
			Reason: "generator " + u.Generator + " is not resolved: " + u.Reason, Needs: u.Needs})
	}
	var notes []string
	for _, p := range res.Partial {
		notes = append(notes, fmt.Sprintf("ApplicationSet %s: generator %s %s; %s gives the rest", name, p.Generator, p.Reason, p.Needs))
	}
	out := make([]application, 0, len(res.Applications))
	for _, g := range res.Applications {
		out = append(out, application{obj: g.Application, manifest: s.manifest, from: "ApplicationSet " + name + " (" + g.Generator + ")", parent: idOf(s.obj)})
	}
	return out, not, notes
}

// clusterSecretLabel marks a Secret as an Argo CD cluster.
const clusterSecretLabel = "argocd.argoproj.io/secret-type"

// declaredSecret is a cluster Secret the revision declares, and the
// namespace Argo CD applies it to.
type declaredSecret struct {
	obj       drift.Object
	namespace string
}

// isLocalDestination says whether an Application deploys to the cluster
// Argo CD runs in (the one whose Secrets its controllers read).
func isLocalDestination(app drift.Object) bool {
	server := strings.TrimSuffix(drift.Str(app, "spec", "destination", "server"), "/")
	name := drift.Str(app, "spec", "destination", "name")
	return server == "https://kubernetes.default.svc" || (server == "" && name == "in-cluster")
}

// declaredClusters are the cluster Secrets the revision declares for Argo
// CD: a Secret labelled argocd.argoproj.io/secret-type: cluster that an
// Application found at the revision (before ApplicationSets are resolved)
// renders and deploys to the local cluster, the namespace it lands in
// being its own or the Application's destination namespace. Argo CD reads
// the cluster Secrets of its own namespace, so setsNamespace matches them
// to a set. Secrets another tool makes (an ExternalSecret, a
// SealedSecret, a Secret a Terraform or a script applies) are not in Git
// as Secrets, and are not counted: --cluster gives them.
func (d *discovery) declaredClusters() []declaredSecret {
	var out []declaredSecret
	for _, a := range d.apps {
		if !isLocalDestination(a.obj) {
			continue
		}
		srcs, _ := localSources(a.obj, d.rev.Files, d.opt)
		for _, src := range srcs {
			if !d.rr.sourceReadsText(d.rev, src, clusterSecretLabel) {
				continue
			}
			objs, err := d.render(a.obj, src)
			if err != nil {
				continue // the application's own prediction says why
			}
			for _, o := range objs {
				if drift.Str(o, "kind") != "Secret" || drift.Str(o, "apiVersion") != "v1" || drift.Labels(o)[clusterSecretLabel] != "cluster" {
					continue
				}
				if !readableSecret(o) {
					d.notes = append(d.notes, fmt.Sprintf("cluster Secret %s that application %s deploys is encrypted or not base64: not counted as a cluster of its ApplicationSets' clusters generators (--cluster gives it)",
						drift.Str(o, "metadata", "name"), drift.Str(a.obj, "metadata", "name")))
					continue
				}
				ns := drift.Str(o, "metadata", "namespace")
				if ns == "" {
					ns = drift.Str(a.obj, "spec", "destination", "namespace")
				}
				out = append(out, declaredSecret{obj: o, namespace: ns})
			}
		}
	}
	return out
}

// defaultArgoCDNamespace is the namespace Argo CD's installation manifests
// use, taken as Argo CD's when nothing tells another.
const defaultArgoCDNamespace = "argocd"

// setsNamespace is the namespace of the Argo CD that resolves a set: the
// set's own, else the destination namespace of the Application that
// deploys it (an app-of-apps puts a set without one there), else argocd.
func (d *discovery) setsNamespace(s application) string {
	if ns := drift.Str(s.obj, "metadata", "namespace"); ns != "" {
		return ns
	}
	if s.parent != "" {
		for _, a := range d.apps {
			if idOf(a.obj) == s.parent {
				if ns := drift.Str(a.obj, "spec", "destination", "namespace"); ns != "" {
					return ns
				}
			}
		}
	}
	return defaultArgoCDNamespace
}

// readableSecret says whether a Secret's data can be read as Argo CD reads
// it: base64 data and plain stringData, not encrypted in Git (SOPS).
func readableSecret(o drift.Object) bool {
	if o["sops"] != nil {
		return false
	}
	for _, key := range []string{"data", "stringData"} {
		for _, v := range drift.Map(o, key) {
			s, ok := v.(string)
			if !ok || strings.Contains(s, "ENC[") {
				return false
			}
			if key == "data" {
				if _, err := base64.StdEncoding.DecodeString(s); err != nil {
					return false
				}
			}
		}
	}
	return true
}
