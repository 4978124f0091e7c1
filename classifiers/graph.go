package classifiers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// This file reads the object graph of the writer catalog (drift.Graph) for
// what a field manager's name cannot show: an object missing because Git's
// own manifest had it deleted (a TTL, an owner that does not exist, a label an
// add-on manager prunes by) or because the application's own automation may
// delete it, versus one nothing explains; a component known by a label on
// the object it manages; admission with no webhook object, known by the
// annotation it leaves; a field a feature gate that is off makes the API
// server drop; and a workload the application's RBAC lets write exactly this
// object, running the program the manager is named after.

// missing says why an object Git declares is not in the cluster: a
// controller deleted it (evidence of what), a person did (nothing explains it
// and the last sync applied it: the evidence lists what was ruled out), or
// nothing can be said (ok false).
func (c *Case) missing() (cause drift.Cause, ev []drift.Evidence, ok bool) {
	d := c.Diff
	if d == nil || len(d.Path) != 0 || d.InLive || !d.InGit {
		return "", nil, false
	}
	git := c.Resource().Target
	kind := drift.KindOf(git)
	var ruledOut []string
	for _, del := range drift.Graph.Deletions {
		if del.Kind != "" && del.Kind != kind {
			continue
		}
		v, set := del.Field.Get(map[string]any(git))
		switch {
		case !set:
			ruledOut = append(ruledOut, fmt.Sprintf("Git's manifest has no %s (%s)", del.Field, del.Component))
		case del.OwnerAbsent:
			if gone := c.absentOwners(v); len(gone) > 0 {
				return drift.CauseControllerWrite, []drift.Evidence{{Kind: drift.EvidenceDeletion, Path: del.Field.String(),
					Text: fmt.Sprintf("Git's manifest names %s as its owner (%s), and no such object is in the snapshot: %s (%s)", strings.Join(gone, ", "), del.Field, del.Component, del.Source)}}, true
			}
			ruledOut = append(ruledOut, fmt.Sprintf("every owner its %s names exists", del.Field))
		default:
			if why := c.notElapsed(v); why != "" {
				ruledOut = append(ruledOut, fmt.Sprintf("%s (%s): %s", del.Field, del.Component, why))
				continue
			}
			return drift.CauseControllerWrite, []drift.Evidence{{Kind: drift.EvidenceDeletion, Path: del.Field.String(),
				Text: fmt.Sprintf("Git's manifest sets %s: %s; the object is gone as that field asks (%s)", del.Field, del.Component, del.Source)}}, true
		}
	}
	for _, lm := range drift.Graph.Labelled {
		if !lm.Deletes {
			continue
		}
		if v, ok := drift.Labels(git)[lm.Label]; ok && slices.Contains(lm.Values, v) {
			return drift.CauseControllerWrite, []drift.Evidence{{Kind: drift.EvidenceDeletion, Path: "/metadata/labels/" + drift.EscapeToken(lm.Label),
				Text: fmt.Sprintf("Git's manifest carries the label %s=%s: %s, so it deleted the object its own files do not hold (%s)", lm.Label, v, lm.Component, lm.Source)}}, true
		}
		ruledOut = append(ruledOut, fmt.Sprintf("no label %s", lm.Label))
	}
	if role, sa := c.appMayDelete(git); role != "" {
		return drift.CauseControllerWrite, []drift.Evidence{{Kind: drift.EvidenceDeletion,
			Text: fmt.Sprintf("%s, which this application deploys, lets service account %s delete %s: the application's own automation (a hook or a job of its chart) deleted it", role, sa, pluralOf(git))}}, true
	}
	ruledOut = append(ruledOut, "no role the application deploys lets its own service accounts delete "+pluralOf(git))
	if !c.lastSyncApplied(d.Resource) {
		return "", nil, false // never applied: the sync may have failed to create it
	}
	ev = []drift.Evidence{drift.Say(drift.EvidenceGit, fmt.Sprintf("the last sync applied %s, and it is no longer in the cluster", d.Resource))}
	for _, r := range ruledOut {
		ev = append(ev, drift.Evidence{Kind: drift.EvidenceRuledOut, Detail: r, Text: "ruled out: " + r})
	}
	ev = append(ev, drift.Say(drift.EvidenceConsequence, "nothing Git declares or the application deploys deletes it, so a person (or a script outside the application) did"))
	return drift.CauseManualChange, ev, true
}

// absentOwners returns the owners an ownerReferences list names that no
// object of the snapshot is (by kind and name).
func (c *Case) absentOwners(refs any) []string {
	list, _ := refs.([]any)
	var gone []string
	for _, r := range list {
		kind, name := drift.Str(r, "kind"), drift.Str(r, "name")
		if kind != "" && name != "" && !c.objects[kind+"/"+name] {
			gone = append(gone, kind+" "+name)
		}
	}
	return gone
}

// lastSyncApplied reports whether the Application's last sync applied ref
// (its result lists it, synced).
func (c *Case) lastSyncApplied(ref drift.Ref) bool {
	for _, r := range drift.List(c.Snapshot.Application, "status", "operationState", "syncResult", "resources") {
		if drift.Str(r, "kind") == ref.Kind && drift.Str(r, "name") == ref.Name && drift.Str(r, "group") == ref.Group &&
			(ref.Namespace == "" || drift.Str(r, "namespace") == "" || drift.Str(r, "namespace") == ref.Namespace) &&
			drift.Str(r, "status") == "Synced" && drift.Str(r, "hookType") == "" {
			return true
		}
	}
	return false
}

// appMayDelete returns a Role or ClusterRole the application deploys that
// names o's resource (not a wildcard) with the delete verb and is bound, by a
// binding the application deploys, to a service account.
func (c *Case) appMayDelete(o drift.Object) (role, serviceAccount string) {
	group, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion"))
	plural := pluralOf(o)
	ns := drift.Str(o, "metadata", "namespace")
	own := c.appObjects()
	for _, r := range own {
		k := drift.KindOf(r)
		if k != "rbac.authorization.k8s.io/Role" && k != "rbac.authorization.k8s.io/ClusterRole" {
			continue
		}
		if k == "rbac.authorization.k8s.io/Role" && drift.Str(r, "metadata", "namespace") != ns {
			continue
		}
		if !rulesAllow(drift.List(r, "rules"), group, plural, "", []string{"delete", "deletecollection"}) {
			continue
		}
		if sa := boundServiceAccount(own, drift.Str(r, "kind"), drift.Str(r, "metadata", "name")); sa != "" {
			return fmt.Sprintf("%s %s", drift.Str(r, "kind"), drift.Str(r, "metadata", "name")), sa
		}
	}
	return "", ""
}

// appObjects returns the application's RBAC objects and workloads as Git
// declares them (of every resource, also where a part is diagnosed).
func (c *Case) appObjects() []drift.Object { return c.own }

// addOwn keeps a resource of the application that the object graph reads:
// its RBAC objects and its workloads, as Git declares them.
func (in *Input) addOwn(r *drift.Resource) {
	t := r.Target
	if t == nil {
		return
	}
	if _, ok := podSpec(t); ok || strings.HasPrefix(drift.KindOf(t), "rbac.authorization.k8s.io/") {
		in.own = append(in.own, t)
	}
}

// indexGraph files what the object graph reads of a context object: its
// kind and name, and a node's kubelet version.
func (in *Input) indexGraph(o drift.Object) {
	if in.objects == nil {
		in.objects = map[string]bool{}
	}
	in.objects[drift.Str(o, "kind")+"/"+drift.Str(o, "metadata", "name")] = true
	if drift.KindOf(o) != "/Node" {
		return
	}
	if v, err := drift.ParseVersion(drift.Str(o, "status", "nodeInfo", "kubeletVersion")); err == nil && (in.version == nil || v.Less(*in.version)) {
		in.version = &v
	}
}

// rulesAllow reports whether RBAC rules grant one of verbs on the resource
// (of group, plural), by name where name is given; the resource must be
// named, not a wildcard.
func rulesAllow(rules []any, group, plural, name string, verbs []string) bool {
	for _, rule := range rules {
		if !listHas(drift.List(rule, "apiGroups"), group, true) || !listHas(drift.List(rule, "resources"), plural, false) {
			continue
		}
		if !slices.ContainsFunc(verbs, func(v string) bool { return listHas(drift.List(rule, "verbs"), v, true) }) {
			continue
		}
		names := drift.List(rule, "resourceNames")
		if name == "" || listHas(names, name, false) {
			return true
		}
	}
	return false
}

// listHas reports whether a list of strings holds s (or "*" where wildcard).
func listHas(l []any, s string, wildcard bool) bool {
	for _, v := range l {
		if v == s || wildcard && v == "*" {
			return true
		}
	}
	return false
}

// boundServiceAccount returns the first service account that a binding
// among objs (the application's own) binds to the role.
func boundServiceAccount(objs []drift.Object, roleKind, roleName string) string {
	for _, b := range objs {
		k := drift.KindOf(b)
		if k != "rbac.authorization.k8s.io/RoleBinding" && k != "rbac.authorization.k8s.io/ClusterRoleBinding" {
			continue
		}
		if drift.Str(b, "roleRef", "kind") != roleKind || drift.Str(b, "roleRef", "name") != roleName {
			continue
		}
		for _, s := range drift.List(b, "subjects") {
			if drift.Str(s, "kind") != "ServiceAccount" {
				continue
			}
			ns, name := drift.Str(s, "namespace"), drift.Str(s, "name")
			if ns == "" {
				ns = drift.Str(b, "metadata", "namespace")
			}
			if name != "" {
				return ns + "/" + name
			}
		}
	}
	return ""
}

// pluralOf returns the resource name of an object's kind, as RBAC rules
// write it (Kubernetes' own rule for the kinds of the corpora: jobs,
// ingresses, networkpolicies).
func pluralOf(o drift.Object) string {
	k := strings.ToLower(drift.Str(o, "kind"))
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && !strings.HasSuffix(k, "ey"):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// labelledBy returns the component that manages the object by a label it
// carries, and the label's value. The label must be in Git's manifest as
// well as live: anyone may label a live object, so a label only live has
// would let a hand edit pass for the component's.
func (c *Case) labelledBy() (drift.LabelledManager, string, bool) {
	r := c.Resource()
	for _, lm := range drift.Graph.Labelled {
		v, ok := drift.Labels(r.Live)[lm.Label]
		if ok && slices.Contains(lm.Values, v) && drift.Labels(r.Target)[lm.Label] == v {
			return lm, v, true
		}
	}
	return drift.LabelledManager{}, "", false
}

// labelledEvidence says which component the object's label names.
func labelledEvidence(lm drift.LabelledManager, value string) drift.Evidence {
	return drift.Evidence{Kind: drift.EvidenceOwner, Path: "/metadata/labels/" + drift.EscapeToken(lm.Label),
		Text: fmt.Sprintf("the object carries the label %s=%s: it is managed by %s, whatever field manager name its writes carry (%s)", lm.Label, value, lm.Component, lm.Source)}
}

// admissionByAnnotation finds admission with no webhook object that rewrote
// the case's path: the annotation it leaves (or that asks for it) is on the
// live object or its pod template, the path is one it rewrites, and no
// writer but Argo CD's request owns the path.
func (c *Case) admissionByAnnotation() (drift.AdmissionAnnotation, string, bool) {
	d := c.Diff
	if d == nil || !d.InLive || len(d.Path) == 0 || len(d.NonArgoOwners()) > 0 {
		return drift.AdmissionAnnotation{}, "", false
	}
	live := c.Resource().Live
	for _, a := range drift.Graph.Admission {
		if !slices.ContainsFunc(a.Paths, func(p drift.Pointer) bool { return drift.PathMatches(p, d.Path) }) {
			continue
		}
		for _, at := range [][]string{{"metadata", "annotations"}, {"spec", "template", "metadata", "annotations"}, {"spec", "jobTemplate", "spec", "template", "metadata", "annotations"}} {
			if v, ok := drift.Map(live, at...)[a.Annotation].(string); ok {
				where := "the object"
				if len(at) > 2 {
					where = "its pod template"
				}
				return a, fmt.Sprintf("%s carries the annotation %s: %s", where, a.Annotation, shorten(v, 120)), true
			}
		}
	}
	return drift.AdmissionAnnotation{}, "", false
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// featureGateDrop finds a field Git declares that the API server dropped
// because its feature gate is off: the catalog's gated fields, with the
// cluster's version from its nodes where the snapshot has them.
func (c *Case) featureGateDrop() (drift.FeatureGate, string, bool) {
	d := c.Diff
	if d == nil || !d.InGit || d.InLive || len(d.Path) == 0 || len(d.NonArgoOwners()) > 0 {
		return drift.FeatureGate{}, "", false
	}
	kind := drift.KindOf(c.Resource().Target)
	for _, fg := range drift.Graph.FeatureGates {
		pattern := fg.Path
		if fg.PodSpec {
			prefix, ok := drift.PodSpecPath(kind)
			if !ok {
				continue
			}
			pattern = append(append(drift.Pointer{}, prefix...), fg.Path...)
		} else if !slices.Contains(fg.Kinds, kind) {
			continue
		}
		if len(d.Path) != len(pattern) || !drift.PathMatches(pattern, d.Path) {
			continue
		}
		v, known := c.clusterVersion()
		switch {
		case !known:
			return fg, fmt.Sprintf("%s is guarded by the feature gate %s, off by default from Kubernetes %s (alpha) until %s; the snapshot has no node to tell the cluster's version, and the API server drops the field while the gate is off (%s)", d.Path, fg.Gate, fg.Alpha, fg.Default, fg.Source), true
		case v.Less(fg.Default):
			return fg, fmt.Sprintf("%s is guarded by the feature gate %s, which is off by default before Kubernetes %s (alpha from %s); the cluster's nodes run %s, where the API server drops the field unless the gate is turned on (%s)", d.Path, fg.Gate, fg.Default, fg.Alpha, v, fg.Source), true
		}
	}
	return drift.FeatureGate{}, "", false
}

// clusterVersion returns the oldest kubelet version of the nodes in the
// context: the control plane is at least that version, and a gate off by
// default there is off unless turned on.
func (c *Case) clusterVersion() (drift.Version, bool) {
	if c.version == nil {
		return drift.Version{}, false
	}
	return *c.version, true
}

// shownByRBAC: a Role the application deploys lets a service account write
// exactly this object (by resourceNames), and a workload the application
// deploys runs as that account a program or image named like the manager
// (client-go names a program's writes after its base name). The name of a
// person's tool then names that program, not a person.
func (c *Case) shownByRBAC(manager string) string {
	r := c.Resource()
	o := r.Live
	if o == nil {
		return ""
	}
	group, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion"))
	name, ns, plural := drift.Str(o, "metadata", "name"), drift.Str(o, "metadata", "namespace"), pluralOf(o)
	own := c.appObjects()
	for _, role := range own {
		k := drift.KindOf(role)
		if k != "rbac.authorization.k8s.io/Role" && k != "rbac.authorization.k8s.io/ClusterRole" {
			continue
		}
		if !rulesAllow(drift.List(role, "rules"), group, plural, name, []string{"update", "patch"}) {
			continue
		}
		sa := boundServiceAccount(own, drift.Str(role, "kind"), drift.Str(role, "metadata", "name"))
		if sa == "" {
			continue
		}
		for _, w := range own {
			spec, ok := podSpec(w)
			if !ok || drift.Str(w, "metadata", "namespace")+"/"+drift.Str(spec, "serviceAccountName") != sa {
				continue
			}
			for _, ct := range drift.List(spec, "containers") {
				if programName(ct) == manager {
					return fmt.Sprintf("%s %s, which this application deploys, lets service account %s update %s %s by name, and %s runs as that account the program %s (container %s): the writer is that program",
						drift.Str(role, "kind"), drift.Str(role, "metadata", "name"), sa, drift.Str(o, "kind"), name, drift.RefOf(w), manager, drift.Str(ct, "name"))
				}
			}
		}
	}
	_ = ns
	return ""
}

// programName returns the base name of a container's program: its
// command's, or else its image repository's.
func programName(ct any) string {
	if cmd := drift.List(ct, "command"); len(cmd) > 0 {
		if s, ok := cmd[0].(string); ok {
			return s[strings.LastIndex(s, "/")+1:]
		}
	}
	img := drift.Str(ct, "image")
	if i := strings.IndexAny(img, "@"); i >= 0 {
		img = img[:i]
	}
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		img = img[:i]
	}
	return img[strings.LastIndex(img, "/")+1:]
}

// writesAsPerson reports whether the case's path written by manager counts
// as a person's change: the catalog or the policy places the manager as a
// person, and neither a label of the object nor the application's RBAC shows
// a program writing under that name.
func (c *Case) writesAsPerson(manager string) bool {
	if !c.isPerson(manager) {
		return false
	}
	if _, _, ok := c.labelledBy(); ok {
		return false
	}
	return c.shownByRBAC(manager) == ""
}

// inProcessAdmission is the verdict for a path admission with no webhook
// object rewrote (admissionByAnnotation).
func (c *Case) inProcessAdmission() (Verdict, bool) {
	a, why, ok := c.admissionByAnnotation()
	if !ok {
		return Verdict{}, false
	}
	d := c.Diff
	ev := []drift.Evidence{
		{Kind: drift.EvidenceAdmission, Path: d.Path.String(), Detail: a.Annotation,
			Text: fmt.Sprintf("%s. Rewritten at admission by %s; no webhook configuration of it can be listed (%s)", capitalize(why), a.Component, a.Source)},
		{Kind: drift.EvidenceManager, Text: fmt.Sprintf("%s is owned by Argo CD's request alone: a mutation at admission is recorded under the requester's manager", d.Path)},
	}
	if d.InGit {
		ev = append(ev, drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s, the live object has %s", c.show(d.Git), c.showLive())))
	}
	return Verdict{Evidence: ev, Fix: drift.FixNone,
		Reason: "the admission rewrites it on every apply: a person sets in Git a value it accepts, or narrows a rule to this path; no value from the cluster is written to Git"}, true
}

// gatedFieldDropped is the verdict for a field a feature gate that is off
// makes the API server drop (featureGateDrop).
func (c *Case) gatedFieldDropped() (Verdict, bool) {
	fg, why, ok := c.featureGateDrop()
	if !ok {
		return Verdict{}, false
	}
	d := c.Diff
	return Verdict{Evidence: []drift.Evidence{
		{Kind: drift.EvidenceFeatureGate, Path: d.Path.String(), Detail: fg.Gate, Text: why},
		drift.Say(drift.EvidenceGit, fmt.Sprintf("Git declares %s; the API server stored no %s, and no writer owns it", c.show(d.Git), d.Path)),
	}, Fix: drift.FixNone,
		Reason: fmt.Sprintf("Git's intent is not in effect while %s is off; removing the field would change what the object asks for once the gate is on: a person decides (turn the gate on, upgrade, or drop the field)", fg.Gate)}, true
}

// notElapsed says why a deletion after a number of seconds (a TTL) cannot
// explain the object's absence: the Application's last comparison came less
// than that long after its last sync finished, so the object cannot yet
// have run and then expired. "" when it may have, or when the snapshot
// does not tell.
func (c *Case) notElapsed(seconds any) string {
	n, ok := seconds.(int64)
	if f, isFloat := seconds.(float64); isFloat {
		n, ok = int64(f), true
	}
	if !ok {
		return ""
	}
	app := c.Snapshot.Application
	synced, err1 := time.Parse(time.RFC3339, drift.Str(app, "status", "operationState", "finishedAt"))
	compared, err2 := time.Parse(time.RFC3339, drift.Str(app, "status", "reconciledAt"))
	if err1 != nil || err2 != nil || compared.Sub(synced) >= time.Duration(n)*time.Second {
		return ""
	}
	return fmt.Sprintf("the last sync finished at %s and the comparison ran at %s, less than %d seconds later, so it had not expired yet", synced.Format(time.RFC3339), compared.Format(time.RFC3339), n)
}

// capitalize upper-cases a sentence's first letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
