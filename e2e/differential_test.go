//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/collect"
	"github.com/driftfix/driftfix/bot/diff"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/docs"
	"sigs.k8s.io/yaml"
)

var (
	updateDifferential = flag.Bool("update-differential", false, "save one snapshot per disagreement class under testdata/differential/")
	differentialReport = flag.String("differential-report", "", "write the differential test's agreement and disagreements to this file")
)

// disagreement is one resource where driftfix's emulated diff and Argo CD's own differ.
type disagreement struct {
	App, Resource string
	ArgoStatus    string
	ArgoPaths     []string
	DriftPaths    []string
	Class         string
	Snapshot      *drift.Snapshot `json:"-"`
	Index         int             `json:"-"`
}

// TestDifferential syncs several hundred generated manifests through the real
// Argo CD and compares, per resource, Argo CD's verdict and differing paths
// (its normalizedLive vs predictedLive, walked by driftfix's diff) with
// driftfix's own emulation on the same snapshot without those two states.
func TestDifferential(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	s.kubectl(t, differentialCRDs, "apply", "-f", "-")
	s.waitEstablished(t, "gadgets.diff.example.com")
	s.waitEstablished(t, "blobs.diff.example.com")
	manifests := differentialManifests()
	var apps []string
	seenApp := map[string]bool{}
	for _, m := range manifests {
		if !seenApp[m.app] {
			seenApp[m.app] = true
			apps = append(apps, m.app)
		}
	}
	for _, app := range apps {
		s.kubectl(t, "", "-n", "argocd", "delete", "application", app, "--ignore-not-found", "--timeout=120s")
		s.kubectl(t, "", "delete", "namespace", app, "--ignore-not-found", "--timeout=120s")
		s.kubectl(t, "", "create", "namespace", app)
	}
	// Pods are admitted only once the namespace has its default ServiceAccount.
	for i := 0; i < 60; i++ {
		cmd := exec.Command(filepath.Join(s.root, "bin", "kubectl"), "--kubeconfig", s.kubeconfig, "-n", appWorkloads, "get", "serviceaccount", "default")
		if cmd.Run() == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: s.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	// What the API server refuses, Argo CD cannot sync: a dry-run drops it
	// here, so that every Application's sync succeeds.
	dr, err := kube.NewDryRunner(rc, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ssa, err := kube.NewDryRunner(rc, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ssa.ServerSideOnly = true
	files, perApp, dropped := syncable(ctx, t, dr, ssa, manifests)
	t.Logf("%d manifests generated, %d refused by the API server's dry-run, %d synced", len(manifests), dropped, len(files))
	repo := gitRepo(t, files)
	kept := apps[:0]
	for _, app := range apps {
		if perApp[app] == 0 {
			t.Errorf("every manifest of %s was refused", app)
			continue
		}
		kept = append(kept, app)
	}
	apps = kept
	for _, app := range apps {
		s.applyDifferentialApp(t, app, repo)
	}
	t.Cleanup(func() {
		for _, app := range apps {
			s.kubectl(t, "", "-n", "argocd", "delete", "application", app, "--ignore-not-found", "--timeout=180s")
			s.kubectl(t, "", "delete", "namespace", app, "--ignore-not-found", "--timeout=120s")
		}
		s.kubectl(t, "", "delete", "crd", "gadgets.diff.example.com", "blobs.diff.example.com", "--ignore-not-found")
	})
	// Every Application syncs once (automated, no self-heal); controllers
	// then do their part (node ports, aggregated rules, HPA status), and a
	// refresh lets Argo CD compare the settled state.
	s.waitSynced(t, apps)
	// Then people change things: manual edits at top-level and nested
	// fields, in maps, lists with and without merge keys, and templates, so
	// that paths are compared on OutOfSync resources too.
	for _, m := range differentialEdits {
		if !seenApp[m.app] || perApp[m.app] == 0 {
			continue
		}
		cmd := exec.Command(filepath.Join(s.root, "bin", "kubectl"), "--kubeconfig", s.kubeconfig, "-n", m.app, "patch", m.resource,
			"--field-manager=kubectl-edit", "--type="+m.typ, "-p", m.patch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("kubectl patch %s %s: %v\n%s", m.app, m.resource, err, out)
		}
	}
	time.Sleep(20 * time.Second)
	for _, app := range apps {
		s.kubectl(t, "", "-n", "argocd", "annotate", "application", app, "argocd.argoproj.io/refresh=normal", "--overwrite")
	}
	time.Sleep(15 * time.Second)

	settings, err := s.argo.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kube.Read(ctx, rc, kube.Config{})
	if err != nil {
		t.Fatal(err)
	}
	all := diffTally{}
	byApp := map[string]*diffTally{}
	var dis []disagreement
	var walkMismatch []string
	for _, app := range apps {
		snap, err := s.argo.Snapshot(ctx, "argocd", app, argocd.SnapshotOptions{Settings: &settings})
		if err != nil {
			t.Fatal(err)
		}
		collect.AddClusterContext(snap, cl.For(snap))
		ta, d, w := compareApp(t, app, snap)
		byApp[app] = ta
		dis, walkMismatch = append(dis, d...), append(walkMismatch, w...)
		all.total += ta.total
		all.status += ta.status
		all.paths += ta.paths
		all.missing += ta.missing
		all.outOfSync += ta.outOfSync
	}
	var rep strings.Builder
	fmt.Fprintf(&rep, "Differential test against Argo CD 3.6.1 and kube-apiserver 1.37.2, %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&rep, "%d manifests generated, %d refused by the API server, %d resources compared (%d without a live or Git side left out)\n",
		len(manifests), dropped, all.total, all.missing)
	fmt.Fprintf(&rep, "same status: %d/%d (%.1f%%); same path set: %d/%d (%.1f%%); Argo CD reports %d OutOfSync (%d edited by hand after the sync)\n",
		all.status, all.total, pct(all.status, all.total), all.paths, all.total, pct(all.paths, all.total), all.outOfSync, len(differentialEdits))
	for _, app := range apps {
		ta := byApp[app]
		fmt.Fprintf(&rep, "  %-16s status %d/%d, paths %d/%d, Argo CD OutOfSync %d\n", app, ta.status, ta.total, ta.paths, ta.total, ta.outOfSync)
	}
	if len(walkMismatch) > 0 {
		fmt.Fprintf(&rep, "\nArgo CD's status and its own states disagree (%d):\n", len(walkMismatch))
		for _, w := range walkMismatch {
			fmt.Fprintf(&rep, "  %s\n", w)
		}
	}
	writeDisagreements(t, &rep, dis)
	t.Log("\n" + rep.String())
	if *differentialReport != "" {
		if err := os.WriteFile(*differentialReport, []byte(rep.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if all.total < 300 {
		t.Errorf("only %d resources compared; the differential test needs at least 300", all.total)
	}
	// The agreement the docs state is a floor (docs/figures.yaml,
	// "differential"): resources agreeing on status and paths, their share,
	// and resources compared.
	agree := all.total - len(dis)
	docs.Hold(t, "differential", "agree", float64(agree))
	docs.Hold(t, "differential", "agree-pct", pct(agree, all.total))
	docs.Hold(t, "differential", "resources", float64(all.total))
}

// applyDifferentialApp creates Application app over repo, synced automatically
// with pruning (without validation, or with server-side apply, for the
// Applications of those variations).
func (s *stack) applyDifferentialApp(t *testing.T, app, repo string) {
	opts := ""
	switch app {
	case appNoValidate:
		opts = "    syncOptions: [Validate=false]\n"
	case appSSA:
		opts = "    syncOptions: [ServerSideApply=true]\n"
	}
	s.kubectl(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source: {repoURL: %q, path: %s, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy:
    automated: {prune: true}
%s`, app, repo, app, app, opts), "apply", "-f", "-")
}

// diffTally counts resources compared: in all, agreeing on status, agreeing
// on the path set, without a live or Git side, and OutOfSync for Argo CD.
type diffTally struct{ total, status, paths, missing, outOfSync int }

// compareApp compares, on each resource of app's snapshot, the paths Argo
// CD's own states differ at with the paths driftfix finds: it counts them,
// and lists the disagreements and where Argo CD's status and its own states
// disagree.
func compareApp(t *testing.T, app string, snap *drift.Snapshot) (ta *diffTally, dis []disagreement, mismatch []string) {
	argoPaths, err := differingPaths(snap)
	if err != nil {
		t.Fatal(err)
	}
	driftPaths, err := differingPaths(snap.WithoutArgoStates())
	if err != nil {
		t.Fatal(err)
	}
	ta = &diffTally{}
	statuses := drift.ArgoStatuses(snap.Application)
	for i := range snap.Resources {
		r := &snap.Resources[i]
		ref := r.Ref()
		if r.Live == nil || r.Target == nil {
			ta.missing++
			continue
		}
		status := statuses[ref]
		ta.total++
		argoOut := status == "OutOfSync"
		if argoOut {
			ta.outOfSync++
		}
		if argoOut != (len(argoPaths[i]) > 0) {
			mismatch = append(mismatch, fmt.Sprintf("%s %s: Argo CD %s, its normalized/predicted states differ at %v", app, ref, status, argoPaths[i]))
		}
		driftOut := len(driftPaths[i]) > 0
		sameStatus := argoOut == driftOut
		samePaths := strings.Join(argoPaths[i], " ") == strings.Join(driftPaths[i], " ")
		if sameStatus {
			ta.status++
		}
		if samePaths {
			ta.paths++
		}
		if !sameStatus || !samePaths {
			dis = append(dis, disagreement{App: app, Resource: ref.String(), ArgoStatus: status, ArgoPaths: argoPaths[i], DriftPaths: driftPaths[i],
				Class: disagreementClass(ref, argoPaths[i], driftPaths[i]), Snapshot: snap, Index: i})
		}
	}
	return ta, dis, mismatch
}

// syncable keeps the manifests the API server's dry run accepts (server-side
// for the server-side apply Application), as Argo CD's sync would apply
// them: it returns their files by Application and path, how many each
// Application keeps, and how many it dropped.
func syncable(ctx context.Context, t *testing.T, dr, ssa *kube.DryRunner, manifests []genManifest) (files map[string]string, perApp map[string]int, dropped int) {
	files, perApp = map[string]string{}, map[string]int{}
	for _, m := range manifests {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(m.yaml), &obj); err != nil {
			t.Fatalf("generated %s/%s is not YAML: %v\n%s", m.app, m.file, err, m.yaml)
		}
		// Argo CD's apply (like kubectl's) refuses fields a built-in kind does
		// not declare unless Validate=false; a custom resource's are pruned.
		validation := "Strict"
		if strings.HasSuffix(drift.Str(obj, "apiVersion"), "diff.example.com/v1") {
			validation = "Warn"
		}
		if m.app == appNoValidate {
			validation = "Ignore"
		}
		check := dr
		if m.app == appSSA {
			check = ssa
		}
		if _, err := check.Apply(ctx, obj, m.app, validation); err != nil {
			t.Logf("not synced (the API server refuses it): %s/%s: %v", m.app, m.file, err)
			dropped++
			continue
		}
		files[m.app+"/"+m.file] = m.yaml
		perApp[m.app]++
	}
	return files, perApp, dropped
}

// waitSynced waits up to 6 minutes in all for the one automated sync of each
// of apps; one that fails or is late is an error, and the others are still
// compared.
func (s *stack) waitSynced(t *testing.T, apps []string) {
	deadline := time.Now().Add(6 * time.Minute)
	for _, app := range apps {
		for {
			a := s.summary(t, app)
			if a.OperationPhase == "Succeeded" {
				break
			}
			if a.OperationPhase == "Failed" || a.OperationPhase == "Error" || time.Now().After(deadline) {
				msg := s.kubectl(t, "", "-n", "argocd", "get", "application", app, "-o", "jsonpath={.status.operationState.message}")
				// The others are still compared; what did not sync counts as missing.
				t.Errorf("Application %s did not sync: phase %q sync %q: %s", app, a.OperationPhase, a.SyncStatus, msg)
				break
			}
			time.Sleep(2 * time.Second)
		}
	}
}

// writeDisagreements writes the disagreements to rep by class, each class
// under its file of testdata/differential (a saved class keeps its file and
// number, a new one takes the next) with the values at the paths only one
// side reports; with -update-differential it saves a new class's first
// snapshot there.
func writeDisagreements(t *testing.T, rep *strings.Builder, dis []disagreement) {
	classes := map[string][]disagreement{}
	var keys []string
	for _, d := range dis {
		if classes[d.Class] == nil {
			keys = append(keys, d.Class)
		}
		classes[d.Class] = append(classes[d.Class], d)
	}
	sort.Strings(keys)
	fmt.Fprintf(rep, "\nDisagreements: %d resources in %d classes\n", len(dis), len(keys))
	// Saved classes keep their files (and numbers): a class the engine no
	// longer disagrees on stays as a regression case; a new class gets the
	// next number.
	saved, next := savedClasses(t)
	for _, k := range keys {
		ds := classes[k]
		file, ok := saved[k]
		if !ok {
			next++
			file = fmt.Sprintf("%02d-%s.json", next, slug(k))
		}
		fmt.Fprintf(rep, "\n[%s] %s (%d)\n", file, k, len(ds))
		for _, d := range ds {
			fmt.Fprintf(rep, "  %s %s: Argo CD %s %v; driftfix %v\n", d.App, d.Resource, d.ArgoStatus, d.ArgoPaths, d.DriftPaths)
		}
		// The values at the paths only one side reports, in the first resource.
		r := ds[0].Snapshot.Resources[ds[0].Index]
		for _, p := range symmetricDifference(ds[0].ArgoPaths, ds[0].DriftPaths) {
			ptr, err := drift.ParsePointer(p)
			if err != nil {
				continue
			}
			fmt.Fprintf(rep, "    %s: git %s, live %s, predicted %s, normalized %s\n", p,
				valueAt(r.Target, ptr), valueAt(r.Live, ptr), valueAt(r.PredictedLive, ptr), valueAt(r.NormalizedLive, ptr))
		}
		if *updateDifferential && !ok {
			if err := os.MkdirAll(filepath.Join("..", "testdata", "differential"), 0o755); err != nil {
				t.Fatal(err)
			}
			raw, err := json.MarshalIndent(trimmedSnapshot(ds[0].Snapshot, ds[0].Index), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "testdata", "differential", file), append(raw, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (s *stack) summary(t *testing.T, name string) argocd.AppSummary {
	t.Helper()
	apps, err := s.argo.ListApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		if a.Name == name {
			return a
		}
	}
	return argocd.AppSummary{}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// differingPaths runs driftfix's diff and returns, per resource index, the
// sorted paths that differ and that no ignore rule hides.
func differingPaths(s *drift.Snapshot) (map[int][]string, error) {
	cmp, _, err := diff.Compare(s)
	if err != nil {
		return nil, err
	}
	out := map[int][]string{}
	for _, d := range cmp.Diffs {
		if len(d.HiddenBy) > 0 {
			continue
		}
		out[d.Index] = append(out[d.Index], d.Path.String())
	}
	for i := range out {
		sort.Strings(out[i])
	}
	return out, nil
}

var digits = regexp.MustCompile(`/[0-9]+(/|$)`)

// disagreementClass names what differs: the kind, and the paths only driftfix
// reports (+) and only Argo CD reports (-), list indexes generalized.
func disagreementClass(ref drift.Ref, argo, mine []string) string {
	in := func(list []string, p string) bool {
		for _, q := range list {
			if q == p {
				return true
			}
		}
		return false
	}
	set := map[string]bool{}
	for _, p := range mine {
		if !in(argo, p) {
			set["+"+digits.ReplaceAllString(p, "/*$1")] = true
		}
	}
	for _, p := range argo {
		if !in(mine, p) {
			set["-"+digits.ReplaceAllString(p, "/*$1")] = true
		}
	}
	var parts []string
	for p := range set {
		parts = append(parts, p)
	}
	sort.Strings(parts)
	return ref.Kind + " " + strings.Join(parts, " ")
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug makes a short file name part from a class: the kind and the last
// token of its first path.
func slug(class string) string {
	fields := strings.Fields(class)
	s := strings.ToLower(fields[0])
	if len(fields) > 1 {
		p := strings.TrimLeft(fields[1], "+-")
		toks := strings.Split(strings.Trim(p, "/"), "/")
		last := toks[len(toks)-1]
		if last == "*" && len(toks) > 1 {
			last = toks[len(toks)-2]
		}
		if last == "" {
			last = "object"
		}
		sign := "extra"
		if strings.HasPrefix(fields[1], "-") {
			sign = "missed"
		}
		s += "-" + sign + "-" + strings.ToLower(last)
	}
	return strings.Trim(nonSlug.ReplaceAllString(s, "-"), "-")
}

// trimmedSnapshot keeps one resource (with Argo CD's states, the ground truth),
// the Application without its other resources' status, and the cluster
// objects that concern that resource.
func trimmedSnapshot(s *drift.Snapshot, idx int) *drift.Snapshot {
	r := s.Resources[idx]
	ref := r.Ref()
	app := drift.Object{"apiVersion": s.Application["apiVersion"], "kind": "Application",
		"metadata": map[string]any{"name": drift.Str(s.Application, "metadata", "name"), "namespace": drift.Str(s.Application, "metadata", "namespace")},
		"spec":     s.Application["spec"]}
	status := map[string]any{"sync": drift.Map(s.Application, "status", "sync")}
	for _, it := range drift.List(s.Application, "status", "resources") {
		m, _ := it.(map[string]any)
		if drift.Str(m, "kind") == ref.Kind && drift.Str(m, "group") == ref.Group && drift.Str(m, "name") == ref.Name && drift.Str(m, "namespace") == ref.Namespace {
			status["resources"] = []any{m}
		}
	}
	if op := drift.Map(s.Application, "status", "operationState"); op != nil {
		status["operationState"] = map[string]any{"phase": op["phase"], "finishedAt": op["finishedAt"]}
	}
	app["status"] = status
	out := &drift.Snapshot{Application: app, Resources: []drift.Resource{r}}
	for _, o := range s.Cluster {
		kind := drift.Str(o, "kind")
		switch {
		case kind == "ConfigMap" && drift.Str(o, "metadata", "name") == "argocd-cm":
			out.Cluster = append(out.Cluster, o)
		case kind == "CustomResourceDefinition" && drift.Str(o, "spec", "group") == ref.Group && drift.Str(o, "spec", "names", "kind") == ref.Kind:
			out.Cluster = append(out.Cluster, o)
		case kind == "Namespace" && drift.Str(o, "metadata", "name") == ref.Namespace:
			out.Cluster = append(out.Cluster, o)
		}
	}
	return out
}

func symmetricDifference(a, b []string) []string {
	in := map[string]int{}
	for _, p := range a {
		in[p] |= 1
	}
	for _, p := range b {
		in[p] |= 2
	}
	var out []string
	for p, v := range in {
		if v != 3 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func valueAt(o drift.Object, p drift.Pointer) string {
	if o == nil {
		return "(no object)"
	}
	v, ok := p.Get(o)
	if !ok {
		return "(absent)"
	}
	return drift.Brief(v, 80)
}

// savedClasses reads testdata/differential: the class each file shows (from
// its ground truth and driftfix's emulation) and the highest number in use.
func savedClasses(t *testing.T) (map[string]string, int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "differential", "*.json"))
	out := map[string]string{}
	next := 0
	for _, f := range files {
		base := filepath.Base(f)
		var n int
		if _, err := fmt.Sscanf(base, "%d-", &n); err == nil && n > next {
			next = n
		}
		s, err := drift.LoadSnapshot(f)
		if err != nil || len(s.Resources) != 1 {
			t.Fatalf("%s: %v", f, err)
		}
		argo, err := differingPaths(s)
		if err != nil {
			t.Fatal(err)
		}
		mine, err := differingPaths(s.WithoutArgoStates())
		if err != nil {
			t.Fatal(err)
		}
		out[disagreementClass(s.Resources[0].Ref(), argo[0], mine[0])] = base
	}
	return out, next
}

// differentialEdits are the changes made by hand after the sync.
var differentialEdits = []struct{ app, resource, typ, patch string }{
	{appWorkloads, "deployment/replicas-one", "merge", `{"spec":{"replicas":4}}`},
	{appWorkloads, "deployment/q0", "merge", `{"spec":{"replicas":3}}`},
	{appWorkloads, "deployment/ports-named", "strategic", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"registry.example.com/app:1.1-hotfix"}]}}}}`},
	{appWorkloads, "deployment/env-empty-value", "strategic", `{"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"B","value":"2"}]}]}}}}`},
	{appWorkloads, "deployment/tolerations", "json", `[{"op":"replace","path":"/spec/template/spec/tolerations/0/value","value":"db"}]`},
	{appWorkloads, "deployment/two-containers", "strategic", `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","resources":{"limits":{"memory":"2Gi"}}}]}}}}`},
	{appWorkloads, "deployment/annotations-template-empty", "merge", `{"metadata":{"annotations":{"note":"changed"}}}`},
	{appWorkloads, "deployment/q1", "merge", `{"metadata":{"labels":{"edited":"yes"}}}`},
	{appWorkloads, "deployment/probe-port-int", "json", `[{"op":"replace","path":"/spec/template/spec/containers/0/readinessProbe/periodSeconds","value":20}]`},
	{appWorkloads, "statefulset/sts-quantity", "json", `[{"op":"replace","path":"/spec/template/spec/containers/0/resources/limits/cpu","value":"2"}]`},
	{appWorkloads, "cronjob/cron-plain", "merge", `{"spec":{"schedule":"0 4 1 1 *"}}`},
	{appWorkloads, "daemonset/ds-quantity", "json", `[{"op":"replace","path":"/spec/template/spec/containers/0/resources/requests/memory","value":"200Mi"}]`},
	{appNetwork, "service/svc-multi", "json", `[{"op":"replace","path":"/spec/ports/1/targetPort","value":9443}]`},
	{appNetwork, "service/svc-nodeport-fixed", "json", `[{"op":"replace","path":"/spec/ports/0/nodePort","value":30081}]`},
	{appNetwork, "service/svc-port-only", "json", `[{"op":"add","path":"/spec/ports/-","value":{"name":"extra","port":8080}},{"op":"add","path":"/spec/ports/0/name","value":"http"}]`},
	{appNetwork, "networkpolicy/np-ports", "json", `[{"op":"replace","path":"/spec/ingress/0/ports/1/port","value":"https"}]`},
	{appNetwork, "ingress/ing-port-number", "json", `[{"op":"replace","path":"/spec/rules/0/host","value":"z.example.com"}]`},
	{appConfig, "configmap/cm-plain", "merge", `{"data":{"key":"changed"}}`},
	{appConfig, "configmap/cm-numbers", "merge", `{"data":{"added":"1"}}`},
	{appConfig, "secret/sec-data", "merge", `{"data":{"password":"Y2hhbmdlZA=="}}`},
	{appConfig, "horizontalpodautoscaler/hpa-min", "merge", `{"spec":{"minReplicas":2}}`},
	{appConfig, "poddisruptionbudget/pdb-min-int", "merge", `{"spec":{"minAvailable":2}}`},
	{appConfig, "serviceaccount/sa-automount-false", "merge", `{"automountServiceAccountToken":true}`},
	{appRBAC, "role/role-multi", "json", `[{"op":"replace","path":"/rules/1/verbs","value":["get"]}]`},
	{appCRs, "gadget/g-size-other", "merge", `{"spec":{"size":7}}`},
	{appCRs, "gadget/g-quantity-milli", "merge", `{"spec":{"limits":{"cpu":"1"}}}`},
	{appCRs, "gadget/g-items-defaults", "json", `[{"op":"replace","path":"/spec/items/1/weight","value":6}]`},
	{appCRs, "gadget/g-tags", "json", `[{"op":"replace","path":"/spec/tags","value":["a","b"]}]`},
	{appSSA, "deployment/q2", "merge", `{"spec":{"replicas":5}}`},
	{appSSA, "deployment/env-empty-value", "strategic", `{"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"B","value":"2"}]}]}}}}`},
	{appSSA, "service/svc-multi", "json", `[{"op":"replace","path":"/spec/ports/1/targetPort","value":9443}]`},
	{appSSA, "configmap/cm-plain", "merge", `{"data":{"key":"changed","added":"x"}}`},
	{appSSA, "gadget/g-size-other", "merge", `{"spec":{"size":7}}`},
	{appSSA, "statefulset/sts-quantity", "json", `[{"op":"replace","path":"/spec/template/spec/containers/0/resources/limits/cpu","value":"2"}]`},
}
