//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/driftfix/driftfix/bot/argocd"
	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/bot/kube"
	"github.com/driftfix/driftfix/docs"
)

var causesReport = flag.String("causes-report", "", "write the cause differential's agreement table to this file")

// A cause differential: every mechanism that makes a live field differ from
// Git is reproduced for real on the stack, on many resources at once (one
// Application per mechanism), and driftfix's cause for each differing field
// is compared with the cause known by construction.

// causeExpect is one resource's expected finding: the cause of the field at
// path ("*": of every finding on the resource, at least one), and optionally
// text its evidence must (and must not) contain.
type causeExpect struct {
	mech       string
	app        string
	ref        drift.Ref
	path       string
	cause      drift.Cause
	evidence   []string
	noEvidence string
	// settled, when set, is a path the live object Argo CD reports must
	// hold before the diagnosis counts: the mechanism's last write (an
	// operator's status after its spec write).
	settled string
}

// The mechanisms, by name as the report prints them.
const (
	mechWebhookAll      = "webhook, rule */*, namespace and object selectors"
	mechWebhookResource = "webhook, rule configmaps/*, object selector"
	mechWebhookNSOut    = "webhook */* excluded by its namespace selector (another webhook admits)"
	mechWebhookObjOut   = "webhook */* excluded by its object selector, kubectl edit"
	mechWebhookCEL      = "webhook with a matchCondition: admitted, or excluded by it (another webhook admits)"
	mechController      = "controller, client-go default manager (runs in a workload, writes status)"
	mechRevision        = "Deployment controller numbers a rollout a person started"
	mechCRDPrune        = "CRD schema prunes an undeclared field"
	mechCRDDefault      = "CRD schema defaults (Argo CD: Synced, no finding)"
	mechService         = "Service allocation where Git declares nodePort or clusterIP empty"
	mechHPA             = "HPA scales through /scale"
	mechTracking        = "second Application renders the same objects"
	mechSecondInstance  = "second Argo CD instance, an Application of the same name"
	mechManual          = "kubectl edit, label, scale, set image, apply --server-side"
	mechManualArgo      = "an edit through Argo CD's API (argocd app patch-resource)"
	mechClient          = "generated or generic client (OpenAPI-Generator, Go-http-client)"
	mechClientStatus    = "generated client that also writes status (a kopf-style operator)"
	mechPush            = "commit pushed, not yet compared, over a kubectl edit"
	mechDeleted         = "resource deleted by hand"
	mechRender          = "chart renders a random value, hard refresh"
	mechBroad           = "ignore rule for every ConfigMap's data hides kubectl edits"
)

var allMechanisms = []string{mechWebhookAll, mechWebhookResource, mechWebhookNSOut, mechWebhookObjOut, mechWebhookCEL, mechController, mechRevision, mechCRDPrune,
	mechCRDDefault, mechService, mechHPA, mechTracking, mechSecondInstance, mechManual, mechManualArgo, mechClient, mechClientStatus, mechPush, mechDeleted, mechRender, mechBroad}

// causeInSync expects no finding on the resource: Argo CD reports it Synced.
const causeInSync drift.Cause = "(none: Synced)"

const (
	czGroup       = "causes.example.com"
	czWebhookAddr = "127.0.0.1:9461"
	czOperatorEnv = "DRIFTFIX_E2E_OPERATOR_NS"
	czOperatorBin = "/usr/local/bin/widget-operator"
	// czSecondInstance is the namespace of the second Argo CD instance.
	czSecondInstance = "cz-argocd2"
)

// czCRDs: Gadgets are kept by an operator (status subresource); Widgets
// have a pruning schema and defaults inside list items.
const czCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.causes.example.com}
spec:
  group: causes.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              endpoint: {type: string}
              size: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.causes.example.com}
spec:
  group: causes.example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string}
              items:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    weight: {type: integer, default: 1}
              size: {type: integer, default: 3}
              opts:
                type: object
                default: {}
                properties:
                  level: {type: string, default: info}
`

// czApp is one Application of the differential and its files.
type czApp struct {
	name, ns string
	files    map[string]string
	opts     string // extra syncPolicy lines
	spec     string // extra spec lines
	noPrune  bool
	// instance is the namespace of the Argo CD instance whose Application
	// this is ("": the stack's own, argocd).
	instance string
}

// dir is the application's directory in the repository.
func (a czApp) dir() string {
	if a.instance != "" {
		return a.instance + "-" + a.name
	}
	return a.name
}

// argoNS is the namespace of the application's Argo CD instance.
func (a czApp) argoNS() string {
	if a.instance != "" {
		return a.instance
	}
	return "argocd"
}

// later is whether the application is created once the others synced.
func (a czApp) later() bool { return a.name == "cz-track-b" || a.instance != "" }

func czConfigMap(name, ns string, labels map[string]string, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if ns != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", ns)
	}
	writeMap(&b, "  labels", labels)
	writeMap(&b, "data", data)
	return b.String()
}

func writeMap(b *strings.Builder, key string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n", key)
	indent := strings.Repeat(" ", len(key)-len(strings.TrimLeft(key, " "))+2)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s%s: %q\n", indent, k, m[k])
	}
}

func czDeployment(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  replicas: %d
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s}
    spec:
      containers:
        - name: main
          image: registry.example.com/%s:1.0.0
          resources:
            requests: {cpu: 100m}
`, name, replicas, name, name, name)
}

func ref(kind, group, ns, name string) drift.Ref {
	return drift.Ref{Group: group, Kind: kind, Namespace: ns, Name: name}
}

// causeCases builds every Application's files and the expected findings.
func causeCases() ([]czApp, []causeExpect) {
	s := &causeSet{}
	s.webhookCases()
	s.controllerCases()
	s.normalizedCases()
	s.ownershipCases()
	s.manualCases()
	s.unplacedCases()
	s.renderAndIgnoreCases()
	return s.apps, s.exp
}

// causeSet gathers the Applications of the cause differential and the
// findings expected on them.
type causeSet struct {
	apps []czApp
	exp  []causeExpect
}

// add starts an Application with no files yet; the pointer stays valid for
// its files, which is all a case fills in.
func (s *causeSet) add(a czApp) *czApp {
	a.files = map[string]string{}
	s.apps = append(s.apps, a)
	return &s.apps[len(s.apps)-1]
}

// cmRef names a ConfigMap of the stack.
func cmRef(ns, name string) drift.Ref { return ref("ConfigMap", "", ns, name) }

// tierPath is the label the webhooks and people set over what Git declares.
const tierPath = "/metadata/labels/tier"

// webhookCases are the objects three mutating webhooks of the stack admit,
// and their look-alikes the webhooks leave alone.
func (s *causeSet) webhookCases() {
	// Webhooks: cz-all admits */* in namespaces labelled cz-wh=on and
	// objects labelled cz-mutate=all; cz-cm admits configmaps/* labelled
	// cz-mutate-cm=yes anywhere. Each sets the tier label Git declares.
	wh := s.add(czApp{name: "cz-webhook", ns: "cz-wh-on"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("all-cm-%02d", i)
		wh.files[n+".yaml"] = czConfigMap(n, "", map[string]string{"cz-mutate": "all", "tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechWebhookAll, app: wh.name, ref: cmRef("cz-wh-on", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-all"}, noEvidence: "cz-cm"})
	}
	for i := 0; i < 5; i++ {
		// A person also edits the data of these: one object, two causes.
		s.exp = append(s.exp, causeExpect{mech: mechWebhookAll, app: wh.name, ref: cmRef("cz-wh-on", fmt.Sprintf("all-cm-%02d", i)), path: "/data/key", cause: drift.CauseManualChange, evidence: []string{"kubectl edit"}})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("all-deploy-%02d", i)
		wh.files[n+".yaml"] = strings.Replace(czDeployment(n, 1), "  name: "+n+"\n", "  name: "+n+"\n  labels: {cz-mutate: all, tier: git}\n", 1)
		s.exp = append(s.exp, causeExpect{mech: mechWebhookAll, app: wh.name, ref: ref("Deployment", "apps", "cz-wh-on", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-all"}, noEvidence: "cz-cm"})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("all-sa-%02d", i)
		wh.files[n+".yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n  labels: {cz-mutate: all, tier: git}\n", n)
		s.exp = append(s.exp, causeExpect{mech: mechWebhookAll, app: wh.name, ref: ref("ServiceAccount", "", "cz-wh-on", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-all"}, noEvidence: "cz-cm"})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("cm-rule-%02d", i)
		wh.files[n+".yaml"] = czConfigMap(n, "", map[string]string{"cz-mutate-cm": "yes", "tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechWebhookResource, app: wh.name, ref: cmRef("cz-wh-on", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-cm"}, noEvidence: "cz-all"})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("ns-out-%02d", i)
		wh.files[n+".yaml"] = czConfigMap(n, "cz-wh-off", map[string]string{"cz-mutate": "all", "cz-mutate-cm": "yes", "tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechWebhookNSOut, app: wh.name, ref: cmRef("cz-wh-off", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-cm"}, noEvidence: "cz-all"})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("obj-out-%02d", i)
		wh.files[n+".yaml"] = czConfigMap(n, "", map[string]string{"cz-mutate": "none", "tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechWebhookObjOut, app: wh.name, ref: cmRef("cz-wh-on", n), path: tierPath, cause: drift.CauseManualChange, noEvidence: "cz-all"})
	}

	// cz-cel admits */* labelled cz-mutate-cel=yes, but its matchCondition
	// holds only for names starting cel-yes; the cel-no objects are
	// admitted by cz-cm instead.
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("cel-yes-%02d", i)
		wh.files[n+".yaml"] = czConfigMap(n, "", map[string]string{"cz-mutate-cel": "yes", "tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechWebhookCEL, app: wh.name, ref: cmRef("cz-wh-on", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-cel"}, noEvidence: "cz-cm"})
		n = fmt.Sprintf("cel-no-%02d", i)
		wh.files[n+".yaml"] = czConfigMap(n, "", map[string]string{"cz-mutate-cel": "yes", "cz-mutate-cm": "yes", "tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechWebhookCEL, app: wh.name, ref: cmRef("cz-wh-on", n), path: tierPath, cause: drift.CauseWebhookMutation, evidence: []string{"cz-cm"}, noEvidence: "cz-cel"})
	}
}

// controllerCases are the Gadgets an operator and other programs write.
func (s *causeSet) controllerCases() {
	// An operator: its Deployment runs widget-operator, which writes each
	// Gadget's endpoint and status with client-go's default field manager.
	ctl := s.add(czApp{name: "cz-ctrl", ns: "cz-ctrl"})
	ctl.files["operator.yaml"] = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: gadget-operator
spec:
  replicas: 1
  selector:
    matchLabels: {app: gadget-operator}
  template:
    metadata:
      labels: {app: gadget-operator}
    spec:
      containers:
        - name: manager
          image: registry.example.com/gadget-operator:0.4.0
          command: [` + czOperatorBin + `, --leader-elect]
`
	// Gadgets 00-04: widget-operator, which the operator's Deployment
	// runs, writes spec only; 05-09: it writes spec and status; 10-14:
	// gadget-sync, which no workload of the cluster runs, writes spec and
	// status; 15-19: a generated Python client (OpenAPI-Generator, as kopf
	// operators write) writes spec and status. Each is placed as a
	// controller by what Kubernetes shows, never by its name alone.
	const runs, status = "client-go names a program's writes after the base name", "also writes this object's status"
	for i := 0; i < 20; i++ {
		n := fmt.Sprintf("gadget-%02d", i)
		ctl.files[n+".yaml"] = fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata:\n  name: %s\nspec:\n  endpoint: pending\n  size: %d\n", czGroup, n, i+1)
		e := causeExpect{mech: mechController, app: ctl.name, ref: ref("Gadget", czGroup, "cz-ctrl", n), path: "/spec/endpoint", cause: drift.CauseControllerWrite}
		switch {
		case i < 5:
			e.evidence, e.noEvidence = []string{"widget-operator", runs}, status
		case i < 10:
			e.evidence, e.settled = []string{"widget-operator", runs, status}, "/status/phase"
		case i < 15:
			e.evidence, e.noEvidence, e.settled = []string{"gadget-sync", status}, runs, "/status/phase"
		default:
			e.mech, e.settled = mechClientStatus, "/status/phase"
			e.evidence, e.noEvidence = []string{"OpenAPI-Generator", status}, runs
		}
		s.exp = append(s.exp, e)
	}
}

// normalizedCases are the fields the API server prunes, defaults or
// allocates.
func (s *causeSet) normalizedCases() {
	// CRD pruning and defaults. Argo CD's three-way diff keeps what the
	// API server fills beneath what Git declares, list items of a custom
	// resource included, so it reports the defaulted Widgets Synced, and
	// driftfix must report nothing on them.
	crd := s.add(czApp{name: "cz-crd", ns: "cz-crd"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("pruned-%02d", i)
		crd.files[n+".yaml"] = fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: %s\nspec:\n  mode: fast\n  color: blue   # not in the schema\n", czGroup, n)
		s.exp = append(s.exp, causeExpect{mech: mechCRDPrune, app: crd.name, ref: ref("Widget", czGroup, "cz-crd", n), path: "/spec/color", cause: drift.CauseNormalized})
	}
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("defaulted-%02d", i)
		crd.files[n+".yaml"] = fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: %s\nspec:\n  mode: slow\n  size: null\n  opts: {}\n  items:\n    - name: a\n", czGroup, n)
		s.exp = append(s.exp, causeExpect{mech: mechCRDDefault, app: crd.name, ref: ref("Widget", czGroup, "cz-crd", n), path: "*", cause: causeInSync})
	}

	// Services whose chart renders the allocated fields empty (null, "" or
	// 0), applied client-side: last-applied-configuration keeps the empty
	// value, so Argo CD's three-way diff counts what the allocators filled.
	svc := s.add(czApp{name: "cz-svc", ns: "cz-svc"})
	svcCases := []struct{ name, spec, path string }{
		{"nodeport-null", "  type: NodePort\n", "/spec/ports/0/nodePort"},
		{"nodeport-zero", "  type: NodePort\n", "/spec/ports/0/nodePort"},
		{"clusterip-null", "  clusterIP: null\n", "/spec/clusterIP"},
		{"clusterip-empty", "  clusterIP: \"\"\n", "/spec/clusterIP"},
	}
	for _, c := range svcCases {
		for i := 0; i < 3; i++ {
			n := fmt.Sprintf("%s-%02d", c.name, i)
			port := ""
			switch c.name {
			case "nodeport-null":
				port = "      nodePort: null\n"
			case "nodeport-zero":
				port = "      nodePort: 0\n"
			}
			svc.files[n+".yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\nspec:\n%s  selector: {app: %s}\n  ports:\n    - name: http\n      port: 80\n      targetPort: 8080\n%s", n, c.spec, n, port)
			s.exp = append(s.exp, causeExpect{mech: mechService, app: svc.name, ref: ref("Service", "", "cz-svc", n), path: c.path, cause: drift.CauseNormalized, evidence: []string{"allocat"}})
		}
	}
}

// ownershipCases are the fields another owner holds: an HPA, a second
// Application, a second Argo CD instance.
func (s *causeSet) ownershipCases() {
	// HPAs in the same application as their Deployments.
	hpa := s.add(czApp{name: "cz-hpa", ns: "cz-hpa"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("scaled-%02d", i)
		hpa.files[n+".yaml"] = czDeployment(n, 1) + fmt.Sprintf(`---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %s}
  minReplicas: 2
  maxReplicas: 3
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
`, n, n)
		s.exp = append(s.exp, causeExpect{mech: mechHPA, app: hpa.name, ref: ref("Deployment", "apps", "cz-hpa", n), path: "/spec/replicas", cause: drift.CauseHPAReplicas, evidence: []string{"HorizontalPodAutoscaler cz-hpa/" + n}})
	}

	// Two Applications render the same ConfigMaps; the second sync takes
	// them over, and the first is diagnosed.
	ta := s.add(czApp{name: "cz-track-a", ns: "cz-track"})
	tb := s.add(czApp{name: "cz-track-b", ns: "cz-track"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("shared-%02d", i)
		ta.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"owner": "team-a"})
		tb.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"owner": "team-b"})
		s.exp = append(s.exp, causeExpect{mech: mechTracking, app: ta.name, ref: cmRef("cz-track", n), path: "*", cause: drift.CauseTrackingClash, evidence: []string{"cz-track-b"}})
	}

	// A second Argo CD instance (its own controller, watching namespace
	// cz-argocd2, which manages namespace cz-dual2) has an Application named
	// like one of this instance: both write the same tracking id, and this
	// instance counts the other's objects as its own. Neither prunes.
	d1 := s.add(czApp{name: "cz-dual", ns: "cz-dual", noPrune: true})
	d2 := s.add(czApp{name: "cz-dual", ns: "cz-dual2", noPrune: true, instance: czSecondInstance})
	for i := 0; i < 3; i++ {
		n := fmt.Sprintf("mine-%02d", i)
		d1.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"instance": "first"})
	}
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("theirs-%02d", i)
		d2.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"instance": "second"})
		s.exp = append(s.exp, causeExpect{mech: mechSecondInstance, app: d1.name, ref: cmRef("cz-dual2", n), path: "", cause: drift.CauseTrackingClash, evidence: []string{"two instances track the same object", czSecondInstance}})
	}
}

// manualCases are the changes people make by hand with kubectl and argocd.
func (s *causeSet) manualCases() {
	// Changes made by hand.
	man := s.add(czApp{name: "cz-manual", ns: "cz-manual"})
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("edited-%02d", i)
		man.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "edit-me"})
		s.exp = append(s.exp, causeExpect{mech: mechManual, app: man.name, ref: cmRef("cz-manual", n), path: "/data/key", cause: drift.CauseManualChange, evidence: []string{"kubectl edit"}})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("labelled-%02d", i)
		man.files[n+".yaml"] = czConfigMap(n, "", map[string]string{"tier": "git"}, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechManual, app: man.name, ref: cmRef("cz-manual", n), path: tierPath, cause: drift.CauseManualChange, evidence: []string{"kubectl label"}})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("scaled-%02d", i)
		man.files[n+".yaml"] = czDeployment(n, 1)
		r := ref("Deployment", "apps", "cz-manual", n)
		s.exp = append(s.exp, causeExpect{mech: mechManual, app: man.name, ref: r, path: "/spec/replicas", cause: drift.CauseManualChange, evidence: []string{"kubectl scale"}},
			causeExpect{mech: mechManual, app: man.name, ref: r, path: "/spec/template/spec/containers/0/image", cause: drift.CauseManualChange, evidence: []string{"kubectl set"}})
	}

	// Deployments whose manifest keeps the revision annotation (copied from
	// kubectl get): a person's new image makes the Deployment controller
	// number a new rollout.
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("rolled-%02d", i)
		man.files[n+".yaml"] = strings.Replace(czDeployment(n, 1), "  name: "+n+"\n", "  name: "+n+"\n  annotations: {deployment.kubernetes.io/revision: \"1\"}\n", 1)
		r := ref("Deployment", "apps", "cz-manual", n)
		s.exp = append(s.exp, causeExpect{mech: mechRevision, app: man.name, ref: r, path: "/metadata/annotations/deployment.kubernetes.io~1revision", cause: drift.CauseControllerWrite, evidence: []string{"kube-controller-manager"}},
			causeExpect{mech: mechRevision, app: man.name, ref: r, path: "/spec/template/spec/containers/0/image", cause: drift.CauseManualChange, evidence: []string{"kubectl set"}})
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("ssa-%02d", i)
		man.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechManual, app: man.name, ref: cmRef("cz-manual", n), path: "/data/key", cause: drift.CauseManualChange, evidence: []string{"kubectl apply --server-side"}})
		n = fmt.Sprintf("in-argocd-%02d", i)
		man.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechManualArgo, app: man.name, ref: cmRef("cz-manual", n), path: "/data/key", cause: drift.CauseManualChange, evidence: []string{"argocd app patch-resource"}})
	}
}

// unplacedCases are the changes no workload of the cluster explains: a
// generic client library, an edit before a commit, deletions.
func (s *causeSet) unplacedCases() {
	// Generic client libraries: the manager is the library's default name,
	// which names no program, so nothing places the writer.
	cl := s.add(czApp{name: "cz-client", ns: "cz-client"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("scripted-%02d", i)
		cl.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechClient, app: cl.name, ref: cmRef("cz-client", n), path: "/data/key", cause: drift.CauseUnknown, evidence: []string{"hypotheses"}})
	}

	// A kubectl edit, then a commit Argo CD has not compared yet.
	push := s.add(czApp{name: "cz-push", ns: "cz-push"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("pushed-%02d", i)
		push.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "v1"})
		s.exp = append(s.exp, causeExpect{mech: mechPush, app: push.name, ref: cmRef("cz-push", n), path: "/data/key", cause: drift.CauseManualChange, evidence: []string{"kubectl edit"}})
	}

	// Resources deleted by hand: Kubernetes keeps no record of who, but
	// nothing else explains it (no TTL, owner or add-on label, no role of
	// the application may delete them) after the last sync applied them: a
	// person, by elimination (issue #45).
	del := s.add(czApp{name: "cz-deleted", ns: "cz-deleted"})
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("gone-%02d", i)
		del.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "v"})
		s.exp = append(s.exp, causeExpect{mech: mechDeleted, app: del.name, ref: cmRef("cz-deleted", n), path: "", cause: drift.CauseManualChange, evidence: []string{"no longer in the cluster", "ruled out"}})
	}
}

// renderAndIgnoreCases are a chart rendering random values and a rule
// that ignores too much.
func (s *causeSet) renderAndIgnoreCases() {
	// A chart that renders a random value: a hard refresh renders it anew.
	rnd := s.add(czApp{name: "cz-render", ns: "cz-render"})
	rnd.files["Chart.yaml"] = "apiVersion: v2\nname: salts\nversion: 0.1.0\n"
	rnd.files["values.yaml"] = "count: 5\n"
	rnd.files["templates/cm.yaml"] = "{{- range $i := until (int .Values.count) }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: salt-{{ $i }}\ndata:\n  salt: {{ randAlphaNum 16 | quote }}\n{{- end }}\n"
	for i := 0; i < 5; i++ {
		s.exp = append(s.exp, causeExpect{mech: mechRender, app: rnd.name, ref: cmRef("cz-render", fmt.Sprintf("salt-%d", i)), path: "/data/salt", cause: drift.CauseNondeterministicRender})
	}

	// A rule that ignores all data of every ConfigMap: Argo CD stays
	// Synced over the kubectl edits it hides, and driftfix names the rule.
	broad := s.add(czApp{name: "cz-broad", ns: "cz-broad", spec: "  ignoreDifferences: [{kind: ConfigMap, jsonPointers: [/data]}]\n"})
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("hidden-%02d", i)
		broad.files[n+".yaml"] = czConfigMap(n, "", nil, map[string]string{"key": "v"})
	}
	s.exp = append(s.exp, causeExpect{mech: mechBroad, app: broad.name, ref: ref("Application", "argoproj.io", "argocd", "cz-broad"), path: "/spec/ignoreDifferences/0", cause: drift.CauseBroadIgnore, evidence: []string{"all data"}})
}

// TestCauseDifferential reproduces each mechanism on the real stack and
// compares driftfix's cause for every differing field with the cause known
// by construction. It prints the agreement per cause and per mechanism, and
// fails when a cause is below 95%, a mechanism is absent or fewer than 100
// resources are compared:
//
//	ip netns exec driftfix-e2e go test -tags e2e -count=1 -run TestCauseDifferential -v ./e2e/ -causes-report causes.txt
func TestCauseDifferential(t *testing.T) {
	started := time.Now()
	s := newStack(t)
	apps, exp := causeCases()
	namespaces := []string{"cz-wh-off", czSecondInstance}
	for _, a := range apps {
		namespaces = append(namespaces, a.ns)
	}
	namespaces = uniq(namespaces)

	s.setUpCauseCluster(t, apps, namespaces)

	files := map[string]string{}
	for _, a := range apps {
		for f, c := range a.files {
			files[a.dir()+"/"+f] = c
		}
	}
	repo := newCzRepo(t, files)
	create := func(a czApp) {
		prune := "true"
		if a.noPrune {
			prune = "false"
		}
		s.kubectl(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: %s
spec:
  project: default
  source: {repoURL: %q, path: %s, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
%s  syncPolicy:
    automated: {prune: %s}
%s`, a.name, a.argoNS(), repo.url, a.dir(), a.ns, a.spec, prune, a.opts), "apply", "-f", "-")
	}
	var first, later []czApp
	for _, a := range apps {
		if a.later() {
			later = append(later, a)
		} else {
			first = append(first, a)
			create(a)
		}
	}
	s.waitCzSynced(t, first)
	t.Logf("%d Applications synced in %s", len(first), time.Since(started).Round(time.Second))
	for _, a := range later {
		create(a)
	}
	s.waitCzSynced(t, later)

	// The mechanisms that act after the sync.
	s.actAfterSync(t)
	kc := func(args ...string) { s.kubectl(t, "", args...) }

	// The pushed commit: once Argo CD has compared the kubectl edits, its
	// controller is told to skip the application, so that the commit pushed
	// next stays not compared while driftfix diagnoses.
	s.waitFor(t, "cz-push", func(a argocd.AppSummary) bool { return a.SyncStatus == "OutOfSync" }, "OutOfSync after the kubectl edits")
	s.waitManagedPaths(t, "cz-push", 10)
	kc("-n", "argocd", "annotate", "application", "cz-push", "argocd.argoproj.io/skip-reconcile=true", "--overwrite")
	time.Sleep(time.Second)
	head := repo.commit(t, czPushed(), "cz-push: key v2")

	// Diagnose each application until every expected resource shows, for
	// up to two minutes in all.
	found, findings, argoStatus := s.diagnoseCauses(t, exp, head)

	// Agreement per cause and per mechanism, over resources.
	perCause := map[drift.Cause]*causeTally{}
	perMech := map[string]*causeTally{}
	var bad []string
	resources := map[string]bool{}
	resAgree := map[string]bool{}
	for i, e := range exp {
		key := e.app + " " + e.ref.String()
		if !resources[key] {
			resAgree[key] = true
		}
		resources[key] = true
		ok, why := judge(e, found[i], findings[e.app], argoStatus[e.app][e.ref])
		if !ok {
			resAgree[key] = false
			bad = append(bad, fmt.Sprintf("%s %s %s: want %s; %s", e.app, e.ref, e.path, e.cause, why))
		}
		if perMech[e.mech] == nil {
			perMech[e.mech] = &causeTally{}
		}
		if perCause[e.cause] == nil {
			perCause[e.cause] = &causeTally{}
		}
		perCause[e.cause].total++
		perMech[e.mech].total++
		if ok {
			perCause[e.cause].agree++
			perMech[e.mech].agree++
		}
	}
	agreeRes := 0
	for _, v := range resAgree {
		if v {
			agreeRes++
		}
	}
	var rep strings.Builder
	fmt.Fprintf(&rep, "Cause differential on the real stack (Argo CD 3.6.1, kube-apiserver and kube-controller-manager 1.37.2), %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&rep, "%d resources in %d Applications, %d expected differing fields; resources agreeing: %d/%d (%.1f%%); run %s\n\n",
		len(resources), len(apps), len(exp), agreeRes, len(resources), pct(agreeRes, len(resources)), time.Since(started).Round(time.Second))
	fmt.Fprintf(&rep, "%-24s %8s %8s %7s\n", "CAUSE", "FIELDS", "AGREE", "%")
	var causes []string
	for c := range perCause {
		causes = append(causes, string(c))
	}
	sort.Strings(causes)
	for _, c := range causes {
		ta := perCause[drift.Cause(c)]
		fmt.Fprintf(&rep, "%-24s %8d %8d %6.1f%%\n", c, ta.total, ta.agree, pct(ta.agree, ta.total))
	}
	fmt.Fprintf(&rep, "\n%-84s %6s %6s\n", "MECHANISM", "FIELDS", "AGREE")
	for _, m := range allMechanisms {
		ta := perMech[m]
		if ta == nil {
			ta = &causeTally{}
		}
		fmt.Fprintf(&rep, "%-84s %6d %6d\n", m, ta.total, ta.agree)
	}
	if len(bad) > 0 {
		fmt.Fprintf(&rep, "\nDisagreements (%d):\n", len(bad))
		for _, b := range bad {
			fmt.Fprintf(&rep, "  %s\n", b)
		}
	}
	t.Log("\n" + rep.String())
	if *causesReport != "" {
		if err := os.WriteFile(*causesReport, []byte(rep.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	holdCauseFigures(t, causes, perCause, len(exp), len(resources), len(apps))
	for _, m := range allMechanisms {
		if perMech[m] == nil || perMech[m].total == 0 {
			t.Errorf("mechanism %q is absent", m)
		}
	}
	if len(resources) < 100 {
		t.Errorf("only %d resources; the cause differential needs at least 100", len(resources))
	}
}

// czPushed is the commit pushed to cz-push: key v2 in each ConfigMap.
func czPushed() map[string]string {
	pushed := map[string]string{}
	for i := 0; i < 10; i++ {
		pushed[fmt.Sprintf("cz-push/pushed-%02d.yaml", i)] = czConfigMap(fmt.Sprintf("pushed-%02d", i), "", nil, map[string]string{"key": "v2"})
	}
	return pushed
}

// causeTally counts fields and those driftfix agrees on.
type causeTally struct{ total, agree int }

// waitCzSynced waits up to 3 minutes for the first sync of each Application
// of list; one that fails or is late stops the test.
func (s *stack) waitCzSynced(t *testing.T, list []czApp) {
	deadline := time.Now().Add(3 * time.Minute)
	for _, a := range list {
		for {
			phase := s.kubectl(t, "", "-n", a.argoNS(), "get", "application", a.name, "-o", "jsonpath={.status.operationState.phase}")
			if phase == "Succeeded" {
				break
			}
			if phase == "Failed" || phase == "Error" || time.Now().After(deadline) {
				msg := s.kubectl(t, "", "-n", a.argoNS(), "get", "application", a.name, "-o", "jsonpath={.status.operationState.message}")
				t.Fatalf("Application %s/%s did not sync: phase %q: %s", a.argoNS(), a.name, phase, msg)
			}
			time.Sleep(time.Second)
		}
	}
}

// diagnoseCauses diagnoses each Application of exp, in order, until every
// expected resource shows, for up to two minutes in all: it returns the
// findings matching each expectation, each Application's findings and Argo
// CD's status of its resources. head is the commit pushed to cz-push, which
// Argo CD must not have compared yet.
func (s *stack) diagnoseCauses(t *testing.T, exp []causeExpect, head string) (found [][]drift.Finding, findings map[string][]drift.Finding, argoStatus map[string]map[drift.Ref]string) {
	byApp := map[string][]int{}
	var order []string
	for i, e := range exp {
		if byApp[e.app] == nil {
			order = append(order, e.app)
		}
		byApp[e.app] = append(byApp[e.app], i)
	}
	found = make([][]drift.Finding, len(exp))
	findings = map[string][]drift.Finding{}
	argoStatus = map[string]map[drift.Ref]string{}
	deadline := time.Now().Add(2 * time.Minute)
	for _, app := range order {
		for {
			rep := s.diagnoseWith(t, app, true)
			findings[app] = rep.Findings
			argoStatus[app] = drift.ArgoStatuses(s.last.Application)
			missing := 0
			for _, i := range byApp[app] {
				found[i] = matchFindings(rep.Findings, exp[i])
				if len(found[i]) == 0 && exp[i].cause != causeInSync || !liveHolds(s.last, exp[i]) {
					missing++
				}
			}
			if missing == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(3 * time.Second)
		}
		if (app == "cz-push" || app == "cz-deleted") && len(s.last.Renders) == 0 {
			t.Errorf("%s: the snapshot has no further renders, so the nondeterministic-render check was not exercised", app)
		}
		if app == "cz-push" {
			compared := drift.Str(s.last.Application, "status", "sync", "revision")
			if compared == head {
				t.Errorf("Argo CD compared the pushed commit %s before driftfix diagnosed: the not-yet-compared window was not tested", head)
			}
		}
	}
	return found, findings, argoStatus
}

// holdCauseFigures holds the figures the docs state as floors
// (docs/figures.yaml, "causes"): the agreement per cause, on the fields and
// resources it is measured on, fields of expFields, resources and
// applications in all; a cause measured without a stated figure, or stated
// and not measured, is an error.
func holdCauseFigures(t *testing.T, causes []string, perCause map[drift.Cause]*causeTally, expFields, resources, apps int) {
	agreeFields := 0
	for _, c := range causes {
		ta := perCause[drift.Cause(c)]
		agreeFields += ta.agree
		key := c
		if drift.Cause(c) == causeInSync {
			key = "none"
		}
		if _, _, err := docs.Stated("causes", "agree-pct/"+key); err != nil {
			t.Errorf("cause %s is measured and the docs state no figure for it: %v", c, err)
			continue
		}
		docs.Hold(t, "causes", "agree-pct/"+key, pct(ta.agree, ta.total))
		docs.Hold(t, "causes", "fields/"+key, float64(ta.total))
	}
	fs, err := docs.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs.Figures {
		for k := range f.Values {
			c, ok := strings.CutPrefix(k, "agree-pct/")
			if f.Name != "causes" || !ok {
				continue
			}
			if c == "none" {
				c = string(causeInSync)
			}
			if perCause[drift.Cause(c)] == nil {
				t.Errorf("the docs state the agreement on cause %s, which this run did not measure", c)
			}
		}
	}
	docs.Hold(t, "causes", "agree-pct", pct(agreeFields, expFields))
	docs.Hold(t, "causes", "fields", float64(expFields))
	docs.Hold(t, "causes", "resources", float64(resources))
	docs.Hold(t, "causes", "applications", float64(apps))
}

// setUpCauseCluster cleans up what an earlier run left of apps and
// namespaces (and does again when the test ends), then sets up the cluster
// side: the CRDs, the namespaces, the second Argo CD instance and the
// mutating webhooks.
func (s *stack) setUpCauseCluster(t *testing.T, apps []czApp, namespaces []string) {
	for _, a := range apps {
		if a.instance == "" {
			s.kubectl(t, "", "-n", "argocd", "delete", "application", a.name, "--ignore-not-found", "--timeout=120s")
		}
	}
	s.kubectl(t, "", append([]string{"delete", "namespace", "--ignore-not-found", "--timeout=120s"}, namespaces...)...)
	s.kubectl(t, "", "delete", "mutatingwebhookconfiguration", "cz-all", "cz-cm", "cz-cel", "--ignore-not-found")
	t.Cleanup(func() {
		for _, a := range apps {
			s.kubectl(t, "", "-n", a.argoNS(), "delete", "application", a.name, "--ignore-not-found", "--timeout=180s")
		}
		s.kubectl(t, "", "delete", "mutatingwebhookconfiguration", "cz-all", "cz-cm", "cz-cel", "--ignore-not-found")
		s.kubectl(t, "", append([]string{"delete", "namespace", "--ignore-not-found", "--timeout=180s"}, namespaces...)...)
		s.kubectl(t, "", "delete", "crd", "gadgets."+czGroup, "widgets."+czGroup, "--ignore-not-found")
	})
	s.kubectl(t, czCRDs, "apply", "-f", "-")
	s.waitEstablished(t, "gadgets."+czGroup)
	s.waitEstablished(t, "widgets."+czGroup)
	for _, ns := range namespaces {
		if ns != czSecondInstance {
			s.kubectl(t, "", "create", "namespace", ns)
		}
	}
	s.kubectl(t, "", "label", "namespace", "cz-wh-on", "cz-wh=on")
	s.secondInstance(t, czSecondInstance, 6380, 8092)
	s.kubectl(t, "", "label", "namespace", "cz-dual2", "argocd.argoproj.io/managed-by="+czSecondInstance)
	startLabelWebhook(t, s, czWebhookAddr)
	s.kubectl(t, czWebhookConfigs(s.caBundle(t)), "apply", "-f", "-")
}

// actAfterSync reproduces the mechanisms that act after the sync: kubectl
// and Argo CD edits, scaling, deletions, client libraries and operators.
func (s *stack) actAfterSync(t *testing.T) {
	kc := func(args ...string) { s.kubectl(t, "", args...) }
	for i := 0; i < 5; i++ {
		kc("-n", "cz-wh-on", "patch", "configmap", fmt.Sprintf("obj-out-%02d", i), "--field-manager=kubectl-edit", "--type=merge", "-p", `{"metadata":{"labels":{"tier":"hand"}}}`)
		s.kubectlEdit(t, "cz-manual", "configmap/"+fmt.Sprintf("edited-%02d", i), "edit-me", "edited-by-hand")
		kc("-n", "cz-wh-on", "patch", "configmap", fmt.Sprintf("all-cm-%02d", i), "--field-manager=kubectl-edit", "--type=merge", "-p", `{"data":{"key":"hand"}}`)
		if i < 3 { // a person scales against the HPA, which takes it back
			kc("-n", "cz-hpa", "scale", "deployment", fmt.Sprintf("scaled-%02d", i), "--replicas=5")
		}
		kc("-n", "cz-manual", "label", "configmap", fmt.Sprintf("labelled-%02d", i), "tier=hand", "--overwrite")
		kc("-n", "cz-manual", "scale", "deployment", fmt.Sprintf("scaled-%02d", i), "--replicas=3")
		kc("-n", "cz-manual", "set", "image", "deployment/"+fmt.Sprintf("scaled-%02d", i), fmt.Sprintf("main=registry.example.com/scaled-%02d:1.0.1-hotfix", i))
		kc("-n", "cz-manual", "set", "image", "deployment/"+fmt.Sprintf("rolled-%02d", i), fmt.Sprintf("main=registry.example.com/rolled-%02d:1.0.1-hotfix", i))
	}
	for i := 0; i < 10; i++ {
		kc("-n", "cz-push", "patch", "configmap", fmt.Sprintf("pushed-%02d", i), "--field-manager=kubectl-edit", "--type=merge", "-p", `{"data":{"key":"hand"}}`)
		kc("-n", "cz-deleted", "delete", "configmap", fmt.Sprintf("gone-%02d", i))
	}
	for i := 0; i < 5; i++ {
		n := fmt.Sprintf("ssa-%02d", i)
		s.kubectl(t, czConfigMap(n, "cz-manual", nil, map[string]string{"key": "applied-by-hand"}), "apply", "--server-side", "--force-conflicts", "-f", "-")
		s.argocdCLI(t, "app", "patch-resource", "cz-manual", "--kind", "ConfigMap", "--resource-name", fmt.Sprintf("in-argocd-%02d", i),
			"--namespace", "cz-manual", "--patch-type", "application/merge-patch+json", "--patch", `{"data":{"key":"edited-in-argocd"}}`)
	}
	for i := 0; i < 5; i++ {
		kc("-n", "cz-broad", "patch", "configmap", fmt.Sprintf("hidden-%02d", i), "--field-manager=kubectl-edit", "--type=merge", "-p", `{"data":{"key":"hidden-edit"}}`)
	}
	kc("-n", "argocd", "annotate", "application", "cz-render", "argocd.argoproj.io/refresh=hard", "--overwrite")
	raw := newRawClient(t, s)
	for i := 0; i < 10; i++ {
		ua := ""
		if i >= 5 {
			ua = openAPIGeneratorUA
		}
		raw.patch(t, fmt.Sprintf("/api/v1/namespaces/cz-client/configmaps/scripted-%02d", i), ua, `{"data":{"key":"scripted"}}`)
	}
	runOperator(t, czOperatorBin, "cz-ctrl", 0, 4, false)
	runOperator(t, czOperatorBin, "cz-ctrl", 5, 9, true)
	runOperator(t, "/opt/sync/bin/gadget-sync", "cz-ctrl", 10, 14, true)
	for i := 15; i < 20; i++ {
		gadget := fmt.Sprintf("/apis/%s/v1/namespaces/cz-ctrl/gadgets/gadget-%02d", czGroup, i)
		raw.patch(t, gadget, openAPIGeneratorUA, fmt.Sprintf(`{"spec":{"endpoint":"http://gadget-%02d.cz-ctrl.svc:8080"}}`, i))
		raw.patch(t, gadget+"/status", openAPIGeneratorUA, `{"status":{"phase":"Ready"}}`)
	}
}

// liveHolds reports whether the live object of e's resource in the snapshot
// holds e's settled path (true when e names none).
func liveHolds(snap *drift.Snapshot, e causeExpect) bool {
	if e.settled == "" {
		return true
	}
	p := drift.MustPointer(e.settled)
	for _, r := range snap.Resources {
		if r.Live != nil && drift.RefOf(r.Live) == e.ref {
			_, ok := p.Get(r.Live)
			return ok
		}
	}
	return false
}

// matchFindings returns the findings on e's resource at e's path (every
// finding on the resource for "*").
func matchFindings(fs []drift.Finding, e causeExpect) []drift.Finding {
	var out []drift.Finding
	for _, f := range fs {
		if f.Resource != e.ref {
			continue
		}
		if e.path == "*" || f.Path.String() == e.path {
			out = append(out, f)
		}
	}
	return out
}

// judge decides whether driftfix agrees with one expectation: a finding at
// the path with the expected cause (every finding, for "*"), its evidence
// naming what it must, and no finding on the same resource naming another
// cause than the resource's expected ones.
func judge(e causeExpect, at, all []drift.Finding, argo string) (bool, string) {
	if e.cause == causeInSync {
		switch {
		case len(at) > 0:
			return false, fmt.Sprintf("Argo CD %s, driftfix %s at %s: %s", argo, at[0].Cause, at[0].Path, brief(drift.EvidenceText(at[0].Evidence, " | ")))
		case argo != "Synced":
			return false, fmt.Sprintf("Argo CD reports the resource %s, driftfix finds nothing", argo)
		}
		return true, ""
	}
	if len(at) == 0 {
		var other []string
		for _, f := range all {
			if f.Resource == e.ref {
				other = append(other, f.Path.String()+" "+string(f.Cause))
			}
		}
		return false, fmt.Sprintf("no finding (Argo CD: %s; on the resource: %q)", argo, other)
	}
	for _, f := range at {
		ev := drift.EvidenceText(f.Evidence, " | ")
		switch {
		case f.Cause != e.cause:
			return false, fmt.Sprintf("driftfix says %s at %s: %s", f.Cause, f.Path, brief(ev))
		case !containsAll(ev, e.evidence):
			return false, fmt.Sprintf("the evidence does not name all of %q: %s", e.evidence, brief(ev))
		case e.noEvidence != "" && strings.Contains(ev, e.noEvidence):
			return false, fmt.Sprintf("the evidence names %q: %s", e.noEvidence, brief(ev))
		}
	}
	return true, ""
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func brief(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// czWebhookConfigs are the mutating webhook configurations.
func czWebhookConfigs(caBundle string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: cz-all}
webhooks:
- name: all.causes.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig: {url: "https://%[1]s/all", caBundle: %[2]s}
  namespaceSelector: {matchLabels: {cz-wh: "on"}}
  objectSelector: {matchLabels: {cz-mutate: all}}
  rules:
  - {apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"], operations: ["CREATE", "UPDATE"]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: cz-cm}
webhooks:
- name: cm.causes.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig: {url: "https://%[1]s/cm", caBundle: %[2]s}
  objectSelector: {matchExpressions: [{key: cz-mutate-cm, operator: In, values: ["yes"]}]}
  rules:
  - {apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps/*"], operations: ["CREATE", "UPDATE"]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: cz-cel}
webhooks:
- name: cel.causes.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig: {url: "https://%[1]s/cel", caBundle: %[2]s}
  objectSelector: {matchLabels: {cz-mutate-cel: "yes"}}
  matchConditions:
  - {name: only-cel-yes, expression: "object.metadata.name.startsWith('cel-yes')"}
  rules:
  - {apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"], operations: ["CREATE", "UPDATE"]}
`, czWebhookAddr, caBundle)
}

// startLabelWebhook serves a mutating webhook that sets the tier label of
// whatever it admits: to wh-all on /all, wh-cm on /cm, wh-cel on /cel.
func startLabelWebhook(t *testing.T, s *stack, addr string) {
	t.Helper()
	mux := http.NewServeMux()
	handle := func(tier string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var in struct {
				Request struct {
					UID    string         `json:"uid"`
					Object map[string]any `json:"object"`
				} `json:"request"`
			}
			if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var ops []map[string]any
			if drift.Map(in.Request.Object, "metadata", "labels") == nil {
				ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]any{}})
			}
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/tier", "value": tier})
			p, _ := json.Marshal(ops)
			out, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
				"response": map[string]any{"uid": in.Request.UID, "allowed": true, "patchType": "JSONPatch", "patch": base64.StdEncoding.EncodeToString(p)}})
			w.Header().Set("Content-Type", "application/json")
			w.Write(out)
		}
	}
	mux.HandleFunc("/all", handle("wh-all"))
	mux.HandleFunc("/cm", handle("wh-cm"))
	mux.HandleFunc("/cel", handle("wh-cel"))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	pki := filepath.Join(s.root, "run", "pki")
	go func() {
		if err := srv.ServeTLS(ln, filepath.Join(pki, "webhook.crt"), filepath.Join(pki, "webhook.key")); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("webhook: %v", err)
		}
	}()
	t.Cleanup(func() { srv.Close() })
}

// kubectlEdit runs a real kubectl edit of resource in ns, its editor a sed
// that replaces from with to.
func (s *stack) kubectlEdit(t *testing.T, ns, resource, from, to string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.root, "bin", "kubectl"), "--kubeconfig", s.kubeconfig, "-n", ns, "edit", resource)
	cmd.Env = append(os.Environ(), fmt.Sprintf("KUBE_EDITOR=sed -i s/%s/%s/", from, to))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl edit %s: %v\n%s", resource, err, out)
	}
}

// argocdCLI runs the argocd CLI as the admin, as a person at a terminal.
func (s *stack) argocdCLI(t *testing.T, args ...string) string {
	t.Helper()
	session, err := os.ReadFile(filepath.Join(s.root, "run", "argocd-admin-session"))
	if err != nil {
		t.Fatalf("the stack has no admin session: %v", err)
	}
	cmd := exec.Command(filepath.Join(s.root, "bin", "argocd"), append(args, "--server", strings.TrimPrefix(argoURL, "http://"), "--plaintext", "--auth-token", strings.TrimSpace(string(session)))...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("argocd %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// rawClient is an HTTP client of the API server with the admin's
// certificate and no Kubernetes client library: the API server names the
// field manager of its writes after the User-Agent header.
type rawClient struct{ hc *http.Client }

func newRawClient(t *testing.T, s *stack) *rawClient {
	t.Helper()
	pki := filepath.Join(s.root, "run", "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &rawClient{hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}}}
}

// patch sends a JSON merge patch to path; an empty userAgent leaves Go's
// default (Go-http-client/1.1).
func (c *rawClient) patch(t *testing.T, path, userAgent, body string) {
	t.Helper()
	url := "https://127.0.0.1:6443" + path
	req, err := http.NewRequest(http.MethodPatch, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH %s: %s\n%s", url, resp.Status, out)
	}
}

// The Python client's generated user agent.
const openAPIGeneratorUA = "OpenAPI-Generator/33.1.0/python"

// runOperator runs this test binary again as the program at path (argv[0]),
// which writes the endpoint of Gadgets first..last in ns, and with status
// their status too, as an operator does, with client-go's default field
// manager: the base name of path.
func runOperator(t *testing.T, path, ns string, first, last int, status bool) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestCauseOperatorProcess$", "-test.count=1")
	cmd.Args[0] = path
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d:%d:%t", czOperatorEnv, ns, first, last, status))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, out.String())
	}
}

// TestCauseOperatorProcess is the operator TestCauseDifferential runs: it
// does nothing unless started as one. With client-go's defaults (no field
// manager, no user agent set) the API server records its writes under the
// base name of os.Args[0].
func TestCauseOperatorProcess(t *testing.T) {
	arg := os.Getenv(czOperatorEnv)
	if arg == "" {
		t.Skip("run by TestCauseDifferential as an operator program")
	}
	var ns string
	var first, last int
	var status bool
	if _, err := fmt.Sscanf(strings.ReplaceAll(arg, ":", " "), "%s %d %d %t", &ns, &first, &last, &status); err != nil {
		t.Fatalf("%s=%q: %v", czOperatorEnv, arg, err)
	}
	s := newStack(t)
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: s.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	if rc.UserAgent != "" {
		t.Fatalf("the REST config sets a user agent (%q): the default field manager would not be client-go's", rc.UserAgent)
	}
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gadgets := dc.Resource(schema.GroupVersionResource{Group: czGroup, Version: "v1", Resource: "gadgets"}).Namespace(ns)
	for i := first; i <= last; i++ {
		name := fmt.Sprintf("gadget-%02d", i)
		spec := fmt.Sprintf(`{"spec":{"endpoint":"http://%s.%s.svc:8080"}}`, name, ns)
		if _, err := gadgets.Patch(ctx, name, types.MergePatchType, []byte(spec), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if !status {
			continue
		}
		if _, err := gadgets.Patch(ctx, name, types.MergePatchType, []byte(`{"status":{"phase":"Ready"}}`), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
}

// waitManagedPaths waits until Argo CD's managed-resources of app show at
// least n resources OutOfSync.
func (s *stack) waitManagedPaths(t *testing.T, app string, n int) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		raw := s.kubectl(t, "", "-n", "argocd", "get", "application", app, "-o", "jsonpath={.status.resources[*].status}")
		if strings.Count(raw, "OutOfSync") >= n {
			return
		}
	}
	t.Fatalf("Argo CD never reported %d resources of %s OutOfSync", n, app)
}

// czRepo is a Git repository served to Argo CD as file://, with its work
// tree kept for later commits.
type czRepo struct{ url, work, bare string }

func newCzRepo(t *testing.T, files map[string]string) *czRepo {
	t.Helper()
	dir := t.TempDir()
	r := &czRepo{work: filepath.Join(dir, "work"), bare: filepath.Join(dir, "repo.git")}
	r.url = "file://" + r.bare
	r.git(t, dir, "init", "-q", "-b", "main", r.work)
	r.commit(t, files, "cause differential")
	r.git(t, dir, "clone", "-q", "--bare", r.work, r.bare)
	return r
}

func (r *czRepo) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files into the work tree, commits them and, once the bare
// repository exists, pushes; it returns the new commit.
func (r *czRepo) commit(t *testing.T, files map[string]string, msg string) string {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(r.work, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.git(t, r.work, "add", ".")
	r.git(t, r.work, "commit", "-q", "-m", msg)
	if _, err := os.Stat(r.bare); err == nil {
		r.git(t, r.work, "push", "-q", r.bare, "main")
	}
	return r.git(t, r.work, "rev-parse", "HEAD")
}
