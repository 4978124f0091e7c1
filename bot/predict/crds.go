package predict

import (
	"strings"
	"sync"

	"github.com/driftfix/driftfix/bot/drift"
)

// siblingCRDs finds, for the custom resources an application renders
// without their CustomResourceDefinition (not in its own render, not in the
// cluster context), the CRDs another application of the repository installs
// in the same cluster at the same revision: an operator's chart and the
// application of its resources, as repositories split them. The API server
// of that cluster prunes and defaults the resources by that CRD's schema,
// so the prediction reads it as the cluster's.
type siblingCRDs struct {
	mu   sync.Mutex
	apps map[string][]application // revision name -> applications found
	// index holds, per revision, the CRDs each sibling renders, built on
	// first need.
	index map[string][]installedCRD
}

// installedCRD is a CRD an application renders, and the cluster it goes to.
type installedCRD struct {
	crd     drift.Object
	cluster string
	from    string // the application's identity
}

// setApps records a revision's applications (discovery's).
func (s *siblingCRDs) setApps(rev string, apps []application) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apps == nil {
		s.apps = map[string][]application{}
	}
	s.apps[rev] = apps
}

// clusterOf names an application's destination cluster: the local one by
// its server or its name alike.
func clusterOf(app drift.Object) string {
	if isLocalDestination(app) {
		return "in-cluster"
	}
	if s := strings.TrimSuffix(drift.Str(app, "spec", "destination", "server"), "/"); s != "" {
		return s
	}
	return "name:" + drift.Str(app, "spec", "destination", "name")
}

// crdKey is a CRD's or a resource's group and kind.
func crdKey(o drift.Object) string {
	if drift.Str(o, "kind") == "CustomResourceDefinition" {
		return drift.Str(o, "spec", "group") + "/" + drift.Str(o, "spec", "names", "kind")
	}
	g, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion"))
	return g + "/" + drift.Str(o, "kind")
}

// siblingCRDsFor returns the CRDs siblings install in the application's cluster for
// the kinds of targets that known (its render and the cluster context) has
// no CRD for.
func (r *renderer) siblingCRDsFor(rev Revision, app drift.Object, targets, known []drift.Object, opt Options) []drift.Object {
	have := map[string]bool{}
	for _, o := range append(append([]drift.Object(nil), known...), targets...) {
		if drift.Str(o, "kind") == "CustomResourceDefinition" {
			have[crdKey(o)] = true
		}
	}
	missing := map[string]bool{}
	for _, o := range targets {
		if k := crdKey(o); !have[k] && strings.Contains(k, ".") {
			missing[k] = true // a group with a dot: not a core API group of Kubernetes' own
		}
	}
	if len(missing) == 0 {
		return nil
	}
	cluster, self := clusterOf(app), idOf(app)
	var out []drift.Object
	for _, c := range r.crdIndex(rev, opt) {
		k := crdKey(c.crd)
		if missing[k] && c.cluster == cluster && c.from != self {
			out = append(out, c.crd)
			missing[k] = false
		}
	}
	return out
}

// crdIndex renders, once per revision, every application whose sources
// hold a file naming a CustomResourceDefinition, and lists the CRDs each
// renders.
func (r *renderer) crdIndex(rev Revision, opt Options) []installedCRD {
	s := &r.crds
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.index[rev.Name]; ok {
		return got
	}
	var out []installedCRD
	for _, a := range s.apps[rev.Name] {
		srcs, _ := localSources(a.obj, rev.Files, opt)
		for _, src := range srcs {
			if !r.sourceReadsText(rev, src, "CustomResourceDefinition") {
				continue
			}
			objs, err := r.render(rev, a.obj, src, opt)
			if err != nil {
				continue // that application's own prediction says why
			}
			for _, o := range objs {
				if drift.Str(o, "kind") == "CustomResourceDefinition" {
					out = append(out, installedCRD{crd: o, cluster: clusterOf(a.obj), from: idOf(a.obj)})
				}
			}
		}
	}
	if s.index == nil {
		s.index = map[string][]installedCRD{}
	}
	s.index[rev.Name] = out
	return out
}

// sourceReadsText says whether a file a source reads (its folder, and what
// its kustomization reads) holds the text.
func (r *renderer) sourceReadsText(rev Revision, src drift.Source, text string) bool {
	reads := map[string]bool{}
	if kustomization(src.Path, rev.Files) {
		reads = r.reads(rev, src.Path)
	}
	for f, c := range rev.Files {
		if (inDir(f, src.Path) || reads[f]) && strings.Contains(c, text) {
			return true
		}
	}
	return false
}
