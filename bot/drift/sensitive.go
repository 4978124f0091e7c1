package drift

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// This file is driftfix's model of security-relevant paths: what no fix may
// change, delete or hide without a person. It is written once, as the table
// below; every stage asks Sensitivity, and Refuse is the one decision whether
// a fix may go ahead on a finding.

// mode says how much of the tree an entry claims.
type mode int

const (
	// subtree: the path and everything beneath it (an image, a securityContext, RBAC rules).
	subtree mode = iota
	// whole: the path itself as one item (a container, a volume), not each field
	// beneath it; what lies beneath is judged by its own entries.
	whole
)

// entry is one security-relevant path.
type entry struct {
	// scope lists the kinds ("group/Kind") the entry applies to; podScope places
	// a pod-spec entry under every kind that holds a pod template.
	scope []string
	// pattern is a pointer whose tokens match exactly, or any token ("*"), or a
	// token starting with a prefix ("prefix*").
	pattern Pointer
	mode    mode
	// Reason is the short category shown to users; what says what the path controls.
	reason, what string
	// hidden judges content at this entry when it exists only in live and a
	// rule would hide it as part of a larger item Git does not declare (an
	// injected sidecar): it returns what makes the content dangerous. Nil
	// means any content is dangerous.
	hidden func(v any) (string, bool)
	// allow names the one fix that may still touch the path, and when.
	allow *allowance
}

// allowance is a fix that cannot weaken what the entry protects.
type allowance struct {
	kind FixKind
	when func(f *Finding, target Object) bool
}

// The reasons shown to users.
const (
	ReasonPrivilege   = "privilege"
	ReasonImage       = "image"
	ReasonWhatRuns    = "what runs"
	ReasonHostAccess  = "host access"
	ReasonIdentity    = "identity"
	ReasonSecret      = "secret"
	ReasonRBAC        = "RBAC"
	ReasonAdmission   = "admission"
	ReasonAPI         = "API registration"
	ReasonNetwork     = "network exposure"
	ReasonPodSecurity = "pod security"
	ReasonPolicy      = "policy"
)

// podKinds are the built-in kinds that hold a pod spec, with where it is.
var podKinds = map[string]string{
	"/Pod":                   "/spec",
	"/PodTemplate":           "/template/spec",
	"/ReplicationController": "/spec/template/spec",
	"apps/Deployment":        "/spec/template/spec",
	"apps/StatefulSet":       "/spec/template/spec",
	"apps/DaemonSet":         "/spec/template/spec",
	"apps/ReplicaSet":        "/spec/template/spec",
	"batch/Job":              "/spec/template/spec",
	"batch/CronJob":          "/spec/jobTemplate/spec/template/spec",
	// custom resources with a pod template (Argo Rollouts, operators' workloads)
	customScope: "/spec/template/spec",
}

// anyCtr matches the three lists of containers a pod spec has.
const anyCtr = "containers|initContainers|ephemeralContainers"

// customScope stands for every kind outside the built-in API groups.
const customScope = "custom"

// podScope marks entries relative to a pod spec ("containers/*/image") or, for
// annotations, to the pod's metadata.
var podScope = []string{"pod"}

var (
	never = func(any) (string, bool) { return "", false }
	// isTrue: a boolean switched on.
	isTrue = func(v any) (string, bool) { return fmt.Sprint(v), v == true }
	// present: any value at all.
	present = func(v any) (string, bool) { return Brief(v, 60), !IsEmpty(v) }
)

var table = []entry{
	// Pod spec, under every kind with a pod template.
	{scope: podScope, pattern: p("containers/*"), mode: whole, reason: ReasonImage, what: "a container: the image and command it runs", hidden: never},
	{scope: podScope, pattern: p("initContainers/*"), mode: whole, reason: ReasonImage, what: "an init container: the image and command it runs", hidden: never},
	{scope: podScope, pattern: p("ephemeralContainers/*"), mode: whole, reason: ReasonImage, what: "an ephemeral debug container: the image and command it runs", hidden: never},
	{scope: podScope, pattern: p(anyCtr + "/*/image"), reason: ReasonImage, what: "the image a container runs", hidden: never},
	{scope: podScope, pattern: p(anyCtr + "/*/command"), reason: ReasonWhatRuns, what: "the command a container runs", hidden: never},
	{scope: podScope, pattern: p(anyCtr + "/*/args"), reason: ReasonWhatRuns, what: "the arguments of a container's command", hidden: never},
	{scope: podScope, pattern: p(anyCtr + "/*/env"), reason: ReasonWhatRuns, what: "a container's environment, such as preloaded libraries, proxies and secret references", hidden: readsSecretEnv},
	{scope: podScope, pattern: p(anyCtr + "/*/envFrom"), reason: ReasonWhatRuns, what: "the ConfigMaps and Secrets a container's environment comes from", hidden: readsSecretEnvFrom},
	{scope: podScope, pattern: p(anyCtr + "/*/securityContext"), reason: ReasonPrivilege, what: "a container's privileges, such as privileged, capabilities, runAsUser and seccomp", hidden: escalatesContainer},
	{scope: podScope, pattern: p(anyCtr + "/*/ports/*/hostPort"), reason: ReasonHostAccess, what: "a port opened on the node", hidden: present},
	{scope: podScope, pattern: p(anyCtr + "/*/ports/*/hostIP"), reason: ReasonHostAccess, what: "the node address a host port binds", hidden: present},
	{scope: podScope, pattern: p(anyCtr + "/*/volumeMounts/*/mountPropagation"), reason: ReasonHostAccess, what: "mount propagation between the container and the node", hidden: equals("Bidirectional")},
	{scope: podScope, pattern: p("securityContext"), reason: ReasonPrivilege, what: "the pod's privileges, such as runAsUser, fsGroup, sysctls and seccomp", hidden: escalatesPod},
	{scope: podScope, pattern: p("hostNetwork"), reason: ReasonHostAccess, what: "the node's network namespace", hidden: isTrue},
	{scope: podScope, pattern: p("hostPID"), reason: ReasonHostAccess, what: "the node's process namespace", hidden: isTrue},
	{scope: podScope, pattern: p("hostIPC"), reason: ReasonHostAccess, what: "the node's IPC namespace", hidden: isTrue},
	{scope: podScope, pattern: p("hostUsers"), reason: ReasonHostAccess, what: "whether the pod runs in the node's user namespace", hidden: func(v any) (string, bool) { return fmt.Sprint(v), v == false }},
	{scope: podScope, pattern: p("shareProcessNamespace"), reason: ReasonPrivilege, what: "whether containers see each other's processes", hidden: isTrue},
	{scope: podScope, pattern: p("runtimeClassName"), reason: ReasonPrivilege, what: "the container runtime sandbox the pod runs in", hidden: present},
	{scope: podScope, pattern: p("volumes"), mode: whole, reason: ReasonHostAccess, what: "the pod's volumes: host paths and Secrets it can mount", hidden: never},
	{scope: podScope, pattern: p("volumes/*"), mode: whole, reason: ReasonHostAccess, what: "a volume: a host path or a Secret the pod can mount", hidden: never},
	{scope: podScope, pattern: p("volumes/*/hostPath"), reason: ReasonHostAccess, what: "a directory of the node mounted into the pod", hidden: field("path")},
	{scope: podScope, pattern: p("volumes/*/secret"), reason: ReasonSecret, what: "a Secret mounted into the pod", hidden: field("secretName")},
	{scope: podScope, pattern: p("volumes/*/projected/sources/*/secret"), reason: ReasonSecret, what: "a Secret mounted into the pod", hidden: field("name")},
	{scope: podScope, pattern: p("imagePullSecrets"), reason: ReasonImage, what: "the registry credentials images are pulled with", hidden: never},
	{scope: podScope, pattern: p("serviceAccountName"), reason: ReasonIdentity, what: "the service account the pod acts as", hidden: present},
	{scope: podScope, pattern: p("serviceAccount"), reason: ReasonIdentity, what: "the service account the pod acts as", hidden: present},
	{scope: podScope, pattern: p("automountServiceAccountToken"), reason: ReasonIdentity, what: "whether the pod gets an API token", hidden: isTrue},
	{scope: podScope, pattern: p("volumes/*/persistentVolumeClaim"), reason: ReasonSecret, what: "the volume claim, and so the data, the pod mounts", hidden: field("claimName")},
	{scope: podScope, pattern: p("volumes/*/csi"), reason: ReasonSecret, what: "a CSI volume (secret stores mount through it)", hidden: present},
	{scope: podScope, pattern: p(anyCtr + "/*/volumeMounts"), reason: ReasonSecret, what: "what a container mounts: Secrets and the service-account token among them", hidden: mountsSecrets},
	{scope: podScope, pattern: p("nodeName"), reason: ReasonPlacement, what: "the node the pod is bound to", hidden: present},
	{scope: podScope, pattern: p("nodeSelector"), reason: ReasonPlacement, what: "the nodes the pod may run on", hidden: present},
	{scope: podScope, pattern: p("affinity"), reason: ReasonPlacement, what: "the nodes and neighbours the pod is placed by", hidden: present},
	{scope: podScope, pattern: p("tolerations"), reason: ReasonPlacement, what: "the tainted nodes (control plane, dedicated) the pod may run on", hidden: present},
	{scope: podScope, pattern: p("dnsConfig"), reason: ReasonNetwork, what: "the name servers and search domains the pod resolves with", hidden: present},
	{scope: podScope, pattern: p("dnsPolicy"), reason: ReasonNetwork, what: "where the pod resolves names", hidden: equals("Default")},
	{scope: podScope, pattern: p("hostAliases"), reason: ReasonNetwork, what: "host names the pod resolves to fixed addresses", hidden: present},
	{scope: podScope, pattern: p("@meta/labels"), reason: ReasonNetwork, what: "the pod's labels, which Services and NetworkPolicies select pods by", hidden: never},
	{scope: podScope, pattern: p("@meta/annotations/sidecar.istio.io~1inject"), reason: ReasonNetwork, what: "whether the mesh's sidecar (and its mTLS) is injected", hidden: equals("false")},
	{scope: podScope, pattern: p("@meta/annotations/container.apparmor.security.beta.kubernetes.io~1*"), reason: ReasonPrivilege, what: "a container's AppArmor profile", hidden: equals("unconfined")},
	{scope: podScope, pattern: p("@meta/annotations/container.seccomp.security.alpha.kubernetes.io~1*"), reason: ReasonPrivilege, what: "a container's seccomp profile", hidden: equals("unconfined")},
	{scope: podScope, pattern: p("@meta/annotations/seccomp.security.alpha.kubernetes.io~1pod"), reason: ReasonPrivilege, what: "the pod's seccomp profile", hidden: equals("unconfined")},

	// Secrets and service accounts.
	{scope: []string{"/Secret"}, pattern: p("/data"), reason: ReasonSecret, what: "Secret data",
		allow: &allowance{kind: FixPinHelmValue, when: func(*Finding, Object) bool { return true }}},
	{scope: []string{"/Secret"}, pattern: p("/stringData"), reason: ReasonSecret, what: "Secret data",
		allow: &allowance{kind: FixPinHelmValue, when: func(*Finding, Object) bool { return true }}},
	{scope: []string{"/Secret"}, pattern: p("/metadata/annotations/kubernetes.io~1service-account.name"), reason: ReasonIdentity, what: "the service account a token Secret is issued for"},
	{scope: []string{"/ServiceAccount"}, pattern: p("/secrets"), reason: ReasonSecret, what: "the Secrets a service account may use"},
	{scope: []string{"/ServiceAccount"}, pattern: p("/imagePullSecrets"), reason: ReasonImage, what: "the registry credentials of a service account's pods"},
	{scope: []string{"/ServiceAccount"}, pattern: p("/automountServiceAccountToken"), reason: ReasonIdentity, what: "whether pods of the service account get an API token"},

	// Namespaces: Pod Security admission.
	{scope: []string{"/Namespace"}, pattern: p("/metadata/labels/pod-security.kubernetes.io~1*"), reason: ReasonPodSecurity, what: "the Pod Security level enforced, audited or warned in the namespace"},

	// Network exposure.
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: p("/spec/ingress"), reason: ReasonNetwork, what: "which traffic may reach the selected pods"},
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: p("/spec/egress"), reason: ReasonNetwork, what: "which traffic the selected pods may send"},
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: p("/spec/podSelector"), reason: ReasonNetwork, what: "the pods the policy protects"},
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: p("/spec/policyTypes"), reason: ReasonNetwork, what: "whether ingress and egress are restricted"},
	// externalIPs capture traffic for any address cluster-wide (CVE-2020-8554);
	// loadBalancerSourceRanges is a load balancer's firewall; type and
	// externalName decide whether and where a Service is reachable.
	{scope: []string{"/Service"}, pattern: p("/spec/externalIPs"), reason: ReasonNetwork, what: "addresses whose traffic the Service captures"},
	{scope: []string{"/Service"}, pattern: p("/spec/loadBalancerSourceRanges"), reason: ReasonNetwork, what: "the clients a load balancer admits"},
	{scope: []string{"/Service"}, pattern: p("/spec/type"), reason: ReasonNetwork, what: "whether the Service is reachable from outside the cluster"},
	{scope: []string{"/Service"}, pattern: p("/spec/externalName"), reason: ReasonNetwork, what: "the host the Service's name resolves to"},
	{scope: []string{"/Service"}, pattern: p("/spec/selector"), reason: ReasonNetwork, what: "the pods the Service sends traffic to"},
	{scope: []string{"networking.k8s.io/Ingress"}, pattern: p("/metadata/annotations/nginx.ingress.kubernetes.io~1*"), reason: ReasonNetwork, what: "an ingress controller's access rules (source ranges, authentication, snippets)"},
	{scope: []string{"networking.k8s.io/Ingress"}, pattern: p("/spec/rules"), reason: ReasonNetwork, what: "the hosts and paths the Ingress exposes"},
	{scope: []string{"/Namespace"}, pattern: p("/metadata/labels/istio-injection"), reason: ReasonNetwork, what: "whether the mesh's sidecar (and its mTLS) is injected in the namespace"},
	{scope: []string{"/Namespace"}, pattern: p("/metadata/labels/istio.io~1rev"), reason: ReasonNetwork, what: "which mesh revision injects sidecars in the namespace"},
	{scope: []string{"/ResourceQuota", "/LimitRange"}, pattern: p("/spec"), reason: ReasonPolicy, what: "the resources a namespace may use"},

	// Policy, access and admission kinds of any API group: every field of
	// their spec decides what is allowed, denied, trusted or deployed.
	{scope: policyKinds, pattern: p("/spec"), reason: ReasonPolicy, what: "a policy, access or admission object: what it allows, denies, enforces or trusts"},
	{scope: []string{"argoproj.io/AppProject"}, pattern: p("/spec"), reason: ReasonPolicy, what: "an Argo CD project: where its applications may deploy from and to, and what"},
	{scope: []string{"argoproj.io/Application"}, pattern: p("/spec/project"), reason: ReasonPolicy, what: "the Argo CD project, and so the permissions, an application deploys with"},
	{scope: []string{"argoproj.io/Application"}, pattern: p("/spec/destination"), reason: ReasonPolicy, what: "the cluster and namespace an application deploys to"},
	{scope: []string{"argoproj.io/Application"}, pattern: p("/spec/source"), reason: ReasonImage, what: "the repository and revision an application deploys"},
	{scope: []string{"argoproj.io/Application"}, pattern: p("/spec/sources"), reason: ReasonImage, what: "the repositories and revisions an application deploys"},
	{scope: []string{"external-secrets.io/ExternalSecret"}, pattern: p("/spec/secretStoreRef"), reason: ReasonSecret, what: "the secret store an ExternalSecret reads from"},

	// Admission webhooks: which requests they see, what happens when they fail, and whom the API server calls and trusts.
	{scope: webhookKinds, pattern: p("/webhooks/*"), mode: whole, reason: ReasonAdmission, what: "an admission webhook"},
	{scope: webhookKinds, pattern: p("/webhooks/*/failurePolicy"), reason: ReasonAdmission, what: "whether requests pass when the webhook fails"},
	{scope: webhookKinds, pattern: p("/webhooks/*/namespaceSelector"), reason: ReasonAdmission, what: "the namespaces the webhook sees"},
	{scope: webhookKinds, pattern: p("/webhooks/*/objectSelector"), reason: ReasonAdmission, what: "the objects the webhook sees"},
	{scope: webhookKinds, pattern: p("/webhooks/*/rules"), reason: ReasonAdmission, what: "the requests the webhook sees"},
	{scope: webhookKinds, pattern: p("/webhooks/*/matchConditions"), reason: ReasonAdmission, what: "the requests the webhook sees"},
	{scope: webhookKinds, pattern: p("/webhooks/*/matchPolicy"), reason: ReasonAdmission, what: "whether requests through other API versions are seen"},
	{scope: webhookKinds, pattern: p("/webhooks/*/clientConfig/service"), reason: ReasonAdmission, what: "the service the API server sends requests to"},
	{scope: webhookKinds, pattern: p("/webhooks/*/clientConfig/url"), reason: ReasonAdmission, what: "the URL the API server sends requests to"},
	{scope: webhookKinds, pattern: p("/webhooks/*/clientConfig/caBundle"), reason: ReasonAdmission, what: "the CA the API server trusts for the webhook", allow: removeEmptyCA},
	{scope: []string{"admissionregistration.k8s.io/ValidatingAdmissionPolicy", "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
		"admissionregistration.k8s.io/MutatingAdmissionPolicy", "admissionregistration.k8s.io/MutatingAdmissionPolicyBinding"},
		pattern: p("/spec"), reason: ReasonAdmission, what: "an admission policy: what it checks or changes, where, and what happens on failure"},

	// API registration: conversion webhooks and aggregated APIs see every request for their API.
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: p("/spec/conversion/strategy"), reason: ReasonAPI, what: "whether a conversion webhook sees every object of the CRD"},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: p("/spec/conversion/webhook/clientConfig/service"), reason: ReasonAPI, what: "the conversion webhook's service"},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: p("/spec/conversion/webhook/clientConfig/url"), reason: ReasonAPI, what: "the conversion webhook's URL"},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: p("/spec/conversion/webhook/clientConfig/caBundle"), reason: ReasonAPI, what: "the CA the API server trusts for the conversion webhook", allow: removeEmptyCA},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: p("/spec/conversion/webhookClientConfig"), reason: ReasonAPI, what: "the conversion webhook of a v1beta1 CRD"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: p("/spec/insecureSkipTLSVerify"), reason: ReasonAPI, what: "whether the API server checks the aggregated API's certificate"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: p("/spec/caBundle"), reason: ReasonAPI, what: "the CA the API server trusts for the aggregated API", allow: removeEmptyCA},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: p("/spec/service"), reason: ReasonAPI, what: "the service that serves the aggregated API"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: p("/spec/group"), reason: ReasonAPI, what: "the API group the service serves"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: p("/spec/version"), reason: ReasonAPI, what: "the API version the service serves"},

	// RBAC.
	{scope: []string{"rbac.authorization.k8s.io/Role"}, pattern: p("/rules"), reason: ReasonRBAC, what: "what the role may do"},
	{scope: []string{"rbac.authorization.k8s.io/ClusterRole"}, pattern: p("/rules"), reason: ReasonRBAC, what: "what the role may do", allow: removeAggregatedRules},
	{scope: []string{"rbac.authorization.k8s.io/ClusterRole"}, pattern: p("/aggregationRule"), reason: ReasonRBAC, what: "the roles whose rules this role collects"},
	{scope: bindingKinds, pattern: p("/subjects"), reason: ReasonRBAC, what: "who the binding grants the role to"},
	{scope: bindingKinds, pattern: p("/roleRef"), reason: ReasonRBAC, what: "the role the binding grants"},
}

// ReasonPlacement is the category of node placement.
const ReasonPlacement = "node placement"

// policyKinds are the policy, access and admission kinds of any API group.
var policyKinds = []string{
	"security.istio.io/AuthorizationPolicy", "security.istio.io/PeerAuthentication", "security.istio.io/RequestAuthentication",
	"kyverno.io/ClusterPolicy", "kyverno.io/Policy", "kyverno.io/PolicyException",
	"templates.gatekeeper.sh/ConstraintTemplate", "mutations.gatekeeper.sh/Assign", "mutations.gatekeeper.sh/AssignMetadata", "mutations.gatekeeper.sh/ModifySet",
	"projectcalico.org/NetworkPolicy", "projectcalico.org/GlobalNetworkPolicy", "projectcalico.org/NetworkSet", "projectcalico.org/GlobalNetworkSet",
	"crd.projectcalico.org/NetworkPolicy", "crd.projectcalico.org/GlobalNetworkPolicy", "crd.projectcalico.org/NetworkSet", "crd.projectcalico.org/GlobalNetworkSet",
	"cilium.io/CiliumNetworkPolicy", "cilium.io/CiliumClusterwideNetworkPolicy",
	"policy.networking.k8s.io/AdminNetworkPolicy", "policy.networking.k8s.io/BaselineAdminNetworkPolicy",
	"cert-manager.io/Issuer", "cert-manager.io/ClusterIssuer",
	"external-secrets.io/SecretStore", "external-secrets.io/ClusterSecretStore",
	"security.openshift.io/SecurityContextConstraints",
	"policy.sigstore.dev/ClusterImagePolicy",
}

// policyGroups are API groups every kind of which is a policy.
var policyGroups = map[string]string{
	"constraints.gatekeeper.sh": "a Gatekeeper constraint: what it enforces, where, and whether it denies",
}

// namedObjects are objects whose name, not only kind, makes them sensitive:
// Argo CD's own settings.
var namedObjects = map[namedKey]struct {
	pattern Pointer
	what    string
}{
	{"", "ConfigMap", "argocd-cm"}:            {p("/data"), "Argo CD's settings: accounts, anonymous access, SSO, resource exclusions and ignore rules"},
	{"", "ConfigMap", "argocd-rbac-cm"}:       {p("/data"), "Argo CD's RBAC policy, its default role among them"},
	{"", "ConfigMap", "argocd-cmd-params-cm"}: {p("/data"), "Argo CD's server and controller parameters"},
}

// namedKey is an object's group, kind and name.
type namedKey struct{ group, kind, name string }

var (
	webhookKinds = []string{"admissionregistration.k8s.io/MutatingWebhookConfiguration", "admissionregistration.k8s.io/ValidatingWebhookConfiguration"}
	bindingKinds = []string{"rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding"}
)

// removeEmptyCA: Git declaring caBundle "" asserts no CA of its own (an
// injector such as cert-manager's cainjector fills it); removing the empty value
// stops every sync from blanking the bundle and changes nothing Git asserts.
// A caBundle Git declares with a value is the trust anchor and is never removed.
var removeEmptyCA = &allowance{kind: FixRemoveField, when: func(f *Finding, _ Object) bool {
	return f.InGit && IsEmpty(f.Git)
}}

// removeAggregatedRules: the rules of a ClusterRole with an aggregationRule are
// computed by the aggregation controller from the roles it selects; Git's own
// rules are overwritten anyway, so removing them (the aggregationRule stays in
// Git) changes no permission.
var removeAggregatedRules = &allowance{kind: FixRemoveField, when: func(_ *Finding, target Object) bool {
	return !IsEmpty(Lookup(target, "aggregationRule"))
}}

// builtinGroups are the API groups of Kubernetes itself; any other group is a
// custom resource, judged by field names (see customNames).
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "networking.k8s.io": true,
	"rbac.authorization.k8s.io": true, "admissionregistration.k8s.io": true, "apiextensions.k8s.io": true,
	"apiregistration.k8s.io": true, "storage.k8s.io": true, "scheduling.k8s.io": true, "coordination.k8s.io": true,
	"discovery.k8s.io": true, "node.k8s.io": true, "certificates.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
	"resource.k8s.io": true, "events.k8s.io": true,
}

// customNames are field names that are sensitive anywhere under a custom
// resource's spec: an operator usually runs what they name.
var customNames = map[string][2]string{
	"image":                        {ReasonImage, "an image an operator runs"},
	"images":                       {ReasonImage, "images an operator runs"},
	"imageName":                    {ReasonImage, "an image an operator runs"},
	"baseImage":                    {ReasonImage, "the base image an operator builds or runs"},
	"package":                      {ReasonImage, "a package (an image) an operator installs and runs"},
	"command":                      {ReasonWhatRuns, "a command an operator runs"},
	"args":                         {ReasonWhatRuns, "arguments of a command an operator runs"},
	"env":                          {ReasonWhatRuns, "the environment of what an operator runs"},
	"envFrom":                      {ReasonWhatRuns, "the ConfigMaps and Secrets an operator's workload reads its environment from"},
	"secretName":                   {ReasonSecret, "a Secret an operator mounts or reads"},
	"secretRef":                    {ReasonSecret, "a Secret an operator reads"},
	"secretKeyRef":                 {ReasonSecret, "a Secret key an operator reads"},
	"nodeName":                     {ReasonPlacement, "the node what an operator runs is bound to"},
	"nodeSelector":                 {ReasonPlacement, "the nodes what an operator runs may use"},
	"tolerations":                  {ReasonPlacement, "the tainted nodes what an operator runs may use"},
	"securityContext":              {ReasonPrivilege, "privileges of what an operator runs"},
	"capabilities":                 {ReasonPrivilege, "Linux capabilities of what an operator runs"},
	"privileged":                   {ReasonPrivilege, "a privileged container an operator runs"},
	"allowPrivilegeEscalation":     {ReasonPrivilege, "privilege escalation of what an operator runs"},
	"hostPath":                     {ReasonHostAccess, "a node directory an operator mounts"},
	"hostNetwork":                  {ReasonHostAccess, "the node's network namespace"},
	"hostPID":                      {ReasonHostAccess, "the node's process namespace"},
	"hostIPC":                      {ReasonHostAccess, "the node's IPC namespace"},
	"hostPort":                     {ReasonHostAccess, "a port opened on the node"},
	"serviceAccountName":           {ReasonIdentity, "the service account of what an operator runs"},
	"serviceAccount":               {ReasonIdentity, "the service account of what an operator runs"},
	"automountServiceAccountToken": {ReasonIdentity, "whether what an operator runs gets an API token"},
}

func p(s string) Pointer {
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return MustPointer(s)
}

// field judges a mount as dangerous whenever it is there, naming what it mounts.
func field(name string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		if s := Str(v, name); s != "" {
			return name + " " + s, true
		}
		return Brief(v, 60), v != nil
	}
}

func equals(want string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		s, _ := v.(string)
		return s, strings.EqualFold(s, want)
	}
}

// readsSecretEnv returns the Secret an injected container's environment
// reads (valueFrom.secretKeyRef): a sidecar that reads a Secret is never
// hidden.
func readsSecretEnv(v any) (string, bool) {
	for _, e := range List(v) {
		if ref := Map(e, "valueFrom", "secretKeyRef"); ref != nil {
			return fmt.Sprintf("env %s reads Secret %s key %s", Str(e, "name"), Str(ref, "name"), Str(ref, "key")), true
		}
	}
	return "", false
}

// readsSecretEnvFrom returns the Secret an injected container's environment
// is filled from.
func readsSecretEnvFrom(v any) (string, bool) {
	for _, e := range List(v) {
		if ref := Map(e, "secretRef"); ref != nil {
			return "envFrom reads Secret " + Str(ref, "name"), true
		}
	}
	return "", false
}

// mountsSecrets returns a mount of an injected container under
// /var/run/secrets, where the service-account token and, by convention,
// mounted Secrets live.
func mountsSecrets(v any) (string, bool) {
	for _, m := range List(v) {
		if p := Str(m, "mountPath"); strings.HasPrefix(p, "/var/run/secrets") || strings.HasPrefix(p, "/run/secrets") {
			return fmt.Sprintf("it mounts %s at %s", Str(m, "name"), p), true
		}
	}
	return "", false
}

// escalatesContainer returns what in a container securityContext grants more
// than a default container has.
func escalatesContainer(v any) (string, bool) {
	m, _ := v.(map[string]any)
	switch {
	case m["privileged"] == true:
		return "privileged: true", true
	case m["allowPrivilegeEscalation"] == true:
		return "allowPrivilegeEscalation: true", true
	case len(List(m, "capabilities", "add")) > 0:
		return "capabilities.add: " + joinList(List(m, "capabilities", "add")), true
	case Str(m, "procMount") == "Unmasked":
		return "procMount: Unmasked", true
	case Lookup(m, "windowsOptions", "hostProcess") == true:
		return "windowsOptions.hostProcess: true", true
	}
	return escalatesPod(v)
}

// escalatesPod returns what in a pod-level securityContext (the fields a
// container shares with it) weakens the pod's isolation.
func escalatesPod(v any) (string, bool) {
	m, _ := v.(map[string]any)
	if n, ok := Number(m["runAsUser"]); ok && n == 0 {
		return "runAsUser: 0 (root)", true
	}
	if n, ok := Number(m["runAsGroup"]); ok && n == 0 {
		return "runAsGroup: 0 (root)", true
	}
	switch {
	case m["runAsNonRoot"] == false:
		return "runAsNonRoot: false", true
	case strings.EqualFold(Str(m, "seccompProfile", "type"), "Unconfined"):
		return "seccompProfile: Unconfined", true
	case strings.EqualFold(Str(m, "appArmorProfile", "type"), "Unconfined"):
		return "appArmorProfile: Unconfined", true
	case Str(m, "seLinuxOptions", "type") == "spc_t":
		return "seLinuxOptions.type: spc_t", true
	case len(List(m, "sysctls")) > 0:
		return "sysctls: " + Brief(List(m, "sysctls")[0], 60), true
	}
	return "", false
}

func joinList(l []any) string {
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// SensitivePath is one entry of a policy's sensitivePaths: a path (pointer
// tokens, "*" for any list item or key) or a field name, optionally for one kind.
type SensitivePath struct {
	Group, Kind string // empty Kind: every kind; Group "*": any group
	Pattern     Pointer
	Field       string // a field name, sensitive wherever it appears
	Text        string // as written in the policy
}

var (
	kindRe  = regexp.MustCompile(`^(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?)/)?([A-Z][A-Za-z0-9]*)$`)
	fieldRe = regexp.MustCompile(`^[A-Za-z0-9_$@-]+$`)
)

// ParseSensitivePath reads a policy sensitivePaths entry: a JSON pointer
// ("/spec/template/spec/dnsConfig"), a dotted path
// ("spec.template.spec.containers[].env", "data.policy\.json"), a field name
// ("dnsConfig"), each optionally scoped to a kind ("Deployment:/spec/paused",
// "apps/Deployment:spec.paused"). "*" (or "[]" in a dotted path) matches any
// list item or key.
func ParseSensitivePath(s string) (SensitivePath, error) {
	sp := SensitivePath{Text: s, Group: "*"}
	rest := strings.TrimSpace(s)
	if rest == "" {
		return sp, fmt.Errorf("is empty; write a JSON pointer (/spec/template/spec/dnsConfig), a dotted path or a field name")
	}
	if i := strings.Index(rest, ":"); i >= 0 && !strings.HasPrefix(rest, "/") {
		kind := rest[:i]
		m := kindRe.FindStringSubmatch(kind)
		if m == nil {
			return sp, fmt.Errorf("%q is not a kind (write Kind or group/Kind, such as Deployment or apps/Deployment, before the colon)", kind)
		}
		if strings.Contains(kind, "/") {
			sp.Group = m[1]
		}
		sp.Kind = m[3]
		rest = rest[i+1:]
		if rest == "" {
			return sp, fmt.Errorf("names kind %s but no path after the colon", kind)
		}
	}
	switch {
	case strings.HasPrefix(rest, "/"):
		ptr, err := ParsePointer(rest)
		if err != nil {
			return sp, err
		}
		sp.Pattern = ptr
	case strings.ContainsAny(rest, ".[]\\"):
		ptr, err := parseDotted(rest)
		if err != nil {
			return sp, err
		}
		sp.Pattern = ptr
	default:
		if !fieldRe.MatchString(rest) {
			return sp, fmt.Errorf("%q is neither a JSON pointer (starting with /), a dotted path nor a field name", rest)
		}
		sp.Field = rest
		return sp, nil
	}
	for _, tok := range sp.Pattern {
		if tok == "" {
			return sp, fmt.Errorf("%q has an empty step; it must name a field", rest)
		}
	}
	return sp, nil
}

// parseDotted reads "spec.template.spec.containers[].env": dots separate
// fields, "\." is a dot inside a key, "[]", "[*]" or "[N]" step into a list.
func parseDotted(s string) (Pointer, error) {
	var out Pointer
	var cur strings.Builder
	flush := func(pos int) error {
		if cur.Len() == 0 {
			return fmt.Errorf("%q has an empty step at character %d", s, pos+1)
		}
		out = append(out, cur.String())
		cur.Reset()
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
		case c == '.':
			if i > 0 && s[i-1] == ']' {
				continue
			}
			if err := flush(i); err != nil {
				return nil, err
			}
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("%q has an unclosed [", s)
			}
			if cur.Len() > 0 {
				if err := flush(i); err != nil {
					return nil, err
				}
			}
			idx := s[i+1 : i+j]
			if idx == "" {
				idx = "*"
			}
			out = append(out, idx)
			i += j
		default:
			cur.WriteByte(c)
		}
	}
	if s[len(s)-1] != ']' {
		if err := flush(len(s) - 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Sensitivity is the safety model: the built-in table plus a policy's extra
// sensitivePaths, and the writers the policy names (who may keep which
// field). The zero value holds the built-in table and no writers.
type Sensitivity struct {
	Extra []SensitivePath
	// Writers are the policy's writers: its own controllers and people, and
	// the paths each controller legitimately owns. They come before the
	// built-in catalog.
	Writers []Writer
}

// Match is one security-relevant path and why it matters.
type Match struct {
	Path   Pointer // the sensitive path, as it appears in the object
	Reason string  // the category: privilege, image, RBAC, …
	What   string  // what the path controls
	entry  *entry
}

// String renders "/spec/…/image (image: the image a container runs)".
func (m Match) String() string {
	return fmt.Sprintf("%s (%s: %s)", m.Path, m.Reason, m.What)
}

// resolved is a table entry placed at an absolute pattern.
type resolved struct {
	pattern Pointer
	e       *entry
}

var (
	entriesMu    sync.Mutex
	entriesCache = map[[2]string][]resolved{}
)

// entriesFor returns the entries that apply to a kind; ref.Group "*" matches
// an entry of any group with that kind (for callers that only know the kind).
func entriesFor(ref Ref) []resolved {
	gk := [2]string{ref.Group, ref.Kind}
	entriesMu.Lock()
	defer entriesMu.Unlock()
	if r, ok := entriesCache[gk]; ok {
		return r
	}
	r := resolveEntries(ref)
	if len(entriesCache) < 4096 {
		entriesCache[gk] = r
	}
	return r
}

func resolveEntries(ref Ref) []resolved {
	var out []resolved
	custom := !builtinGroups[ref.Group]
	anyGroup := ref.Group == "*"
	gk := ref.Group + "/" + ref.Kind
	known := knownKind(ref.Kind)
	for i := range table {
		e := &table[i]
		if len(e.scope) == 1 && e.scope[0] == podScope[0] {
			for kind, spec := range podKinds {
				// A custom resource named like a built-in kind (Kruise's
				// StatefulSet, Knative's Service) is judged as a custom
				// resource, never by the built-in kind's name.
				if !(kind == gk || (kind == customScope && custom && (!anyGroup || !known)) ||
					(anyGroup && kind != customScope && strings.SplitN(kind, "/", 2)[1] == ref.Kind)) {
					continue
				}
				base := MustPointer(spec)
				pat := e.pattern
				if pat[0] == "@meta" {
					base = append(append(Pointer{}, base[:len(base)-1]...), "metadata")
					pat = pat[1:]
				}
				out = append(out, resolved{pattern: append(append(Pointer{}, base...), pat...), e: e})
				break
			}
			continue
		}
		for _, s := range e.scope {
			if s == gk || (anyGroup && strings.SplitN(s, "/", 2)[1] == ref.Kind) {
				out = append(out, resolved{pattern: e.pattern, e: e})
				break
			}
		}
	}
	return out
}

// isCustom reports whether ref is a custom resource, judged by field names.
func isCustom(ref Ref) bool {
	if builtinGroups[ref.Group] {
		return false
	}
	if ref.Group != "*" {
		return true
	}
	return !knownKind(ref.Kind) && !builtinKinds[ref.Kind]
}

// builtinKinds are common built-in kinds the table has no entry for, so that
// a check by kind alone does not judge them as custom resources.
var builtinKinds = map[string]bool{
	"ConfigMap": true, "Endpoints": true, "EndpointSlice": true, "PersistentVolumeClaim": true, "PersistentVolume": true,
	"Ingress": true, "IngressClass": true, "HorizontalPodAutoscaler": true, "PodDisruptionBudget": true, "LimitRange": true,
	"ResourceQuota": true, "StorageClass": true, "Lease": true, "PriorityClass": true, "Event": true,
}

func knownKind(kind string) bool {
	for k := range podKinds {
		if k != customScope && strings.SplitN(k, "/", 2)[1] == kind {
			return true
		}
	}
	for _, e := range table {
		for _, s := range e.scope {
			if parts := strings.SplitN(s, "/", 2); len(parts) == 2 && parts[1] == kind {
				return true
			}
		}
	}
	return false
}

// tokenMatches matches one pointer token against a pattern token: "*" (any),
// "prefix*", or alternatives separated by "|".
func tokenMatches(pat, tok string) bool {
	for more := true; more; {
		var alt string
		alt, pat, more = strings.Cut(pat, "|")
		if strings.HasSuffix(alt, "*") && strings.HasPrefix(tok, alt[:len(alt)-1]) || alt == tok {
			return true
		}
	}
	return false
}

// prefixMatches reports whether pattern matches the first len(pattern) tokens of path.
func prefixMatches(pattern, path Pointer) bool {
	if len(path) < len(pattern) {
		return false
	}
	for i, t := range pattern {
		if !tokenMatches(t, path[i]) {
			return false
		}
	}
	return true
}

// Within returns the entry that path p is: equal to a whole-item entry, or
// at or beneath a subtree entry.
func (s Sensitivity) Within(ref Ref, p Pointer) (Match, bool) {
	if n, ok := namedObjects[namedKey{ref.Group, ref.Kind, ref.Name}]; ok && prefixMatches(n.pattern, p) {
		return Match{Path: p[:len(n.pattern)], Reason: ReasonPolicy, What: n.what}, true
	}
	if what, ok := policyGroups[ref.Group]; ok && len(p) > 0 && p[0] == "spec" {
		return Match{Path: p[:1], Reason: ReasonPolicy, What: what}, true
	}
	for _, r := range entriesFor(ref) {
		if !prefixMatches(r.pattern, p) {
			continue
		}
		if r.e.mode == whole && len(p) != len(r.pattern) {
			continue
		}
		return Match{Path: p[:len(r.pattern)], Reason: r.e.reason, What: r.e.what, entry: r.e}, true
	}
	if isCustom(ref) && len(p) > 0 && p[0] != "metadata" && p[0] != "status" {
		for i, tok := range p {
			if c, ok := customNames[tok]; ok {
				return Match{Path: p[:i+1], Reason: c[0], What: c[1]}, true
			}
		}
	}
	for i := range s.Extra {
		x := &s.Extra[i]
		if x.Kind != "" && (x.Kind != ref.Kind || (x.Group != "*" && ref.Group != "*" && x.Group != ref.Group)) {
			continue
		}
		what := "listed in the policy's sensitivePaths as " + x.Text
		if x.Field != "" {
			for j, tok := range p {
				if tok == x.Field {
					return Match{Path: p[:j+1], Reason: ReasonPolicy, What: what}, true
				}
			}
			continue
		}
		if prefixMatches(x.Pattern, p) {
			return Match{Path: p[:len(x.Pattern)], Reason: ReasonPolicy, What: what}, true
		}
	}
	return Match{}, false
}

// Beneath walks the value v found at p and calls visit for every sensitive path
// at p or beneath it that v holds, with its value, until visit returns false.
func (s Sensitivity) Beneath(ref Ref, p Pointer, v any, visit func(Match, any) bool) {
	s.beneath(ref, append(Pointer{}, p...), v, visit, 0)
}

func (s Sensitivity) beneath(ref Ref, at Pointer, v any, visit func(Match, any) bool, depth int) bool {
	if depth > 64 {
		return true
	}
	if m, ok := s.Within(ref, at); ok && len(m.Path) == len(at) {
		if !visit(m, v) {
			return false
		}
		if m.entry == nil || m.entry.mode == subtree {
			return true
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range SortedKeys(x) {
			if !s.beneath(ref, at.Child(k), x[k], visit, depth+1) {
				return false
			}
		}
	case []any:
		for i, e := range x {
			if !s.beneath(ref, at.Index(i), e, visit, depth+1) {
				return false
			}
		}
	}
	return true
}

// above returns an entry that lies beneath p, for a path with no content to judge.
func (s Sensitivity) above(ref Ref, p Pointer) (Match, bool) {
	for _, r := range entriesFor(ref) {
		if len(r.pattern) > len(p) && prefixMatches(r.pattern[:len(p)], p) {
			return Match{Path: r.pattern, Reason: r.e.reason, What: r.e.what, entry: r.e}, true
		}
	}
	return Match{}, false
}

// first returns the first sensitive path at or beneath p in v.
func (s Sensitivity) first(ref Ref, p Pointer, v any) (Match, bool) {
	var out Match
	found := false
	s.Beneath(ref, p, v, func(m Match, _ any) bool { out, found = m, true; return false })
	return out, found
}

// Check reports whether p is a sensitive path, or covers one that git (the
// desired object) declares at or beneath p, judging by kind alone. It returns
// the field and why it matters.
func (s Sensitivity) Check(kind string, p Pointer, git Object) (field Pointer, why string, ok bool) {
	return s.CheckRef(Ref{Group: "*", Kind: kind}, p, git)
}

// CheckRef is Check for a resource whose group is known: a custom resource
// named like a built-in kind (Knative's Service, Kruise's StatefulSet) is
// judged as a custom resource, by its field names, not by the built-in
// kind's entries; an object sensitive by its name (Argo CD's own settings)
// is judged by it.
func (s Sensitivity) CheckRef(ref Ref, p Pointer, git Object) (field Pointer, why string, ok bool) {
	if m, ok := s.Within(ref, p); ok && (m.entry == nil || m.entry.mode == subtree) {
		return m.Path, m.Reason, true
	}
	if git == nil {
		return nil, "", false
	}
	sub, found := p.Get(git)
	if !found {
		return nil, "", false
	}
	if m, ok := s.first(ref, p, sub); ok {
		return m.Path, m.Reason, true
	}
	return nil, "", false
}

// Hides judges what hiding p of a resource would hide: a sensitive path p is
// or lies in; content Git declares there that holds a sensitive path (a
// container Git declares carries its image); or live content there that
// grants a privilege (privileged: true, a hostPath, added capabilities, …).
// Content only in live that grants nothing, such as an injected sidecar's
// image, may be hidden: the webhook that injects it decides it.
func (s Sensitivity) Hides(ref Ref, p, gp Pointer, target, live Object) (string, bool) {
	if len(p) == 0 {
		return "the whole resource", true
	}
	if m, ok := s.Within(ref, p); ok && (m.entry == nil || m.entry.mode == subtree) {
		return m.String(), true
	}
	if len(gp) == 0 {
		gp = p
	}
	gitVal, inGit, named := sameNamedItem(target, p, live)
	if !named {
		gitVal, inGit = gp.Get(target)
	}
	if inGit {
		if m, ok := s.first(ref, gp, gitVal); ok {
			return fmt.Sprintf("%s, which Git declares", m), true
		}
	}
	liveVal, inLive := p.Get(live)
	if !inLive {
		if !inGit {
			// Nothing there to judge: a rule on p would hide whatever comes later.
			if m, ok := s.above(ref, p); ok {
				return fmt.Sprintf("%s beneath it, whatever it holds later", m), true
			}
		}
		return "", false
	}
	var why string
	s.Beneath(ref, p, liveVal, func(m Match, v any) bool {
		judge := present
		if m.entry != nil && m.entry.hidden != nil {
			judge = m.entry.hidden
		}
		if what, bad := judge(v); bad {
			why = fmt.Sprintf("%s: %s in live", m, what)
			return false
		}
		return true
	})
	return why, why != ""
}

// sameNamedItem finds, for a list item p of live with a name, the item of the
// same name in target: an ignore rule that selects by name hides both. named
// says whether p is such an item.
func sameNamedItem(target Object, p Pointer, live Object) (v any, inGit, named bool) {
	if len(p) < 2 {
		return nil, false, false
	}
	item, ok := p.Get(live)
	if !ok {
		return nil, false, false
	}
	name, _ := Map(item)["name"].(string)
	if name == "" {
		return nil, false, false
	}
	list, _ := p[:len(p)-1].Get(target)
	l, _ := list.([]any)
	for _, e := range l {
		if n, _ := Map(e)["name"].(string); n == name {
			return e, true, true
		}
	}
	return nil, false, true
}

// Refuse is the one decision whether a fix of kind k may go ahead on finding
// f of a resource with the given desired (target) and live objects. It refuses
// when the fix would change or delete a security-relevant path in Git
// (remove-field, set-value, pin-helm-value) or hide one (ignore-difference),
// and returns the reason to show: what and why. A fix that hands a field to
// another writer also needs a rule that says the writer owns it
// (handOverRefused).
func (s Sensitivity) Refuse(k FixKind, f *Finding, target, live Object) (string, bool) {
	if why, bad := s.refuseSensitive(k, f, target, live); bad {
		return why, true
	}
	return handOverRefused(k, f)
}

// refuseSensitive refuses a fix that changes, deletes or hides a
// security-relevant path.
func (s Sensitivity) refuseSensitive(k FixKind, f *Finding, target, live Object) (string, bool) {
	gp := f.GitPath
	if len(gp) == 0 {
		gp = f.Path
	}
	switch k {
	case FixIgnoreDifference:
		what, bad := s.Hides(f.Resource, f.Path, f.GitPath, target, live)
		if !bad {
			return "", false
		}
		return fmt.Sprintf("ignoring %s would hide %s: driftfix never ignores a security-relevant path; a person must review this change", f.Path, what), true
	case FixRemoveField, FixSetValue, FixPinHelmValue, FixAdoptLive:
	default:
		return "", false
	}
	verb := map[FixKind]string{FixRemoveField: "removes it from Git", FixSetValue: "rewrites it in Git", FixPinHelmValue: "changes where the chart takes it from",
		FixAdoptLive: "writes a change made by hand into Git"}[k]
	if dropsEmpty(k, f) {
		return "", false
	}
	if m, ok := s.Within(f.Resource, gp); ok {
		if a := allowanceOf(m); a != nil && a.kind == k && a.when(f, target) {
			return "", false
		}
		return fmt.Sprintf("%s is security-relevant (%s: %s): driftfix never %s by itself; a person must review this change", f.Path, m.Reason, m.What, verb), true
	}
	gitVal, inGit := f.Git, f.InGit
	if !inGit {
		gitVal, inGit = gp.Get(target)
	}
	if inGit {
		if m, ok := s.first(f.Resource, gp, gitVal); ok {
			return fmt.Sprintf("%s holds %s, which Git declares: driftfix never %s by itself; a person must review this change", f.Path, m, verb), true
		}
	}
	if (k == FixSetValue || k == FixAdoptLive) && f.InLive {
		if m, ok := s.first(f.Resource, f.Path, f.Live); ok {
			return fmt.Sprintf("writing the live value of %s into Git would write %s: driftfix never does that by itself; a person must review this change", f.Path, m), true
		}
	}
	return "", false
}

func allowanceOf(m Match) *allowance {
	if m.entry == nil {
		return nil
	}
	return m.entry.allow
}

// Guard applies Refuse to a finding's suggested fix: a refused fix becomes
// none with the reason, keeping the cause and the evidence.
func (s Sensitivity) Guard(f *Finding, target, live Object) {
	if why, refused := s.Refuse(f.Remediation.Kind, f, target, live); refused {
		f.Remediation = Remediation{Kind: FixNone, Reason: why}
	}
}

// handOverRefused is the allow-list of hand-overs: a fix that lets another
// writer keep a field (remove-field takes it out of Git, ignore-difference
// stops Argo CD comparing it) goes ahead on a finding only where a rule says
// that writer legitimately owns the field, which the classifier that named the
// cause records as the remediation's Grant (an HPA that targets the workload,
// a catalog or policy writer that owns the path, a webhook the API server's
// matchers send the object to, a field Kubernetes itself fills). A finding
// about the stored form of Git's own value (normalized) hands nothing over,
// and a paths judged for a plan's side effects (no cause) are judged by the
// sensitive paths alone.
func handOverRefused(k FixKind, f *Finding) (string, bool) {
	if k != FixRemoveField && k != FixIgnoreDifference {
		return "", false
	}
	switch f.Cause {
	case "", CauseNormalized:
		return "", false
	}
	if f.Remediation.Grant != "" {
		return "", false
	}
	if dropsEmpty(k, f) {
		return "", false
	}
	verb := map[FixKind]string{FixRemoveField: "removing it from Git", FixIgnoreDifference: "ignoring it"}[k]
	return fmt.Sprintf("%s would hand %s to another writer, and no rule says a writer legitimately owns it (the evidence names a writer, but only a documented owner, an autoscaler, an admitting webhook or the policy's writers may keep a field): a person must decide", verb, f.Path), true
}

// dropsEmpty reports a remove-field of an empty value the API server drops
// (live has nothing there): it asserts nothing, so removing it changes
// nothing in the cluster and hands nothing over.
func dropsEmpty(k FixKind, f *Finding) bool {
	return k == FixRemoveField && f.InGit && !f.InLive && IsEmpty(f.Git)
}
