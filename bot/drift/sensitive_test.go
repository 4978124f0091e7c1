package drift

import (
	"strings"
	"testing"
)

var (
	deploy = Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	vwc    = Ref{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration", Name: "v"}
	mwc    = Ref{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Name: "m"}
	crd    = Ref{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "things.example.com"}
	apisvc = Ref{Group: "apiregistration.k8s.io", Kind: "APIService", Name: "v1.metrics.k8s.io"}
	rbac   = func(kind string) Ref { return Ref{Group: "rbac.authorization.k8s.io", Kind: kind, Name: "r"} }
	core   = func(kind string) Ref { return Ref{Kind: kind, Namespace: "shop", Name: "x"} }
	admReg = func(kind string) Ref { return Ref{Group: "admissionregistration.k8s.io", Kind: kind, Name: "p"} }
)

// TestSensitiveTable has one row per entry of the table (checked at the end:
// an entry no row reaches fails), each with the reason users see, plus
// negatives that must stay fixable.
func TestSensitiveTable(t *testing.T) {
	var rows []sensitiveRow
	for _, group := range [][]sensitiveRow{builtinKindRows(), anyGroupRows(), grantRows(), fixableRows()} {
		rows = append(rows, group...)
	}
	var s Sensitivity
	reached := map[*SensitivePath]bool{}
	for _, r := range rows {
		m, ok := s.Within(r.ref, MustPointer(r.path))
		switch {
		case r.reason == "" && ok:
			t.Errorf("%s %s: sensitive (%s), want fixable", r.ref, r.path, m)
		case r.reason != "" && !ok:
			t.Errorf("%s %s: not sensitive, want %s", r.ref, r.path, r.reason)
		case ok && m.Reason != r.reason:
			t.Errorf("%s %s: reason %q, want %q", r.ref, r.path, m.Reason, r.reason)
		case ok && m.What == "":
			t.Errorf("%s %s: no text for users", r.ref, r.path)
		}
		if ok && m.entry != nil {
			reached[m.entry] = true
		}
	}
	for i := range builtin.paths {
		// Field names of custom resources are held by the golden of
		// TestSensitiveDecisions; every path entry needs a row here.
		if e := &builtin.paths[i]; e.Field == "" && !reached[e] {
			t.Errorf("table entry %s (%s) has no row in this test", e.Pattern, e.What)
		}
	}
}

// sensitiveRow is one path of TestSensitiveTable with the reason users see
// for it, or "" for a path that is not sensitive.
type sensitiveRow struct {
	ref    Ref
	path   string
	reason string
}

// builtinKindRows are the paths of the built-in kinds: workloads, secrets,
// namespaces, network, admission, API extension and RBAC.
func builtinKindRows() []sensitiveRow {
	const ps = "/spec/template/spec"
	return []sensitiveRow{
		{deploy, ps + "/containers/1", ReasonImage},
		{deploy, ps + "/initContainers/0", ReasonImage},
		{core("Pod"), "/spec/ephemeralContainers/0", ReasonImage},
		{deploy, ps + "/containers/0/image", ReasonImage},
		{deploy, ps + "/initContainers/0/image", ReasonImage},
		{deploy, ps + "/containers/0/command/0", ReasonWhatRuns},
		{deploy, ps + "/containers/0/args", ReasonWhatRuns},
		{deploy, ps + "/containers/0/env/2/value", ReasonWhatRuns},
		{deploy, ps + "/containers/0/envFrom/0/secretRef", ReasonWhatRuns},
		{deploy, ps + "/containers/0/securityContext", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/privileged", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/capabilities/add/0", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/allowPrivilegeEscalation", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/runAsUser", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/runAsNonRoot", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/runAsGroup", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/procMount", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/seccompProfile/type", ReasonPrivilege},
		{deploy, ps + "/containers/0/securityContext/appArmorProfile", ReasonPrivilege},
		{deploy, ps + "/containers/0/ports/0/hostPort", ReasonHostAccess},
		{deploy, ps + "/containers/0/ports/0/hostIP", ReasonHostAccess},
		{deploy, ps + "/containers/0/volumeMounts/0/mountPropagation", ReasonHostAccess},
		{deploy, ps + "/securityContext/runAsUser", ReasonPrivilege},
		{deploy, ps + "/hostNetwork", ReasonHostAccess},
		{deploy, ps + "/hostPID", ReasonHostAccess},
		{deploy, ps + "/hostIPC", ReasonHostAccess},
		{deploy, ps + "/hostUsers", ReasonHostAccess},
		{deploy, ps + "/shareProcessNamespace", ReasonPrivilege},
		{deploy, ps + "/runtimeClassName", ReasonPrivilege},
		{deploy, ps + "/volumes", ReasonHostAccess},
		{deploy, ps + "/volumes/3", ReasonHostAccess},
		{deploy, ps + "/volumes/0/hostPath/path", ReasonHostAccess},
		{deploy, ps + "/volumes/0/secret/secretName", ReasonSecret},
		{deploy, ps + "/volumes/0/projected/sources/1/secret", ReasonSecret},
		{deploy, ps + "/imagePullSecrets/0", ReasonImage},
		{deploy, ps + "/serviceAccountName", ReasonIdentity},
		{deploy, ps + "/serviceAccount", ReasonIdentity},
		{deploy, ps + "/automountServiceAccountToken", ReasonIdentity},
		{deploy, "/spec/template/metadata/annotations/container.apparmor.security.beta.kubernetes.io~1web", ReasonPrivilege},
		{deploy, "/spec/template/metadata/annotations/container.seccomp.security.alpha.kubernetes.io~1web", ReasonPrivilege},
		{core("Pod"), "/metadata/annotations/seccomp.security.alpha.kubernetes.io~1pod", ReasonPrivilege},
		{Ref{Group: "batch", Kind: "CronJob", Name: "c"}, "/spec/jobTemplate/spec/template/spec/containers/0/image", ReasonImage},
		{Ref{Group: "argoproj.io", Kind: "Rollout", Name: "r"}, "/spec/template/spec/hostNetwork", ReasonHostAccess},
		{Ref{Group: "monitoring.coreos.com", Kind: "Prometheus", Name: "k8s"}, "/spec/image", ReasonImage},
		{core("Secret"), "/data/password", ReasonSecret},
		{core("Secret"), "/stringData", ReasonSecret},
		{core("Secret"), "/metadata/annotations/kubernetes.io~1service-account.name", ReasonIdentity},
		{core("ServiceAccount"), "/secrets/0", ReasonSecret},
		{core("ServiceAccount"), "/imagePullSecrets", ReasonImage},
		{core("ServiceAccount"), "/automountServiceAccountToken", ReasonIdentity},
		{Ref{Kind: "Namespace", Name: "shop"}, "/metadata/labels/pod-security.kubernetes.io~1enforce", ReasonPodSecurity},
		{Ref{Kind: "Namespace", Name: "shop"}, "/metadata/labels/pod-security.kubernetes.io~1warn-version", ReasonPodSecurity},
		{Ref{Group: "networking.k8s.io", Kind: "NetworkPolicy", Name: "n"}, "/spec/ingress/0/from/0/ipBlock/cidr", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "NetworkPolicy", Name: "n"}, "/spec/egress", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "NetworkPolicy", Name: "n"}, "/spec/podSelector/matchLabels/app", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "NetworkPolicy", Name: "n"}, "/spec/policyTypes", ReasonNetwork},
		{core("Service"), "/spec/externalIPs/0", ReasonNetwork},
		{core("Service"), "/spec/loadBalancerSourceRanges", ReasonNetwork},
		{core("Service"), "/spec/type", ReasonNetwork},
		{core("Service"), "/spec/externalName", ReasonNetwork},
		{mwc, "/webhooks/0", ReasonAdmission},
		{vwc, "/webhooks/0/failurePolicy", ReasonAdmission},
		{mwc, "/webhooks/1/namespaceSelector/matchExpressions/0", ReasonAdmission},
		{vwc, "/webhooks/0/objectSelector", ReasonAdmission},
		{mwc, "/webhooks/0/rules/0/operations", ReasonAdmission},
		{vwc, "/webhooks/0/matchConditions", ReasonAdmission},
		{vwc, "/webhooks/0/matchPolicy", ReasonAdmission},
		{mwc, "/webhooks/0/clientConfig/service/name", ReasonAdmission},
		{vwc, "/webhooks/0/clientConfig/url", ReasonAdmission},
		{vwc, "/webhooks/0/clientConfig/caBundle", ReasonAdmission},
		{admReg("ValidatingAdmissionPolicy"), "/spec/failurePolicy", ReasonAdmission},
		{admReg("ValidatingAdmissionPolicyBinding"), "/spec/validationActions", ReasonAdmission},
		{admReg("MutatingAdmissionPolicy"), "/spec/mutations", ReasonAdmission},
		{crd, "/spec/conversion/strategy", ReasonAPI},
		{crd, "/spec/conversion/webhook/clientConfig/service", ReasonAPI},
		{crd, "/spec/conversion/webhook/clientConfig/url", ReasonAPI},
		{crd, "/spec/conversion/webhook/clientConfig/caBundle", ReasonAPI},
		{crd, "/spec/conversion/webhookClientConfig", ReasonAPI},
		{apisvc, "/spec/insecureSkipTLSVerify", ReasonAPI},
		{apisvc, "/spec/caBundle", ReasonAPI},
		{apisvc, "/spec/service/namespace", ReasonAPI},
		{apisvc, "/spec/group", ReasonAPI},
		{apisvc, "/spec/version", ReasonAPI},
		{rbac("Role"), "/rules/0/verbs", ReasonRBAC},
		{rbac("ClusterRole"), "/rules", ReasonRBAC},
		{rbac("ClusterRole"), "/aggregationRule", ReasonRBAC},
		{rbac("RoleBinding"), "/subjects/0/name", ReasonRBAC},
		{rbac("ClusterRoleBinding"), "/roleRef", ReasonRBAC},
	}
}

// anyGroupRows are sensitive by kind and by effect, for any API group
// (issue 27).
func anyGroupRows() []sensitiveRow {
	const ps = "/spec/template/spec"
	return []sensitiveRow{
		{deploy, ps + "/volumes/0/persistentVolumeClaim/claimName", ReasonSecret},
		{deploy, ps + "/volumes/1/csi/driver", ReasonSecret},
		{deploy, ps + "/containers/0/volumeMounts/2/mountPath", ReasonSecret},
		{deploy, ps + "/nodeName", ReasonPlacement},
		{deploy, ps + "/nodeSelector/kubernetes.io~1hostname", ReasonPlacement},
		{deploy, ps + "/affinity/nodeAffinity", ReasonPlacement},
		{deploy, ps + "/tolerations/0", ReasonPlacement},
		{deploy, ps + "/dnsConfig/nameservers/0", ReasonNetwork},
		{deploy, ps + "/dnsPolicy", ReasonNetwork},
		{deploy, ps + "/hostAliases/0/ip", ReasonNetwork},
		{deploy, "/spec/template/metadata/labels/app", ReasonNetwork},
		{deploy, "/spec/template/metadata/annotations/sidecar.istio.io~1inject", ReasonNetwork},
		{core("Service"), "/spec/selector/app", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "Ingress", Name: "i"}, "/metadata/annotations/nginx.ingress.kubernetes.io~1whitelist-source-range", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "Ingress", Name: "i"}, "/spec/rules/0/host", ReasonNetwork},
		{Ref{Kind: "Namespace", Name: "shop"}, "/metadata/labels/istio-injection", ReasonNetwork},
		{Ref{Kind: "Namespace", Name: "shop"}, "/metadata/labels/istio.io~1rev", ReasonNetwork},
		{core("ResourceQuota"), "/spec/hard/pods", ReasonPolicy},
		{Ref{Group: "security.istio.io", Kind: "AuthorizationPolicy", Name: "deny"}, "/spec/action", ReasonPolicy},
		{Ref{Group: "kyverno.io", Kind: "ClusterPolicy", Name: "k"}, "/spec/validationFailureAction", ReasonPolicy},
		{Ref{Group: "crd.projectcalico.org", Kind: "NetworkPolicy", Name: "c"}, "/spec/ingress/0/source", ReasonPolicy},
		{Ref{Group: "constraints.gatekeeper.sh", Kind: "K8sRequiredLabels", Name: "g"}, "/spec/enforcementAction", ReasonPolicy},
		{Ref{Group: "mutations.gatekeeper.sh", Kind: "Assign", Name: "a"}, "/spec/parameters/assign/value", ReasonPolicy},
		{Ref{Group: "cilium.io", Kind: "CiliumClusterwideNetworkPolicy", Name: "c"}, "/spec/ingress", ReasonPolicy},
		{Ref{Group: "policy.networking.k8s.io", Kind: "AdminNetworkPolicy", Name: "a"}, "/spec/priority", ReasonPolicy},
		{Ref{Group: "cert-manager.io", Kind: "ClusterIssuer", Name: "ca"}, "/spec/ca/secretName", ReasonPolicy},
		{Ref{Group: "external-secrets.io", Kind: "ClusterSecretStore", Name: "vault"}, "/spec/provider", ReasonPolicy},
		{Ref{Group: "security.openshift.io", Kind: "SecurityContextConstraints", Name: "restricted"}, "/allowPrivilegedContainer", ReasonPolicy},
		{Ref{Group: "security.openshift.io", Kind: "SecurityContextConstraints", Name: "restricted"}, "/users/0", ReasonPolicy},
		{Ref{Group: "security.openshift.io", Kind: "SecurityContextConstraints", Name: "restricted"}, "/allowedCapabilities", ReasonPolicy},
		{Ref{Group: "policy.sigstore.dev", Kind: "ClusterImagePolicy", Name: "signed"}, "/spec/authorities/0", ReasonPolicy},
		{Ref{Group: "argoproj.io", Kind: "AppProject", Name: "p"}, "/spec/destinations", ReasonPolicy},
		{Ref{Group: "argoproj.io", Kind: "Application", Name: "a"}, "/spec/project", ReasonPolicy},
		{Ref{Group: "argoproj.io", Kind: "Application", Name: "a"}, "/spec/destination/server", ReasonPolicy},
		{Ref{Group: "argoproj.io", Kind: "Application", Name: "a"}, "/spec/source/repoURL", ReasonImage},
		{Ref{Group: "argoproj.io", Kind: "Application", Name: "a"}, "/spec/sources/1", ReasonImage},
		{Ref{Group: "external-secrets.io", Kind: "ExternalSecret", Name: "e"}, "/spec/secretStoreRef/name", ReasonSecret},
		{Ref{Kind: "ConfigMap", Namespace: "argocd", Name: "argocd-rbac-cm"}, "/data/policy.default", ReasonPolicy},
		{Ref{Kind: "ConfigMap", Namespace: "argocd", Name: "argocd-cm"}, "/data/users.anonymous.enabled", ReasonPolicy},
		{Ref{Kind: "ConfigMap", Namespace: "argocd", Name: "argocd-cmd-params-cm"}, "/data/server.insecure", ReasonPolicy},
		{Ref{Group: "pkg.crossplane.io", Kind: "Provider", Name: "p"}, "/spec/package", ReasonImage},
		{Ref{Group: "example.com", Kind: "Builder", Name: "b"}, "/spec/baseImage", ReasonImage},
		{Ref{Group: "example.com", Kind: "Runner", Name: "r"}, "/spec/imageName", ReasonImage},
		// A custom resource named like a built-in kind is judged as one.
		{Ref{Group: "apps.kruise.io", Kind: "StatefulSet", Name: "s"}, ps + "/shareProcessNamespace", ReasonPrivilege},
		{Ref{Group: "serving.knative.dev", Kind: "Service", Name: "s"}, "/spec/template/spec/runtimeClassName", ReasonPrivilege},
	}
}

// grantRows are the identity, probes, network exposure and volumes a
// webhook grant must never take (#43).
func grantRows() []sensitiveRow {
	const ps = "/spec/template/spec"
	return []sensitiveRow{
		{deploy, ps + "/containers/0/livenessProbe/exec/command/0", ReasonWhatRuns},
		{deploy, ps + "/containers/0/readinessProbe/httpGet/path", ReasonWhatRuns},
		{deploy, ps + "/initContainers/0/lifecycle/preStop/exec", ReasonWhatRuns},
		{deploy, ps + "/volumes/2/projected/sources/0/serviceAccountToken/audience", ReasonIdentity},
		{deploy, ps + "/volumes/1/nfs/server", ReasonSecret},
		{deploy, "/spec/template/metadata/annotations/vault.hashicorp.com~1role", ReasonIdentity},
		{deploy, "/spec/template/metadata/annotations/eks.amazonaws.com~1role-arn", ReasonIdentity},
		{deploy, ps + "/priorityClassName", ReasonPlacement},
		{core("Service"), "/spec/ports/0/targetPort", ReasonNetwork},
		{core("Service"), "/spec/externalTrafficPolicy", ReasonNetwork},
		{core("Service"), "/metadata/annotations/service.beta.kubernetes.io~1aws-load-balancer-scheme", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "Ingress", Name: "i"}, "/spec/tls/0/secretName", ReasonNetwork},
		{Ref{Group: "networking.k8s.io", Kind: "Ingress", Name: "i"}, "/metadata/annotations/alb.ingress.kubernetes.io~1scheme", ReasonNetwork},
		{Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "r"}, "/spec/rules/0/backendRefs/0/name", ReasonNetwork},
		{Ref{Group: "gateway.networking.k8s.io", Kind: "GRPCRoute", Name: "r"}, "/spec/hostnames/0", ReasonNetwork},
		{Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "r"}, "/spec/parentRefs/0/name", ReasonNetwork},
		{Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "r"}, "/spec/parentRefs/0/kind", ""},
		{Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Name: "g"}, "/spec/listeners/0/allowedRoutes", ReasonNetwork},
		{Ref{Group: "route.openshift.io", Kind: "Route", Name: "r"}, "/spec/tls/termination", ReasonNetwork},
		{Ref{Group: "networking.istio.io", Kind: "VirtualService", Name: "v"}, "/spec/http/0/route", ReasonNetwork},
		{Ref{Group: "cert-manager.io", Kind: "Certificate", Name: "c"}, "/spec/dnsNames/0", ReasonNetwork},
		{core("ServiceAccount"), "/metadata/annotations/iam.gke.io~1gcp-service-account", ReasonIdentity},
		{Ref{Group: "kafka.strimzi.io", Kind: "KafkaUser", Name: "u"}, "/spec/authorization/acls/0", ReasonPolicy},
	}
}

// fixableRows are the negatives: fields other owners legitimately write,
// and look-alikes.
func fixableRows() []sensitiveRow {
	const ps = "/spec/template/spec"
	return []sensitiveRow{
		{deploy, "/spec/replicas", ""},
		{deploy, "/spec/template/metadata/annotations/checksum~1config", ""},
		{deploy, "/spec/template/metadata/annotations/sidecar.istio.io~1status", ""},
		{deploy, "/metadata/annotations/deployment.kubernetes.io~1revision", ""},
		{deploy, ps + "/containers/0/imagePullPolicy", ""},
		{deploy, ps + "/containers/0/resources/requests/memory", ""},
		{deploy, ps + "/containers/0/terminationMessagePolicy", ""},
		{deploy, ps + "/volumes/0/configMap/defaultMode", ""},
		{core("ConfigMap"), "/data/image", ""},
		{core("ConfigMap"), "/data/rules", ""},
		{core("Service"), "/spec/clusterIP", ""},
		{core("Service"), "/spec/ports/0/protocol", ""},
		{core("Service"), "/spec/ports/0/nodePort", ""},
		{Ref{Group: "route.openshift.io", Kind: "Route", Name: "r"}, "/spec/host", ""},
		{deploy, ps + "/containers/0/resources/limits/cpu", ""},
		{deploy, ps + "/containers/0/readinessProbe/periodSeconds", ""},
		{deploy, ps + "/containers/0/livenessProbe/httpGet/scheme", ""},
		{core("Service"), "/spec/sessionAffinity", ""},
		{vwc, "/webhooks/0/timeoutSeconds", ""},
		{vwc, "/webhooks/0/sideEffects", ""},
		{Ref{Kind: "Namespace", Name: "shop"}, "/metadata/labels/istio-injection-note", ""},
		{core("ConfigMap"), "/data/policy.default", ""},
		{Ref{Group: "argoproj.io", Kind: "Application", Name: "a"}, "/spec/ignoreDifferences/0", ""},
		{Ref{Group: "external-secrets.io", Kind: "ExternalSecret", Name: "e"}, "/spec/refreshInterval", ""},
		{Ref{Group: "autoscaling", Kind: "HorizontalPodAutoscaler", Name: "h"}, "/spec/maxReplicas", ""},
		{Ref{Group: "example.com", Kind: "Memcached", Name: "m"}, "/spec/resources/requests/cpu", ""},
		{Ref{Group: "example.com", Kind: "Memcached", Name: "m"}, "/metadata/labels/image", ""},
		{Ref{Group: "security.openshift.io", Kind: "SecurityContextConstraints", Name: "restricted"}, "/metadata/labels/team", ""},
	}
}

func obj(yamlish map[string]any) Object { return yamlish }

// TestRefuse checks the one decision for each fix kind, including the fixes
// that stay allowed on a sensitive path because they cannot weaken it.
func TestRefuse(t *testing.T) {
	var s Sensitivity
	ctr := func(name string, extra map[string]any) map[string]any {
		c := map[string]any{"name": name, "image": name + ":1"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	podT := func(ctrs ...any) Object {
		return obj(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": ctrs}}}})
	}
	target := podT(ctr("web", nil))
	// withVolumes is a pod template whose spec also declares volumes.
	withVolumes := func(o Object, vols ...any) Object {
		Map(o, "spec", "template", "spec")["volumes"] = vols
		return o
	}
	mounting := func(vol any) Object { // an injected sidecar mounting vol at /data, away from /var/run/secrets
		return withVolumes(podT(ctr("web", nil), ctr("proxy", map[string]any{"volumeMounts": []any{map[string]any{"name": Str(vol, "name"), "mountPath": "/data"}}})), vol)
	}
	sidecar := podT(ctr("web", nil), ctr("proxy", map[string]any{"securityContext": map[string]any{"privileged": false, "runAsUser": 1337}}))
	privileged := podT(ctr("web", nil), ctr("proxy", map[string]any{"securityContext": map[string]any{"privileged": true}}))
	caps := podT(ctr("web", nil), ctr("proxy", map[string]any{"securityContext": map[string]any{"capabilities": map[string]any{"add": []any{"NET_ADMIN"}}}}))
	bidirectional := podT(ctr("web", nil), ctr("proxy", map[string]any{"volumeMounts": []any{map[string]any{"name": "host", "mountPath": "/host", "mountPropagation": "Bidirectional"}}}))
	reordered := podT(ctr("proxy", nil), ctr("web", nil))
	hostVol := obj(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"volumes": []any{map[string]any{"name": "h", "hostPath": map[string]any{"path": "/"}}}}}}})
	emptyVol := obj(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"volumes": []any{map[string]any{"name": "e", "emptyDir": map[string]any{}}}}}}})
	webhookGit := obj(map[string]any{"webhooks": []any{map[string]any{"clientConfig": map[string]any{"caBundle": ""}}}})
	aggregated := obj(map[string]any{"aggregationRule": map[string]any{"clusterRoleSelectors": []any{}}, "rules": []any{}})
	aggregated["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]any{"a": "b"}}}}

	ps := "/spec/template/spec"
	for _, tc := range []struct {
		name         string
		kind         FixKind
		f            Finding
		target, live Object
		refuse       string // substring of the reason, "" when allowed
	}{
		{"ignore an injected unprivileged sidecar", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target, sidecar, ""},
		{"ignore an injected sidecar that reads a Secret through env", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			podT(ctr("web", nil), ctr("proxy", map[string]any{"env": []any{map[string]any{"name": "DB", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db", "key": "password"}}}}})), "reads Secret db key password"},
		{"ignore an injected sidecar filled from a Secret", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			podT(ctr("web", nil), ctr("proxy", map[string]any{"envFrom": []any{map[string]any{"secretRef": map[string]any{"name": "creds"}}}})), "envFrom reads Secret creds"},
		{"ignore an injected sidecar that mounts the service-account token", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			podT(ctr("web", nil), ctr("proxy", map[string]any{"volumeMounts": []any{map[string]any{"name": "token", "mountPath": "/var/run/secrets/tokens"}}})), "mounts token at /var/run/secrets/tokens"},
		{"ignore an injected sidecar with a plain env and a scratch mount", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			withVolumes(podT(ctr("web", nil), ctr("proxy", map[string]any{"env": []any{map[string]any{"name": "LOG", "value": "info"}}, "volumeMounts": []any{map[string]any{"name": "tmp", "mountPath": "/tmp"}}})),
				map[string]any{"name": "tmp", "emptyDir": map[string]any{}}), ""},
		{"ignore an injected sidecar mounting a ConfigMap and the downward API", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			mounting(map[string]any{"name": "conf", "projected": map[string]any{"sources": []any{map[string]any{"configMap": map[string]any{"name": "mesh"}}, map[string]any{"downwardAPI": map[string]any{}}}}}), ""},
		{"ignore an injected sidecar mounting the application's Secret volume outside /var/run/secrets", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			mounting(map[string]any{"name": "creds", "secret": map[string]any{"secretName": "db-creds"}}), "a Secret volume of db-creds"},
		{"ignore an injected sidecar mounting a projected service-account token", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			mounting(map[string]any{"name": "tok", "projected": map[string]any{"sources": []any{map[string]any{"serviceAccountToken": map[string]any{"audience": "vault", "path": "token"}}}}}), "projected service-account token (audience vault)"},
		{"ignore an injected sidecar mounting an NFS volume", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			mounting(map[string]any{"name": "share", "nfs": map[string]any{"server": "10.0.0.9", "path": "/exports"}}), "NFS volume 10.0.0.9:/exports"},
		{"ignore an injected sidecar mounting a host path", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target,
			mounting(map[string]any{"name": "root", "hostPath": map[string]any{"path": "/"}}), "hostPath volume of /"},
		{"ignore an injected projected token volume", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/volumes/0"), InLive: true}, target,
			withVolumes(podT(ctr("web", nil)), map[string]any{"name": "tok", "projected": map[string]any{"sources": []any{map[string]any{"serviceAccountToken": map[string]any{"path": "t"}}}}}), "projected service-account token"},
		{"ignore an injected NFS volume", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/volumes/0"), InLive: true}, target,
			withVolumes(podT(ctr("web", nil)), map[string]any{"name": "share", "nfs": map[string]any{"server": "nas", "path": "/x"}}), "NFS"},
		{"ignore an injected privileged sidecar", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target, privileged, "privileged: true"},
		{"ignore an injected sidecar with a Bidirectional mount", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target, bidirectional, "Bidirectional propagation"},
		{"ignore an injected sidecar with capabilities", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target, caps, "NET_ADMIN"},
		{"ignore a container Git declares, found by name", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/1"), InLive: true}, target, reordered, "which Git declares"},
		{"ignore an injected emptyDir volume list", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/volumes"), InLive: true}, target, emptyVol, ""},
		{"ignore an injected hostPath volume list", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/volumes"), InLive: true}, target, hostVol, "hostPath"},
		{"ignore an image", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/0/image"), InLive: true}, target, target, "never ignores"},
		{"ignore the pod template", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer("/spec/template"), InLive: true}, target, sidecar, "which Git declares"},
		{"ignore an injected annotation", FixIgnoreDifference,
			Finding{Resource: deploy, Path: MustPointer("/spec/template/metadata/annotations/sidecar.istio.io~1status"), InLive: true}, target, sidecar, ""},
		{"ignore a caBundle", FixIgnoreDifference,
			Finding{Resource: vwc, Path: MustPointer("/webhooks/0/clientConfig/caBundle"), InLive: true}, webhookGit, webhookGit, "never ignores"},
		{"remove an empty caBundle an injector fills", FixRemoveField,
			Finding{Resource: vwc, Path: MustPointer("/webhooks/0/clientConfig/caBundle"), InGit: true, Git: "", InLive: true, Live: "Q0E="}, webhookGit, nil, ""},
		{"remove a caBundle Git declares", FixRemoveField,
			Finding{Resource: vwc, Path: MustPointer("/webhooks/0/clientConfig/caBundle"), InGit: true, Git: "R0lU", InLive: true, Live: "Q0E="}, webhookGit, nil, "never removes it from Git"},
		{"rewrite a caBundle", FixSetValue,
			Finding{Resource: vwc, Path: MustPointer("/webhooks/0/clientConfig/caBundle"), InGit: true, Git: "", InLive: true, Live: "Q0E="}, webhookGit, nil, "never rewrites it in Git"},
		{"pin a chart-generated caBundle", FixPinHelmValue,
			Finding{Resource: vwc, Path: MustPointer("/webhooks/0/clientConfig/caBundle"), InGit: true, Git: "R0lU", InLive: true}, webhookGit, nil, "changes where the chart takes it from"},
		{"pin generated Secret data to an existing Secret", FixPinHelmValue,
			Finding{Resource: core("Secret"), Path: MustPointer("/data/password"), InGit: true, Git: "eA==", InLive: true}, nil, nil, ""},
		{"remove Secret data", FixRemoveField,
			Finding{Resource: core("Secret"), Path: MustPointer("/data/password"), InGit: true, Git: "eA==", InLive: true}, nil, nil, "secret"},
		{"remove an image a script changed", FixRemoveField,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/0/image"), InGit: true, Git: "web:1", InLive: true}, target, nil, "never removes it from Git"},
		{"remove rules of an aggregated ClusterRole", FixRemoveField,
			Finding{Resource: rbac("ClusterRole"), Path: MustPointer("/rules"), InGit: true, Git: []any{}, InLive: true}, aggregated, nil, ""},
		{"remove rules of a plain ClusterRole", FixRemoveField,
			Finding{Resource: rbac("ClusterRole"), Path: MustPointer("/rules"), InGit: true, Git: []any{}, InLive: true}, obj(map[string]any{"rules": []any{}}), nil, "RBAC"},
		{"remove an empty value the API server drops", FixRemoveField,
			Finding{Resource: core("Service"), Path: MustPointer("/spec/loadBalancerSourceRanges"), InGit: true, Git: []any{}}, nil, nil, ""},
		{"remove a whole NetworkPolicy ingress", FixRemoveField,
			Finding{Resource: Ref{Group: "networking.k8s.io", Kind: "NetworkPolicy", Name: "n"}, Path: MustPointer("/spec/ingress"), InGit: true,
				Git: []any{map[string]any{"from": []any{}}}, InLive: true}, nil, nil, "network exposure"},
		{"remove a parent that holds an image", FixRemoveField,
			Finding{Resource: deploy, Path: MustPointer(ps), InGit: true, Git: Lookup(target, "spec", "template", "spec"), InLive: true}, target, nil, "which Git declares"},
		{"write a live value that holds a hostPath into Git", FixSetValue,
			Finding{Resource: deploy, Path: MustPointer("/spec/template/spec"), InGit: true, Git: map[string]any{}, InLive: true, Live: Lookup(hostVol, "spec", "template", "spec")}, nil, nil, "volumes"},
		{"remove replicas", FixRemoveField,
			Finding{Resource: deploy, Path: MustPointer("/spec/replicas"), InGit: true, Git: 2, InLive: true, Live: 5}, target, nil, ""},
		{"tracking method is no path of a resource", FixTrackingMethod,
			Finding{Resource: deploy, Path: MustPointer(ps + "/containers/0/image")}, target, nil, ""},
	} {
		why, refused := s.Refuse(tc.kind, &tc.f, tc.target, tc.live)
		switch {
		case tc.refuse == "" && refused:
			t.Errorf("%s: refused (%s), want allowed", tc.name, why)
		case tc.refuse != "" && !refused:
			t.Errorf("%s: allowed, want refused", tc.name)
		case refused && !strings.Contains(why, tc.refuse):
			t.Errorf("%s: reason %q, want it to say %q", tc.name, why, tc.refuse)
		}
	}
}

// TestGuardKeepsCauseAndEvidence: a refused fix becomes none with the reason;
// the classifier's cause and evidence stay.
func TestGuardKeepsCauseAndEvidence(t *testing.T) {
	f := Finding{Resource: Ref{Kind: "Namespace", Name: "shop"}, Path: MustPointer("/metadata/labels/pod-security.kubernetes.io~1enforce"),
		Cause: CauseControllerWrite, InGit: true, Git: "restricted", InLive: true, Live: "privileged",
		Evidence: []Evidence{{Kind: EvidenceManager, Manager: "ops-toolbox", Text: "owned by ops-toolbox"}}, Remediation: Remediation{Kind: FixRemoveField}}
	Sensitivity{}.Guard(&f, nil, nil)
	if f.Remediation.Kind != FixNone || !strings.Contains(f.Remediation.Reason, "pod security") {
		t.Errorf("remediation %+v, want none naming pod security", f.Remediation)
	}
	if f.Cause != CauseControllerWrite || len(f.Evidence) != 1 {
		t.Errorf("cause %s evidence %q changed", f.Cause, f.Evidence)
	}
}

func TestParseSensitivePath(t *testing.T) {
	for _, tc := range []struct {
		in, kind, group, pattern, field string
	}{
		{"/spec/template/spec/dnsConfig", "", "*", "/spec/template/spec/dnsConfig", ""},
		{"spec.template.spec.containers[].env", "", "*", "/spec/template/spec/containers/*/env", ""},
		{"spec.template.spec.containers[*].env", "", "*", "/spec/template/spec/containers/*/env", ""},
		{"spec.ports[0].nodePort", "", "*", "/spec/ports/0/nodePort", ""},
		{`data.policy\.json`, "", "*", "/data/policy.json", ""},
		{"dnsConfig", "", "*", "", "dnsConfig"},
		{"Deployment:/spec/paused", "Deployment", "*", "/spec/paused", ""},
		{"apps/Deployment:spec.paused", "Deployment", "apps", "/spec/paused", ""},
		{"Namespace:metadata.labels.team", "Namespace", "*", "/metadata/labels/team", ""},
	} {
		sp, err := ParseSensitivePath(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got := ""
		if sp.Pattern != nil {
			got = sp.Pattern.String()
		}
		kind, group := "", "*"
		if len(sp.Scopes) == 1 {
			kind, group = sp.Scopes[0].Kind, sp.Scopes[0].Group
		}
		if kind != tc.kind || group != tc.group || got != tc.pattern || sp.Field != tc.field || len(sp.Scopes) > 1 {
			t.Errorf("%s: kind %q group %q pattern %q field %q", tc.in, kind, group, got, sp.Field)
		}
	}
	for _, bad := range []string{"", "  ", "/spec//x", "/", "spec..x", "spec.x[", "deployment:/x", "Deployment:", "has space", "/~2"} {
		if _, err := ParseSensitivePath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCheck: the check by kind alone, which judges existing rules against
// Git: a container Git declares is sensitive, an injected one Git does not
// declare is not by itself, and a ConfigMap key is never RBAC.
func TestCheck(t *testing.T) {
	git := Object{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "a", "image": "x"}},
	}}}}
	var s Sensitivity
	if _, why, ok := s.Check("Deployment", MustPointer("/spec/template/spec/containers"), git); !ok || why != ReasonImage {
		t.Errorf("a container list Git fills must be sensitive, got %q %v", why, ok)
	}
	if _, _, ok := s.Check("Deployment", MustPointer("/spec/template/spec/containers/1"), git); ok {
		t.Error("an injected container Git does not declare is not sensitive by itself")
	}
	if _, _, ok := s.Check("Deployment", MustPointer("/spec/template/spec/containers/1/securityContext/privileged"), nil); !ok {
		t.Error("privileged must be sensitive")
	}
	if _, _, ok := s.Check("ClusterRole", MustPointer("/rules"), nil); !ok {
		t.Error("ClusterRole rules must be sensitive")
	}
	if _, _, ok := s.Check("ConfigMap", MustPointer("/data/rules"), nil); ok {
		t.Error("a ConfigMap key named rules is not RBAC")
	}
	if _, _, ok := s.Check("ConfigMap", MustPointer("/data/image"), nil); ok {
		t.Error("a ConfigMap key named image is not judged as a custom resource's image")
	}
	if _, why, ok := s.Check("Prometheus", MustPointer("/spec/image"), nil); !ok || why != ReasonImage {
		t.Errorf("a custom resource's image is sensitive, got %q %v", why, ok)
	}
	extra, err := ParseSensitivePath("env")
	if err != nil {
		t.Fatal(err)
	}
	if _, why, ok := (Sensitivity{Extra: []SensitivePath{extra}}).Check("ConfigMap", MustPointer("/data/env"), nil); !ok || why != ReasonPolicy {
		t.Errorf("a policy field name must apply to every kind, got %q %v", why, ok)
	}
}

// TestCheckRef: the check for a resource whose group and name are known
// judges a custom resource named like a built-in kind by its own fields, and
// an object sensitive by its name by that name.
func TestCheckRef(t *testing.T) {
	var s Sensitivity
	ips := MustPointer("/spec/externalIPs")
	if _, _, ok := s.Check("Service", ips, nil); !ok {
		t.Error("by kind alone, a Service's externalIPs are sensitive")
	}
	if _, _, ok := s.CheckRef(Ref{Kind: "Service", Namespace: "shop", Name: "web"}, ips, nil); !ok {
		t.Error("a core Service's externalIPs are sensitive")
	}
	if _, _, ok := s.CheckRef(Ref{Group: "serving.knative.dev", Kind: "Service", Namespace: "shop", Name: "web"}, ips, nil); ok {
		t.Error("a Knative Service is not judged by the core Service's entries")
	}
	if _, why, ok := s.CheckRef(Ref{Group: "serving.knative.dev", Kind: "Service", Namespace: "shop", Name: "web"}, MustPointer("/spec/template/spec/containers/0/image"), nil); !ok || why != ReasonImage {
		t.Errorf("a Knative Service's image is sensitive by its field name, got %q %v", why, ok)
	}
	accounts := MustPointer("/data/accounts.driftfix")
	if _, _, ok := s.Check("ConfigMap", accounts, nil); ok {
		t.Error("by kind alone, a ConfigMap key is not sensitive")
	}
	if _, _, ok := s.CheckRef(Ref{Kind: "ConfigMap", Namespace: "argocd", Name: "argocd-cm"}, accounts, nil); !ok {
		t.Error("argocd-cm's data is sensitive by the object's name")
	}
}

// TestSensitiveTableRefusesMalformed: a table with a malformed entry is
// refused with an error naming the entry (its place and pattern) and what
// is wrong, so the program stops at start instead of running with a hole in
// its safety model.
func TestSensitiveTableRefusesMalformed(t *testing.T) {
	good := "- {scope: core/Secret, pattern: /data, reason: secret, what: Secret data, source: \"https://kubernetes.io/docs/concepts/configuration/secret/\"}\n"
	if _, err := parseTable([]byte("paths:\n" + good)); err != nil {
		t.Fatalf("a well-formed table: %v", err)
	}
	for _, tc := range []struct{ entry, want string }{
		{"- {scope: core/Secret, pattern: /data, reason: secret, what: Secret data}", "entry 2 (core/Secret /data): source must be an https:// URL"},
		{"- {scope: core/Secret, pattern: /data, reason: secrets, what: x, source: \"https://x.example/\"}", "entry 2 (core/Secret /data): reason \"secrets\""},
		{"- {scope: core/Secret, pattern: /data, reason: secret, source: \"https://x.example/\"}", "entry 2 (core/Secret /data): what is empty"},
		{"- {scope: secret, pattern: /data, reason: secret, what: x, source: \"https://x.example/\"}", "entry 2 (secret /data): \"secret\" is not a scope"},
		{"- {scope: core/Secret, pattern: \"/spec//x\", reason: secret, what: x, source: \"https://x.example/\"}", "entry 2 (core/Secret /spec//x): "},
		{"- {scope: core/Secret, pattern: /data, mode: all, reason: secret, what: x, source: \"https://x.example/\"}", "entry 2 (core/Secret /data): mode \"all\""},
		{"- {scope: pod, pattern: image, reason: image, what: x, source: \"https://x.example/\"}", "entry 2 (pod image): pattern \"image\" is a field name"},
		{"- {scope: core/Secret, pattern: /data, reason: secret, what: x, hidden: sometimes, source: \"https://x.example/\"}", "entry 2 (core/Secret /data): hidden \"sometimes\""},
		{"- {scope: core/Secret, pattern: /data, reason: secret, what: x, allow: remove-all, source: \"https://x.example/\"}", "entry 2 (core/Secret /data): allow \"remove-all\""},
		{"- {scope: pod, name: web, pattern: /x, reason: secret, what: x, source: \"https://x.example/\"}", "entry 2 (pod /x): name \"web\" needs a scope of one kind"},
		{"- {scope: core/Secret, patern: /data, reason: secret, what: x, source: \"https://x.example/\"}", "field patern not found"},
	} {
		_, err := parseTable([]byte("paths:\n" + good + tc.entry + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.entry, err, tc.want)
		}
	}
	if _, err := parseTable([]byte("podSpecs: [{kind: Deployment, at: /spec/template/spec}]\npaths:\n" + good)); err == nil || !strings.Contains(err.Error(), "podSpecs entry 1 (Deployment)") {
		t.Errorf("a pod spec of a kind in any group: %v", err)
	}
}

// FuzzParseSensitiveTable: reading any table, built-in or written like a
// policy's entries, returns a table or an error, never a panic, and a table
// it accepts answers questions.
func FuzzParseSensitiveTable(f *testing.F) {
	f.Add(string(sensitiveYAML))
	f.Add("paths:\n- {scope: [core/Secret, apps/*], name: x, pattern: spec.a[].b, mode: whole, reason: secret, what: x, hidden: \"equals:y\", source: \"https://x\"}\n")
	f.Add("paths:\n- {scope: custom, pattern: image, reason: image, what: x, hidden: \"names:path\", source: \"https://x\"}\n")
	f.Fuzz(func(t *testing.T, data string) {
		tb, err := parseTable([]byte(data))
		if err != nil {
			return
		}
		for i := range tb.paths {
			e := &tb.paths[i]
			e.match(Ref{Group: "apps", Kind: "Deployment", Name: "x"}, MustPointer("/spec/template/spec/containers/0/image"))
		}
	})
}

// TestAddingASecurityPathIsOneEntry: a new security-relevant path is one
// entry of sensitive.yaml (docs/development.md, "How to add a
// security-relevant path"): appended to the table, it makes its path
// sensitive for the kinds it names, and every other decision on the
// snapshots' paths stays as it was.
func TestAddingASecurityPathIsOneEntry(t *testing.T) {
	data := string(sensitiveYAML) + `- scope: apps/Deployment
  pattern: /spec/paused
  reason: what runs
  what: whether the Deployment's rollout is paused
  source: https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#pausing-and-resuming-a-rollout-of-a-deployment
`
	grown, err := parseTable([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(grown.paths) != len(builtin.paths)+1 {
		t.Fatalf("%d entries, want %d", len(grown.paths), len(builtin.paths)+1)
	}
	cases := generatedCases(t)
	delete(cases, "table")
	for src, cs := range cases {
		for _, c := range cs {
			if c.ref.Group == "apps" && c.ref.Kind == "Deployment" && c.p.String() == "/spec" {
				cases[src] = append(cases[src], decisionCase{ref: c.ref, p: MustPointer("/spec/paused"), target: c.target, live: c.live})
				break
			}
		}
	}
	before := decisionLines(t, cases, newJudge(Sensitivity{}), newJudge(Sensitivity{}))
	saved := builtin
	defer func() { builtin = saved }()
	builtin = grown
	after := decisionLines(t, cases, newJudge(Sensitivity{}), newJudge(Sensitivity{}))

	if m, ok := (Sensitivity{}).Within(deploy, MustPointer("/spec/paused")); !ok || m.Reason != ReasonWhatRuns {
		t.Errorf("the new path: %+v %v", m, ok)
	}
	if _, ok := (Sensitivity{}).Within(Ref{Group: "apps", Kind: "StatefulSet", Name: "s"}, MustPointer("/spec/paused")); ok {
		t.Error("the new entry names Deployments only")
	}
	changed := 0
	for src, lines := range before {
		for i, l := range lines {
			if after[src][i] == l {
				continue
			}
			changed++
			if !strings.HasPrefix(strings.TrimSpace(l), "/spec/paused:") {
				t.Errorf("%s: a decision the new entry should not touch changed:\nbefore: %s\nafter:  %s", src, l, after[src][i])
			}
		}
	}
	if changed == 0 {
		t.Error("no decision on a Deployment's /spec/paused changed")
	}
}
