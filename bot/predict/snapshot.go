package predict

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/classifiers"
)

// clusterScoped are the built-in kinds without a namespace, which Argo CD
// does not give the destination namespace.
var clusterScoped = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true, "/ComponentStatus": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "apiregistration.k8s.io/APIService": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicy":          true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding":   true,
	"storage.k8s.io/StorageClass":                                   true, "storage.k8s.io/CSIDriver": true, "storage.k8s.io/CSINode": true,
	"storage.k8s.io/VolumeAttachment": true, "scheduling.k8s.io/PriorityClass": true,
	"networking.k8s.io/IngressClass": true, "node.k8s.io/RuntimeClass": true,
	"policy/PodSecurityPolicy": true, "certificates.k8s.io/CertificateSigningRequest": true,
	"flowcontrol.apiserver.k8s.io/FlowSchema": true, "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration": true,
}

// Snapshot is the snapshot a diagnosis would read right after a sync of the
// revision in, with the live side predicted from Git (see the package doc).
// It does no I/O.
func Snapshot(in Input) (*drift.Snapshot, error) {
	if in.Application == nil || drift.Str(in.Application, "kind") != "Application" {
		return nil, errors.New("predict: no Application")
	}
	app, _ := drift.DeepCopy(in.Application).(map[string]any)
	delete(app, "status")
	name := drift.Str(app, "metadata", "name")
	if name == "" {
		return nil, errors.New("predict: the Application has no metadata.name")
	}
	// An argocd-cm the application itself deploys (a platform repository)
	// is the one in force after the sync: its tracking method and its
	// system-level ignore rules.
	cluster := in.Cluster
	if cm := renderedArgoCDCM(in.Targets); cm != nil {
		cm, _ = drift.DeepCopy(cm).(map[string]any)
		if md, _ := cm["metadata"].(map[string]any); md != nil && drift.Str(md, "namespace") == "" {
			md["namespace"] = drift.Str(app, "spec", "destination", "namespace")
		}
		cluster = []drift.Object{cm}
		for _, o := range in.Cluster {
			if !(drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm") {
				cluster = append(cluster, o)
			}
		}
	}
	settings, _, err := diff.ReadSettings(cluster)
	if err != nil {
		return nil, fmt.Errorf("predict application %s: the cluster context's argocd-cm: %w", name, err)
	}
	ns := drift.Str(app, "spec", "destination", "namespace")
	crds := map[string]drift.Object{}
	for _, o := range append(append([]drift.Object(nil), in.Cluster...), in.Targets...) {
		if drift.Str(o, "kind") == "CustomResourceDefinition" {
			crds[drift.Str(o, "spec", "group")+"/"+drift.Str(o, "spec", "names", "kind")] = o
		}
	}
	scoped := func(o drift.Object) bool {
		r := drift.RefOf(o)
		if clusterScoped[r.Group+"/"+r.Kind] {
			return false
		}
		if crd := crds[r.Group+"/"+r.Kind]; crd != nil {
			return drift.Str(crd, "spec", "scope") != "Cluster"
		}
		return true
	}
	prepare := func(objs []drift.Object) []drift.Object {
		var out []drift.Object
		for _, o := range objs {
			if o == nil || drift.Str(o, "kind") == "" || drift.Str(o, "metadata", "name") == "" {
				continue
			}
			c, _ := drift.DeepCopy(o).(map[string]any)
			if c == nil {
				continue
			}
			md, _ := c["metadata"].(map[string]any)
			if md == nil {
				continue
			}
			if scoped(c) && drift.Str(c, "metadata", "namespace") == "" && ns != "" {
				md["namespace"] = ns
			}
			track(c, name, settings)
			out = append(out, c)
		}
		return out
	}
	synced := prepare(in.Targets)
	compared := synced
	var renders [][]drift.Object
	if len(in.Renders) > 0 {
		// The object synced is one render; the one compared after the next
		// refresh, another.
		compared = prepare(in.Renders[0])
		renders = append(renders, folded(synced))
		for _, r := range in.Renders[1:] {
			renders = append(renders, folded(prepare(r)))
		}
	}
	s := &drift.Snapshot{Application: app, Cluster: append([]drift.Object(nil), cluster...), Renders: renders, Repo: drift.Repo{Files: in.Repo}}
	hpas := hpasOf(append(append([]drift.Object(nil), cluster...), synced...))
	for _, t := range compared {
		ref := drift.RefOf(t)
		from := findRef(synced, ref)
		if from == nil {
			from = t
		}
		live := storedForm(app, from, cluster)
		if live == nil {
			live, _ = drift.DeepCopy(from).(map[string]any)
		}
		crd := crds[ref.Group+"/"+ref.Kind]
		if crd != nil {
			live, _ = classifiers.StoredCustomResource(crd, live)
		}
		for _, rw := range rewrites {
			if rw.Applies(from, crd) {
				rw.Apply(live)
			}
		}
		scaled(live, t, hpas)
		if !serverSide(app, from) {
			lastApplied(live, from)
		}
		s.Resources = append(s.Resources, drift.Resource{Target: t, Live: live})
	}
	s.Resources = append(s.Resources, claims(synced, name, settings)...)
	return s, nil
}

// track gives an object the tracking metadata Argo CD sets on the desired
// state, under the instance's tracking method.
func track(o drift.Object, app string, st drift.Settings) {
	md, _ := o["metadata"].(map[string]any)
	method := st.TrackingMethod
	if method == "" {
		method = "annotation"
	}
	if strings.Contains(method, "annotation") {
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		r := drift.RefOf(o)
		ann["argocd.argoproj.io/tracking-id"] = fmt.Sprintf("%s:%s/%s:%s/%s", app, r.Group, r.Kind, r.Namespace, r.Name)
	}
	if st.LabelTracking() {
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels[st.InstanceLabelKey] = app
	}
}

func findRef(objs []drift.Object, ref drift.Ref) drift.Object {
	for _, o := range objs {
		if drift.RefOf(o) == ref {
			return o
		}
	}
	return nil
}

// storedForm is the object as the API server stores it for a built-in kind,
// as the engine derives it (drift.Difference.StoredObject): it compares the
// manifest with an empty object of its kind and asks a difference Git
// declares for the stored form. nil when not derived (a custom resource).
func storedForm(app, obj drift.Object, cluster []drift.Object) drift.Object {
	skeleton := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"],
		"metadata": map[string]any{"name": drift.Str(obj, "metadata", "name")}}
	if ns := drift.Str(obj, "metadata", "namespace"); ns != "" {
		skeleton["metadata"].(map[string]any)["namespace"] = ns
	}
	probe := &drift.Snapshot{Application: app, Cluster: cluster,
		Resources: []drift.Resource{{Target: obj, Live: skeleton}}}
	cmp, _, err := diff.Compare(probe)
	if err != nil {
		return nil
	}
	for i := range cmp.Diffs {
		d := &cmp.Diffs[i]
		if d.StoredObject == nil || d.StoredBy == "" {
			continue
		}
		// A plain string field's difference answers with Git's manifest as
		// written; only a decoded form is the stored object.
		if o := d.StoredObject(); o != nil && !sameMap(o, obj) {
			c, _ := drift.DeepCopy(o).(map[string]any)
			return c
		}
	}
	for i := range cmp.Diffs {
		if d := &cmp.Diffs[i]; d.StoredObject != nil {
			if o := d.StoredObject(); o != nil {
				c, _ := drift.DeepCopy(o).(map[string]any)
				return c
			}
		}
	}
	return nil
}

// sameMap says whether a and b are the same map (not equal ones).
func sameMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	a["\x00probe"] = true
	_, same := b["\x00probe"]
	delete(a, "\x00probe")
	return same
}

// hpasOf returns the HorizontalPodAutoscalers among objs.
func hpasOf(objs []drift.Object) []drift.Object {
	var out []drift.Object
	for _, o := range objs {
		if g, _ := drift.SplitAPIVersion(drift.Str(o, "apiVersion")); g == "autoscaling" && drift.Str(o, "kind") == "HorizontalPodAutoscaler" {
			out = append(out, o)
		}
	}
	return out
}

// scaled sets, on the live side of a workload an HPA targets and whose
// manifest declares spec.replicas, a replica count the HPA chose: another
// one than Git's, within the HPA's bounds where they allow one.
func scaled(live, target drift.Object, hpas []drift.Object) {
	want, ok := drift.Lookup(target, "spec", "replicas"), drift.Lookup(target, "spec", "replicas") != nil
	if !ok {
		return
	}
	ref := drift.RefOf(target)
	for _, h := range hpas {
		if ns := drift.Str(h, "metadata", "namespace"); ns != "" && ns != ref.Namespace {
			continue
		}
		t := drift.Map(h, "spec", "scaleTargetRef")
		if drift.Str(t, "kind") != ref.Kind || drift.Str(t, "name") != ref.Name {
			continue
		}
		n, _ := drift.Number(want)
		min, okMin := drift.Number(drift.Lookup(h, "spec", "minReplicas"))
		if !okMin {
			min = 1
		}
		max, okMax := drift.Number(drift.Lookup(h, "spec", "maxReplicas"))
		chosen := n + 1
		switch {
		case n < min:
			chosen = min
		case okMax && n >= max && max > min:
			chosen = max - 1
		case okMax && n >= max:
			chosen = min
		}
		if chosen == n {
			chosen = n + 1
		}
		spec, _ := live["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			live["spec"] = spec
		}
		spec["replicas"] = int64(chosen)
		return
	}
}

// claims are the PersistentVolumeClaims a StatefulSet's volumeClaimTemplates
// create when a template carries the label Argo CD tracks by: the StatefulSet
// controller copies the template's labels, so Argo CD counts the claim as the
// application's resource, one Git does not declare. Only the first replica's
// claim is named.
func claims(objs []drift.Object, app string, st drift.Settings) []drift.Resource {
	if !st.LabelTracking() {
		return nil
	}
	var out []drift.Resource
	for _, o := range objs {
		r := drift.RefOf(o)
		if r.Group != "apps" || r.Kind != "StatefulSet" {
			continue
		}
		for _, t := range drift.List(o, "spec", "volumeClaimTemplates") {
			labels := drift.Map(t, "metadata", "labels")
			if v, _ := labels[st.InstanceLabelKey].(string); v != app {
				continue // another value claims the claim for no application of this name
			}
			name := fmt.Sprintf("%s-%s-0", drift.Str(t, "metadata", "name"), r.Name)
			copied := map[string]any{}
			fields := map[string]any{}
			for k, lv := range labels {
				copied[k] = lv
				fields["f:"+k] = map[string]any{}
			}
			live := map[string]any{
				"apiVersion": "v1", "kind": "PersistentVolumeClaim",
				"metadata": map[string]any{"name": name, "namespace": r.Namespace, "labels": copied,
					"managedFields": []any{map[string]any{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
						"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": fields}}}}},
				"spec": drift.DeepCopy(drift.Map(t, "spec")),
			}
			out = append(out, drift.Resource{Live: live})
		}
	}
	return out
}

// folded is a render as Argo CD compares it, where the engine reads further
// renders: a Secret's stringData in data.
func folded(objs []drift.Object) []drift.Object {
	out := make([]drift.Object, len(objs))
	for i, o := range objs {
		if drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "kind") == "Secret" && o["stringData"] != nil {
			c, _ := drift.DeepCopy(o).(map[string]any)
			foldStringData(c)
			o = c
		}
		out[i] = o
	}
	return out
}

// renderedArgoCDCM is the argocd-cm ConfigMap among rendered objects, or nil.
func renderedArgoCDCM(objs []drift.Object) drift.Object {
	for _, o := range objs {
		if drift.Str(o, "apiVersion") == "v1" && drift.Str(o, "kind") == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm" {
			return o
		}
	}
	return nil
}

// serverSide says whether Argo CD syncs the object with a server-side apply:
// the object's sync-options annotation, else the Application's syncOptions.
func serverSide(app, obj drift.Object) bool {
	for _, o := range strings.Split(drift.Annotations(obj)["argocd.argoproj.io/sync-options"], ",") {
		switch strings.TrimSpace(o) {
		case "ServerSideApply=true":
			return true
		case "ServerSideApply=false":
			return false
		}
	}
	for _, o := range drift.List(app, "spec", "syncPolicy", "syncOptions") {
		if s, _ := o.(string); strings.TrimSpace(s) == "ServerSideApply=true" {
			return true
		}
	}
	return false
}

// lastApplied records on the live object, as a client-side apply does, the
// manifest applied: what Argo CD's three-way diff reads.
func lastApplied(live, applied drift.Object) {
	const key = "kubectl.kubernetes.io/last-applied-configuration"
	c, _ := drift.DeepCopy(applied).(map[string]any)
	if ann, ok := drift.Map(c, "metadata")["annotations"].(map[string]any); ok {
		delete(ann, key)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return
	}
	md, _ := live["metadata"].(map[string]any)
	if md == nil {
		return
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[key] = string(raw)
}
