// This file is the security-path table as Go code before it became
// sensitive.yaml, kept only while TestSensitiveDecisionsMatchOldTable
// compares the two.

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
type oldMode int

const (
	// subtree: the path and everything beneath it (an image, a securityContext, RBAC rules).
	oldSubtree oldMode = iota
	// whole: the path itself as one item (a container, a volume), not each field
	// beneath it; what lies beneath is judged by its own entries.
	oldWhole
)

// entry is one security-relevant path.
type oldEntry struct {
	// scope lists the kinds ("group/Kind") the entry applies to; podScope places
	// a pod-spec entry under every kind that holds a pod template.
	scope []string
	// pattern is a pointer whose tokens match exactly, or any token ("*"), or a
	// token starting with a prefix ("prefix*").
	pattern Pointer
	oldMode oldMode
	// Reason is the short category shown to users; what says what the path controls.
	reason, what string
	// hidden judges content at this entry when it exists only in live and a
	// rule would hide it as part of a larger item Git does not declare (an
	// injected sidecar): it returns what makes the content dangerous. Nil
	// means any content is dangerous.
	hidden func(v any) (string, bool)
	// allow names the one fix that may still touch the path, and when.
	allow *oldAllowance
}

// allowance is a fix that cannot weaken what the entry protects.
type oldAllowance struct {
	kind FixKind
	when func(f *Finding, target Object) bool
}

// The reasons shown to users.
const (
	oldReasonPrivilege   = "privilege"
	oldReasonImage       = "image"
	oldReasonWhatRuns    = "what runs"
	oldReasonHostAccess  = "host access"
	oldReasonIdentity    = "identity"
	oldReasonSecret      = "secret"
	oldReasonRBAC        = "RBAC"
	oldReasonAdmission   = "admission"
	oldReasonAPI         = "API registration"
	oldReasonNetwork     = "network exposure"
	oldReasonPodSecurity = "pod security"
	oldReasonPolicy      = "policy"
)

// podKinds are the built-in kinds that hold a pod spec, with where it is.
var oldPodKinds = map[string]string{
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
	oldCustomScope: "/spec/template/spec",
}

// anyCtr matches the three lists of containers a pod spec has.
const oldAnyCtr = "containers|initContainers|ephemeralContainers"

// customScope stands for every kind outside the built-in API groups.
const oldCustomScope = "custom"

// podScope marks entries relative to a pod spec ("containers/*/image") or, for
// annotations, to the pod's metadata.
var oldPodScope = []string{"pod"}

var (
	oldNever = func(any) (string, bool) { return "", false }
	// isTrue: a boolean switched on.
	oldIsTrue = func(v any) (string, bool) { return fmt.Sprint(v), v == true }
	// present: any value at all.
	oldPresent = func(v any) (string, bool) { return Brief(v, 60), !IsEmpty(v) }
)

var oldTable = []oldEntry{
	// Pod spec, under every kind with a pod template.
	{scope: oldPodScope, pattern: oldP("containers/*"), oldMode: oldWhole, reason: oldReasonImage, what: "a container: the image and command it runs", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP("initContainers/*"), oldMode: oldWhole, reason: oldReasonImage, what: "an init container: the image and command it runs", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP("ephemeralContainers/*"), oldMode: oldWhole, reason: oldReasonImage, what: "an ephemeral debug container: the image and command it runs", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/image"), reason: oldReasonImage, what: "the image a container runs", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/command"), reason: oldReasonWhatRuns, what: "the command a container runs", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/args"), reason: oldReasonWhatRuns, what: "the arguments of a container's command", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/env"), reason: oldReasonWhatRuns, what: "a container's environment, such as preloaded libraries, proxies and secret references", hidden: oldReadsSecretEnv},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/envFrom"), reason: oldReasonWhatRuns, what: "the ConfigMaps and Secrets a container's environment comes from", hidden: oldReadsSecretEnvFrom},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/securityContext"), reason: oldReasonPrivilege, what: "a container's privileges, such as privileged, capabilities, runAsUser and seccomp", hidden: oldEscalatesContainer},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/ports/*/hostPort"), reason: oldReasonHostAccess, what: "a port opened on the node", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/ports/*/hostIP"), reason: oldReasonHostAccess, what: "the node address a host port binds", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/volumeMounts/*/mountPropagation"), reason: oldReasonHostAccess, what: "mount propagation between the container and the node", hidden: oldEquals("Bidirectional")},
	{scope: oldPodScope, pattern: oldP("securityContext"), reason: oldReasonPrivilege, what: "the pod's privileges, such as runAsUser, fsGroup, sysctls and seccomp", hidden: oldEscalatesPod},
	{scope: oldPodScope, pattern: oldP("hostNetwork"), reason: oldReasonHostAccess, what: "the node's network namespace", hidden: oldIsTrue},
	{scope: oldPodScope, pattern: oldP("hostPID"), reason: oldReasonHostAccess, what: "the node's process namespace", hidden: oldIsTrue},
	{scope: oldPodScope, pattern: oldP("hostIPC"), reason: oldReasonHostAccess, what: "the node's IPC namespace", hidden: oldIsTrue},
	{scope: oldPodScope, pattern: oldP("hostUsers"), reason: oldReasonHostAccess, what: "whether the pod runs in the node's user namespace", hidden: func(v any) (string, bool) { return fmt.Sprint(v), v == false }},
	{scope: oldPodScope, pattern: oldP("shareProcessNamespace"), reason: oldReasonPrivilege, what: "whether containers see each other's processes", hidden: oldIsTrue},
	{scope: oldPodScope, pattern: oldP("runtimeClassName"), reason: oldReasonPrivilege, what: "the container runtime sandbox the pod runs in", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("volumes"), oldMode: oldWhole, reason: oldReasonHostAccess, what: "the pod's volumes: host paths and Secrets it can mount", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP("volumes/*"), oldMode: oldWhole, reason: oldReasonHostAccess, what: "a volume: a host path or a Secret the pod can mount", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP("volumes/*/hostPath"), reason: oldReasonHostAccess, what: "a directory of the node mounted into the pod", hidden: oldField("path")},
	{scope: oldPodScope, pattern: oldP("volumes/*/secret"), reason: oldReasonSecret, what: "a Secret mounted into the pod", hidden: oldField("secretName")},
	{scope: oldPodScope, pattern: oldP("volumes/*/projected/sources/*/secret"), reason: oldReasonSecret, what: "a Secret mounted into the pod", hidden: oldField("name")},
	{scope: oldPodScope, pattern: oldP("imagePullSecrets"), reason: oldReasonImage, what: "the registry credentials images are pulled with", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP("serviceAccountName"), reason: oldReasonIdentity, what: "the service account the pod acts as", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("serviceAccount"), reason: oldReasonIdentity, what: "the service account the pod acts as", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("automountServiceAccountToken"), reason: oldReasonIdentity, what: "whether the pod gets an API token", hidden: oldIsTrue},
	{scope: oldPodScope, pattern: oldP("volumes/*/persistentVolumeClaim"), reason: oldReasonSecret, what: "the volume claim, and so the data, the pod mounts", hidden: oldField("claimName")},
	{scope: oldPodScope, pattern: oldP("volumes/*/csi"), reason: oldReasonSecret, what: "a CSI volume (secret stores mount through it)", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP(oldAnyCtr + "/*/volumeMounts"), reason: oldReasonSecret, what: "what a container mounts: Secrets and the service-account token among them", hidden: oldMountsSecrets},
	{scope: oldPodScope, pattern: oldP("nodeName"), reason: oldReasonPlacement, what: "the node the pod is bound to", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("nodeSelector"), reason: oldReasonPlacement, what: "the nodes the pod may run on", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("affinity"), reason: oldReasonPlacement, what: "the nodes and neighbours the pod is placed by", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("tolerations"), reason: oldReasonPlacement, what: "the tainted nodes (control plane, dedicated) the pod may run on", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("dnsConfig"), reason: oldReasonNetwork, what: "the name servers and search domains the pod resolves with", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("dnsPolicy"), reason: oldReasonNetwork, what: "where the pod resolves names", hidden: oldEquals("Default")},
	{scope: oldPodScope, pattern: oldP("hostAliases"), reason: oldReasonNetwork, what: "host names the pod resolves to fixed addresses", hidden: oldPresent},
	{scope: oldPodScope, pattern: oldP("@meta/labels"), reason: oldReasonNetwork, what: "the pod's labels, which Services and NetworkPolicies select pods by", hidden: oldNever},
	{scope: oldPodScope, pattern: oldP("@meta/annotations/sidecar.istio.io~1inject"), reason: oldReasonNetwork, what: "whether the mesh's sidecar (and its mTLS) is injected", hidden: oldEquals("false")},
	{scope: oldPodScope, pattern: oldP("@meta/annotations/container.apparmor.security.beta.kubernetes.io~1*"), reason: oldReasonPrivilege, what: "a container's AppArmor profile", hidden: oldEquals("unconfined")},
	{scope: oldPodScope, pattern: oldP("@meta/annotations/container.seccomp.security.alpha.kubernetes.io~1*"), reason: oldReasonPrivilege, what: "a container's seccomp profile", hidden: oldEquals("unconfined")},
	{scope: oldPodScope, pattern: oldP("@meta/annotations/seccomp.security.alpha.kubernetes.io~1pod"), reason: oldReasonPrivilege, what: "the pod's seccomp profile", hidden: oldEquals("unconfined")},

	// Secrets and service accounts.
	{scope: []string{"/Secret"}, pattern: oldP("/data"), reason: oldReasonSecret, what: "Secret data",
		allow: &oldAllowance{kind: FixPinHelmValue, when: func(*Finding, Object) bool { return true }}},
	{scope: []string{"/Secret"}, pattern: oldP("/stringData"), reason: oldReasonSecret, what: "Secret data",
		allow: &oldAllowance{kind: FixPinHelmValue, when: func(*Finding, Object) bool { return true }}},
	{scope: []string{"/Secret"}, pattern: oldP("/metadata/annotations/kubernetes.io~1service-account.name"), reason: oldReasonIdentity, what: "the service account a token Secret is issued for"},
	{scope: []string{"/ServiceAccount"}, pattern: oldP("/secrets"), reason: oldReasonSecret, what: "the Secrets a service account may use"},
	{scope: []string{"/ServiceAccount"}, pattern: oldP("/imagePullSecrets"), reason: oldReasonImage, what: "the registry credentials of a service account's pods"},
	{scope: []string{"/ServiceAccount"}, pattern: oldP("/automountServiceAccountToken"), reason: oldReasonIdentity, what: "whether pods of the service account get an API token"},

	// Namespaces: Pod Security admission.
	{scope: []string{"/Namespace"}, pattern: oldP("/metadata/labels/pod-security.kubernetes.io~1*"), reason: oldReasonPodSecurity, what: "the Pod Security level enforced, audited or warned in the namespace"},

	// Network exposure.
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: oldP("/spec/ingress"), reason: oldReasonNetwork, what: "which traffic may reach the selected pods"},
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: oldP("/spec/egress"), reason: oldReasonNetwork, what: "which traffic the selected pods may send"},
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: oldP("/spec/podSelector"), reason: oldReasonNetwork, what: "the pods the policy protects"},
	{scope: []string{"networking.k8s.io/NetworkPolicy"}, pattern: oldP("/spec/policyTypes"), reason: oldReasonNetwork, what: "whether ingress and egress are restricted"},
	// externalIPs capture traffic for any address cluster-wide (CVE-2020-8554);
	// loadBalancerSourceRanges is a load balancer's firewall; type and
	// externalName decide whether and where a Service is reachable.
	{scope: []string{"/Service"}, pattern: oldP("/spec/externalIPs"), reason: oldReasonNetwork, what: "addresses whose traffic the Service captures"},
	{scope: []string{"/Service"}, pattern: oldP("/spec/loadBalancerSourceRanges"), reason: oldReasonNetwork, what: "the clients a load balancer admits"},
	{scope: []string{"/Service"}, pattern: oldP("/spec/type"), reason: oldReasonNetwork, what: "whether the Service is reachable from outside the cluster"},
	{scope: []string{"/Service"}, pattern: oldP("/spec/externalName"), reason: oldReasonNetwork, what: "the host the Service's name resolves to"},
	{scope: []string{"/Service"}, pattern: oldP("/spec/selector"), reason: oldReasonNetwork, what: "the pods the Service sends traffic to"},
	{scope: []string{"networking.k8s.io/Ingress"}, pattern: oldP("/metadata/annotations/nginx.ingress.kubernetes.io~1*"), reason: oldReasonNetwork, what: "an ingress controller's access rules (source ranges, authentication, snippets)"},
	{scope: []string{"networking.k8s.io/Ingress"}, pattern: oldP("/spec/rules"), reason: oldReasonNetwork, what: "the hosts and paths the Ingress exposes"},
	{scope: []string{"/Namespace"}, pattern: oldP("/metadata/labels/istio-injection"), reason: oldReasonNetwork, what: "whether the mesh's sidecar (and its mTLS) is injected in the namespace"},
	{scope: []string{"/Namespace"}, pattern: oldP("/metadata/labels/istio.io~1rev"), reason: oldReasonNetwork, what: "which mesh revision injects sidecars in the namespace"},
	{scope: []string{"/ResourceQuota", "/LimitRange"}, pattern: oldP("/spec"), reason: oldReasonPolicy, what: "the resources a namespace may use"},

	// Policy, access and admission kinds of any API group: every field of
	// their spec decides what is allowed, denied, trusted or deployed.
	{scope: oldPolicyKinds, pattern: oldP("/spec"), reason: oldReasonPolicy, what: "a policy, access or admission object: what it allows, denies, enforces or trusts"},
	{scope: []string{"argoproj.io/AppProject"}, pattern: oldP("/spec"), reason: oldReasonPolicy, what: "an Argo CD project: where its applications may deploy from and to, and what"},
	{scope: []string{"argoproj.io/Application"}, pattern: oldP("/spec/project"), reason: oldReasonPolicy, what: "the Argo CD project, and so the permissions, an application deploys with"},
	{scope: []string{"argoproj.io/Application"}, pattern: oldP("/spec/destination"), reason: oldReasonPolicy, what: "the cluster and namespace an application deploys to"},
	{scope: []string{"argoproj.io/Application"}, pattern: oldP("/spec/source"), reason: oldReasonImage, what: "the repository and revision an application deploys"},
	{scope: []string{"argoproj.io/Application"}, pattern: oldP("/spec/sources"), reason: oldReasonImage, what: "the repositories and revisions an application deploys"},
	{scope: []string{"external-secrets.io/ExternalSecret"}, pattern: oldP("/spec/secretStoreRef"), reason: oldReasonSecret, what: "the secret store an ExternalSecret reads from"},

	// Admission webhooks: which requests they see, what happens when they fail, and whom the API server calls and trusts.
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*"), oldMode: oldWhole, reason: oldReasonAdmission, what: "an admission webhook"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/failurePolicy"), reason: oldReasonAdmission, what: "whether requests pass when the webhook fails"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/namespaceSelector"), reason: oldReasonAdmission, what: "the namespaces the webhook sees"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/objectSelector"), reason: oldReasonAdmission, what: "the objects the webhook sees"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/rules"), reason: oldReasonAdmission, what: "the requests the webhook sees"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/matchConditions"), reason: oldReasonAdmission, what: "the requests the webhook sees"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/matchPolicy"), reason: oldReasonAdmission, what: "whether requests through other API versions are seen"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/clientConfig/service"), reason: oldReasonAdmission, what: "the service the API server sends requests to"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/clientConfig/url"), reason: oldReasonAdmission, what: "the URL the API server sends requests to"},
	{scope: oldWebhookKinds, pattern: oldP("/webhooks/*/clientConfig/caBundle"), reason: oldReasonAdmission, what: "the CA the API server trusts for the webhook", allow: oldRemoveEmptyCA},
	{scope: []string{"admissionregistration.k8s.io/ValidatingAdmissionPolicy", "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
		"admissionregistration.k8s.io/MutatingAdmissionPolicy", "admissionregistration.k8s.io/MutatingAdmissionPolicyBinding"},
		pattern: oldP("/spec"), reason: oldReasonAdmission, what: "an admission policy: what it checks or changes, where, and what happens on failure"},

	// API registration: conversion webhooks and aggregated APIs see every request for their API.
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: oldP("/spec/conversion/strategy"), reason: oldReasonAPI, what: "whether a conversion webhook sees every object of the CRD"},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: oldP("/spec/conversion/webhook/clientConfig/service"), reason: oldReasonAPI, what: "the conversion webhook's service"},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: oldP("/spec/conversion/webhook/clientConfig/url"), reason: oldReasonAPI, what: "the conversion webhook's URL"},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: oldP("/spec/conversion/webhook/clientConfig/caBundle"), reason: oldReasonAPI, what: "the CA the API server trusts for the conversion webhook", allow: oldRemoveEmptyCA},
	{scope: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, pattern: oldP("/spec/conversion/webhookClientConfig"), reason: oldReasonAPI, what: "the conversion webhook of a v1beta1 CRD"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: oldP("/spec/insecureSkipTLSVerify"), reason: oldReasonAPI, what: "whether the API server checks the aggregated API's certificate"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: oldP("/spec/caBundle"), reason: oldReasonAPI, what: "the CA the API server trusts for the aggregated API", allow: oldRemoveEmptyCA},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: oldP("/spec/service"), reason: oldReasonAPI, what: "the service that serves the aggregated API"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: oldP("/spec/group"), reason: oldReasonAPI, what: "the API group the service serves"},
	{scope: []string{"apiregistration.k8s.io/APIService"}, pattern: oldP("/spec/version"), reason: oldReasonAPI, what: "the API version the service serves"},

	// RBAC.
	{scope: []string{"rbac.authorization.k8s.io/Role"}, pattern: oldP("/rules"), reason: oldReasonRBAC, what: "what the role may do"},
	{scope: []string{"rbac.authorization.k8s.io/ClusterRole"}, pattern: oldP("/rules"), reason: oldReasonRBAC, what: "what the role may do", allow: oldRemoveAggregatedRules},
	{scope: []string{"rbac.authorization.k8s.io/ClusterRole"}, pattern: oldP("/aggregationRule"), reason: oldReasonRBAC, what: "the roles whose rules this role collects"},
	{scope: oldBindingKinds, pattern: oldP("/subjects"), reason: oldReasonRBAC, what: "who the binding grants the role to"},
	{scope: oldBindingKinds, pattern: oldP("/roleRef"), reason: oldReasonRBAC, what: "the role the binding grants"},
}

// ReasonPlacement is the category of node placement.
const oldReasonPlacement = "node placement"

// policyKinds are the policy, access and admission kinds of any API group.
var oldPolicyKinds = []string{
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
var oldPolicyGroups = map[string]string{
	"constraints.gatekeeper.sh": "a Gatekeeper constraint: what it enforces, where, and whether it denies",
}

// namedObjects are objects whose name, not only kind, makes them sensitive:
// Argo CD's own settings.
var oldNamedObjects = map[oldNamedKey]struct {
	pattern Pointer
	what    string
}{
	{"", "ConfigMap", "argocd-cm"}:            {oldP("/data"), "Argo CD's settings: accounts, anonymous access, SSO, resource exclusions and ignore rules"},
	{"", "ConfigMap", "argocd-rbac-cm"}:       {oldP("/data"), "Argo CD's RBAC policy, its default role among them"},
	{"", "ConfigMap", "argocd-cmd-params-cm"}: {oldP("/data"), "Argo CD's server and controller parameters"},
}

// namedKey is an object's group, kind and name.
type oldNamedKey struct{ group, kind, name string }

var (
	oldWebhookKinds = []string{"admissionregistration.k8s.io/MutatingWebhookConfiguration", "admissionregistration.k8s.io/ValidatingWebhookConfiguration"}
	oldBindingKinds = []string{"rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding"}
)

// removeEmptyCA: Git declaring caBundle "" asserts no CA of its own (an
// injector such as cert-manager's cainjector fills it); removing the empty value
// stops every sync from blanking the bundle and changes nothing Git asserts.
// A caBundle Git declares with a value is the trust anchor and is never removed.
var oldRemoveEmptyCA = &oldAllowance{kind: FixRemoveField, when: func(f *Finding, _ Object) bool {
	return f.InGit && IsEmpty(f.Git)
}}

// removeAggregatedRules: the rules of a ClusterRole with an aggregationRule are
// computed by the aggregation controller from the roles it selects; Git's own
// rules are overwritten anyway, so removing them (the aggregationRule stays in
// Git) changes no permission.
var oldRemoveAggregatedRules = &oldAllowance{kind: FixRemoveField, when: func(_ *Finding, target Object) bool {
	return !IsEmpty(Lookup(target, "aggregationRule"))
}}

// builtinGroups are the API groups of Kubernetes itself; any other group is a
// custom resource, judged by field names (see customNames).
var oldBuiltinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "networking.k8s.io": true,
	"rbac.authorization.k8s.io": true, "admissionregistration.k8s.io": true, "apiextensions.k8s.io": true,
	"apiregistration.k8s.io": true, "storage.k8s.io": true, "scheduling.k8s.io": true, "coordination.k8s.io": true,
	"discovery.k8s.io": true, "node.k8s.io": true, "certificates.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
	"resource.k8s.io": true, "events.k8s.io": true,
}

// customNames are field names that are sensitive anywhere under a custom
// resource's spec: an operator usually runs what they name.
var oldCustomNames = map[string][2]string{
	"image":                        {oldReasonImage, "an image an operator runs"},
	"images":                       {oldReasonImage, "images an operator runs"},
	"imageName":                    {oldReasonImage, "an image an operator runs"},
	"baseImage":                    {oldReasonImage, "the base image an operator builds or runs"},
	"package":                      {oldReasonImage, "a package (an image) an operator installs and runs"},
	"command":                      {oldReasonWhatRuns, "a command an operator runs"},
	"args":                         {oldReasonWhatRuns, "arguments of a command an operator runs"},
	"env":                          {oldReasonWhatRuns, "the environment of what an operator runs"},
	"envFrom":                      {oldReasonWhatRuns, "the ConfigMaps and Secrets an operator's workload reads its environment from"},
	"secretName":                   {oldReasonSecret, "a Secret an operator mounts or reads"},
	"secretRef":                    {oldReasonSecret, "a Secret an operator reads"},
	"secretKeyRef":                 {oldReasonSecret, "a Secret key an operator reads"},
	"nodeName":                     {oldReasonPlacement, "the node what an operator runs is bound to"},
	"nodeSelector":                 {oldReasonPlacement, "the nodes what an operator runs may use"},
	"tolerations":                  {oldReasonPlacement, "the tainted nodes what an operator runs may use"},
	"securityContext":              {oldReasonPrivilege, "privileges of what an operator runs"},
	"capabilities":                 {oldReasonPrivilege, "Linux capabilities of what an operator runs"},
	"privileged":                   {oldReasonPrivilege, "a privileged container an operator runs"},
	"allowPrivilegeEscalation":     {oldReasonPrivilege, "privilege escalation of what an operator runs"},
	"hostPath":                     {oldReasonHostAccess, "a node directory an operator mounts"},
	"hostNetwork":                  {oldReasonHostAccess, "the node's network namespace"},
	"hostPID":                      {oldReasonHostAccess, "the node's process namespace"},
	"hostIPC":                      {oldReasonHostAccess, "the node's IPC namespace"},
	"hostPort":                     {oldReasonHostAccess, "a port opened on the node"},
	"serviceAccountName":           {oldReasonIdentity, "the service account of what an operator runs"},
	"serviceAccount":               {oldReasonIdentity, "the service account of what an operator runs"},
	"automountServiceAccountToken": {oldReasonIdentity, "whether what an operator runs gets an API token"},
}

func oldP(s string) Pointer {
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return MustPointer(s)
}

// field judges a mount as dangerous whenever it is there, naming what it mounts.
func oldField(name string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		if s := Str(v, name); s != "" {
			return name + " " + s, true
		}
		return Brief(v, 60), v != nil
	}
}

func oldEquals(want string) func(any) (string, bool) {
	return func(v any) (string, bool) {
		s, _ := v.(string)
		return s, strings.EqualFold(s, want)
	}
}

// readsSecretEnv returns the Secret an injected container's environment
// reads (valueFrom.secretKeyRef): a sidecar that reads a Secret is never
// hidden.
func oldReadsSecretEnv(v any) (string, bool) {
	for _, e := range List(v) {
		if ref := Map(e, "valueFrom", "secretKeyRef"); ref != nil {
			return fmt.Sprintf("env %s reads Secret %s key %s", Str(e, "name"), Str(ref, "name"), Str(ref, "key")), true
		}
	}
	return "", false
}

// readsSecretEnvFrom returns the Secret an injected container's environment
// is filled from.
func oldReadsSecretEnvFrom(v any) (string, bool) {
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
func oldMountsSecrets(v any) (string, bool) {
	for _, m := range List(v) {
		if oldP := Str(m, "mountPath"); strings.HasPrefix(oldP, "/var/run/secrets") || strings.HasPrefix(oldP, "/run/secrets") {
			return fmt.Sprintf("it mounts %s at %s", Str(m, "name"), oldP), true
		}
	}
	return "", false
}

// escalatesContainer returns what in a container securityContext grants more
// than a default container has.
func oldEscalatesContainer(v any) (string, bool) {
	m, _ := v.(map[string]any)
	switch {
	case m["privileged"] == true:
		return "privileged: true", true
	case m["allowPrivilegeEscalation"] == true:
		return "allowPrivilegeEscalation: true", true
	case len(List(m, "capabilities", "add")) > 0:
		return "capabilities.add: " + oldJoinList(List(m, "capabilities", "add")), true
	case Str(m, "procMount") == "Unmasked":
		return "procMount: Unmasked", true
	case Lookup(m, "windowsOptions", "hostProcess") == true:
		return "windowsOptions.hostProcess: true", true
	}
	return oldEscalatesPod(v)
}

// escalatesPod returns what in a pod-level securityContext (the fields a
// container shares with it) weakens the pod's isolation.
func oldEscalatesPod(v any) (string, bool) {
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

func oldJoinList(l []any) string {
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// SensitivePath is one entry of a policy's sensitivePaths: a path (pointer
// tokens, "*" for any list item or key) or a field name, optionally for one kind.
type oldSensitivePath struct {
	Group, Kind string // empty Kind: every kind; Group "*": any group
	Pattern     Pointer
	Field       string // a field name, sensitive wherever it appears
	Text        string // as written in the policy
}

var (
	oldKindRe  = regexp.MustCompile(`^(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?)/)?([A-Z][A-Za-z0-9]*)$`)
	oldFieldRe = regexp.MustCompile(`^[A-Za-z0-9_$@-]+$`)
)

// ParseSensitivePath reads a policy sensitivePaths entry: a JSON pointer
// ("/spec/template/spec/dnsConfig"), a dotted path
// ("spec.template.spec.containers[].env", "data.policy\.json"), a field name
// ("dnsConfig"), each optionally scoped to a kind ("Deployment:/spec/paused",
// "apps/Deployment:spec.paused"). "*" (or "[]" in a dotted path) matches any
// list item or key.
func oldParseSensitivePath(s string) (oldSensitivePath, error) {
	sp := oldSensitivePath{Text: s, Group: "*"}
	rest := strings.TrimSpace(s)
	if rest == "" {
		return sp, fmt.Errorf("is empty; write a JSON pointer (/spec/template/spec/dnsConfig), a dotted path or a field name")
	}
	if i := strings.Index(rest, ":"); i >= 0 && !strings.HasPrefix(rest, "/") {
		kind := rest[:i]
		m := oldKindRe.FindStringSubmatch(kind)
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
		ptr, err := oldParseDotted(rest)
		if err != nil {
			return sp, err
		}
		sp.Pattern = ptr
	default:
		if !oldFieldRe.MatchString(rest) {
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
func oldParseDotted(s string) (Pointer, error) {
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
type oldSensitivity struct {
	Extra []oldSensitivePath
	// Writers are the policy's writers: its own controllers and people, and
	// the paths each controller legitimately owns. They come before the
	// built-in catalog.
	Writers []Writer
}

// Match is one security-relevant path and why it matters.
type oldMatch struct {
	Path     Pointer // the sensitive path, as it appears in the object
	Reason   string  // the category: privilege, image, RBAC, …
	What     string  // what the path controls
	oldEntry *oldEntry
}

// String renders "/spec/…/image (image: the image a container runs)".
func (m oldMatch) String() string {
	return fmt.Sprintf("%s (%s: %s)", m.Path, m.Reason, m.What)
}

// resolved is a table entry placed at an absolute pattern.
type oldResolved struct {
	pattern Pointer
	e       *oldEntry
}

var (
	oldEntriesMu    sync.Mutex
	oldEntriesCache = map[[2]string][]oldResolved{}
)

// entriesFor returns the entries that apply to a kind; ref.Group "*" matches
// an entry of any group with that kind (for callers that only know the kind).
func oldEntriesFor(ref Ref) []oldResolved {
	gk := [2]string{ref.Group, ref.Kind}
	oldEntriesMu.Lock()
	defer oldEntriesMu.Unlock()
	if r, ok := oldEntriesCache[gk]; ok {
		return r
	}
	r := oldResolveEntries(ref)
	if len(oldEntriesCache) < 4096 {
		oldEntriesCache[gk] = r
	}
	return r
}

func oldResolveEntries(ref Ref) []oldResolved {
	var out []oldResolved
	custom := !oldBuiltinGroups[ref.Group]
	anyGroup := ref.Group == "*"
	gk := ref.Group + "/" + ref.Kind
	known := oldKnownKind(ref.Kind)
	for i := range oldTable {
		e := &oldTable[i]
		if len(e.scope) == 1 && e.scope[0] == oldPodScope[0] {
			for kind, spec := range oldPodKinds {
				// A custom resource named like a built-in kind (Kruise's
				// StatefulSet, Knative's Service) is judged as a custom
				// resource, never by the built-in kind's name.
				if !(kind == gk || (kind == oldCustomScope && custom && (!anyGroup || !known)) ||
					(anyGroup && kind != oldCustomScope && strings.SplitN(kind, "/", 2)[1] == ref.Kind)) {
					continue
				}
				base := MustPointer(spec)
				pat := e.pattern
				if pat[0] == "@meta" {
					base = append(append(Pointer{}, base[:len(base)-1]...), "metadata")
					pat = pat[1:]
				}
				out = append(out, oldResolved{pattern: append(append(Pointer{}, base...), pat...), e: e})
				break
			}
			continue
		}
		for _, s := range e.scope {
			if s == gk || (anyGroup && strings.SplitN(s, "/", 2)[1] == ref.Kind) {
				out = append(out, oldResolved{pattern: e.pattern, e: e})
				break
			}
		}
	}
	return out
}

// isCustom reports whether ref is a custom resource, judged by field names.
func oldIsCustom(ref Ref) bool {
	if oldBuiltinGroups[ref.Group] {
		return false
	}
	if ref.Group != "*" {
		return true
	}
	return !oldKnownKind(ref.Kind) && !oldBuiltinKinds[ref.Kind]
}

// builtinKinds are common built-in kinds the table has no entry for, so that
// a check by kind alone does not judge them as custom resources.
var oldBuiltinKinds = map[string]bool{
	"ConfigMap": true, "Endpoints": true, "EndpointSlice": true, "PersistentVolumeClaim": true, "PersistentVolume": true,
	"Ingress": true, "IngressClass": true, "HorizontalPodAutoscaler": true, "PodDisruptionBudget": true, "LimitRange": true,
	"ResourceQuota": true, "StorageClass": true, "Lease": true, "PriorityClass": true, "Event": true,
}

func oldKnownKind(kind string) bool {
	for k := range oldPodKinds {
		if k != oldCustomScope && strings.SplitN(k, "/", 2)[1] == kind {
			return true
		}
	}
	for _, e := range oldTable {
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
func oldTokenMatches(pat, tok string) bool {
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
func oldPrefixMatches(pattern, path Pointer) bool {
	if len(path) < len(pattern) {
		return false
	}
	for i, t := range pattern {
		if !oldTokenMatches(t, path[i]) {
			return false
		}
	}
	return true
}

// Within returns the entry that path p is: equal to a whole-item entry, or
// at or beneath a subtree entry.
func (s oldSensitivity) Within(ref Ref, oldP Pointer) (oldMatch, bool) {
	if n, ok := oldNamedObjects[oldNamedKey{ref.Group, ref.Kind, ref.Name}]; ok && oldPrefixMatches(n.pattern, oldP) {
		return oldMatch{Path: oldP[:len(n.pattern)], Reason: oldReasonPolicy, What: n.what}, true
	}
	if what, ok := oldPolicyGroups[ref.Group]; ok && len(oldP) > 0 && oldP[0] == "spec" {
		return oldMatch{Path: oldP[:1], Reason: oldReasonPolicy, What: what}, true
	}
	for _, r := range oldEntriesFor(ref) {
		if !oldPrefixMatches(r.pattern, oldP) {
			continue
		}
		if r.e.oldMode == oldWhole && len(oldP) != len(r.pattern) {
			continue
		}
		return oldMatch{Path: oldP[:len(r.pattern)], Reason: r.e.reason, What: r.e.what, oldEntry: r.e}, true
	}
	if oldIsCustom(ref) && len(oldP) > 0 && oldP[0] != "metadata" && oldP[0] != "status" {
		for i, tok := range oldP {
			if c, ok := oldCustomNames[tok]; ok {
				return oldMatch{Path: oldP[:i+1], Reason: c[0], What: c[1]}, true
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
			for j, tok := range oldP {
				if tok == x.Field {
					return oldMatch{Path: oldP[:j+1], Reason: oldReasonPolicy, What: what}, true
				}
			}
			continue
		}
		if oldPrefixMatches(x.Pattern, oldP) {
			return oldMatch{Path: oldP[:len(x.Pattern)], Reason: oldReasonPolicy, What: what}, true
		}
	}
	return oldMatch{}, false
}

// Beneath walks the value v found at p and calls visit for every sensitive path
// at p or beneath it that v holds, with its value, until visit returns false.
func (s oldSensitivity) Beneath(ref Ref, oldP Pointer, v any, visit func(oldMatch, any) bool) {
	s.beneath(ref, append(Pointer{}, oldP...), v, visit, 0)
}

func (s oldSensitivity) beneath(ref Ref, at Pointer, v any, visit func(oldMatch, any) bool, depth int) bool {
	if depth > 64 {
		return true
	}
	if m, ok := s.Within(ref, at); ok && len(m.Path) == len(at) {
		if !visit(m, v) {
			return false
		}
		if m.oldEntry == nil || m.oldEntry.oldMode == oldSubtree {
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
func (s oldSensitivity) above(ref Ref, oldP Pointer) (oldMatch, bool) {
	for _, r := range oldEntriesFor(ref) {
		if len(r.pattern) > len(oldP) && oldPrefixMatches(r.pattern[:len(oldP)], oldP) {
			return oldMatch{Path: r.pattern, Reason: r.e.reason, What: r.e.what, oldEntry: r.e}, true
		}
	}
	return oldMatch{}, false
}

// first returns the first sensitive path at or beneath p in v.
func (s oldSensitivity) first(ref Ref, oldP Pointer, v any) (oldMatch, bool) {
	var out oldMatch
	found := false
	s.Beneath(ref, oldP, v, func(m oldMatch, _ any) bool { out, found = m, true; return false })
	return out, found
}

// Check reports whether p is a sensitive path, or covers one that git (the
// desired object) declares at or beneath p, judging by kind alone. It returns
// the field and why it matters.
func (s oldSensitivity) Check(kind string, oldP Pointer, git Object) (oldField Pointer, why string, ok bool) {
	return s.CheckRef(Ref{Group: "*", Kind: kind}, oldP, git)
}

// CheckRef is Check for a resource whose group is known: a custom resource
// named like a built-in kind (Knative's Service, Kruise's StatefulSet) is
// judged as a custom resource, by its field names, not by the built-in
// kind's entries; an object sensitive by its name (Argo CD's own settings)
// is judged by it.
func (s oldSensitivity) CheckRef(ref Ref, oldP Pointer, git Object) (oldField Pointer, why string, ok bool) {
	if m, ok := s.Within(ref, oldP); ok && (m.oldEntry == nil || m.oldEntry.oldMode == oldSubtree) {
		return m.Path, m.Reason, true
	}
	if git == nil {
		return nil, "", false
	}
	sub, found := oldP.Get(git)
	if !found {
		return nil, "", false
	}
	if m, ok := s.first(ref, oldP, sub); ok {
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
func (s oldSensitivity) Hides(ref Ref, oldP, gp Pointer, target, live Object) (string, bool) {
	if len(oldP) == 0 {
		return "the whole resource", true
	}
	if m, ok := s.Within(ref, oldP); ok && (m.oldEntry == nil || m.oldEntry.oldMode == oldSubtree) {
		return m.String(), true
	}
	if len(gp) == 0 {
		gp = oldP
	}
	gitVal, inGit, named := oldSameNamedItem(target, oldP, live)
	if !named {
		gitVal, inGit = gp.Get(target)
	}
	if inGit {
		if m, ok := s.first(ref, gp, gitVal); ok {
			return fmt.Sprintf("%s, which Git declares", m), true
		}
	}
	liveVal, inLive := oldP.Get(live)
	if !inLive {
		if !inGit {
			// Nothing there to judge: a rule on p would hide whatever comes later.
			if m, ok := s.above(ref, oldP); ok {
				return fmt.Sprintf("%s beneath it, whatever it holds later", m), true
			}
		}
		return "", false
	}
	var why string
	s.Beneath(ref, oldP, liveVal, func(m oldMatch, v any) bool {
		judge := oldPresent
		if m.oldEntry != nil && m.oldEntry.hidden != nil {
			judge = m.oldEntry.hidden
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
func oldSameNamedItem(target Object, oldP Pointer, live Object) (v any, inGit, named bool) {
	if len(oldP) < 2 {
		return nil, false, false
	}
	item, ok := oldP.Get(live)
	if !ok {
		return nil, false, false
	}
	name, _ := Map(item)["name"].(string)
	if name == "" {
		return nil, false, false
	}
	list, _ := oldP[:len(oldP)-1].Get(target)
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
func (s oldSensitivity) Refuse(k FixKind, f *Finding, target, live Object) (string, bool) {
	if why, bad := s.refuseSensitive(k, f, target, live); bad {
		return why, true
	}
	return oldHandOverRefused(k, f)
}

// refuseSensitive refuses a fix that changes, deletes or hides a
// security-relevant path.
func (s oldSensitivity) refuseSensitive(k FixKind, f *Finding, target, live Object) (string, bool) {
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
	if oldDropsEmpty(k, f) {
		return "", false
	}
	if m, ok := s.Within(f.Resource, gp); ok {
		if a := oldAllowanceOf(m); a != nil && a.kind == k && a.when(f, target) {
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

func oldAllowanceOf(m oldMatch) *oldAllowance {
	if m.oldEntry == nil {
		return nil
	}
	return m.oldEntry.allow
}

// Guard applies Refuse to a finding's suggested fix: a refused fix becomes
// none with the reason, keeping the cause and the evidence.
func (s oldSensitivity) Guard(f *Finding, target, live Object) {
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
func oldHandOverRefused(k FixKind, f *Finding) (string, bool) {
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
	if oldDropsEmpty(k, f) {
		return "", false
	}
	verb := map[FixKind]string{FixRemoveField: "removing it from Git", FixIgnoreDifference: "ignoring it"}[k]
	return fmt.Sprintf("%s would hand %s to another writer, and no rule says a writer legitimately owns it (the evidence names a writer, but only a documented owner, an autoscaler, an admitting webhook or the policy's writers may keep a field): a person must decide", verb, f.Path), true
}

// dropsEmpty reports a remove-field of an empty value the API server drops
// (live has nothing there): it asserts nothing, so removing it changes
// nothing in the cluster and hands nothing over.
func oldDropsEmpty(k FixKind, f *Finding) bool {
	return k == FixRemoveField && f.InGit && !f.InLive && IsEmpty(f.Git)
}
