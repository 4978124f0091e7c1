//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// genManifest is one generated manifest of the differential test, in the
// Application (a directory of the Git repository) that syncs it.
type genManifest struct {
	app, file, yaml string
}

// The differential test's Applications: one per family of kinds, so that one
// manifest Argo CD cannot sync does not stop the others; diff-novalidate syncs
// with Validate=false (fields the kind does not declare), diff-ssa with
// ServerSideApply=true (a copy of the namespaced variations).
const (
	appWorkloads  = "diff-workloads"
	appNetwork    = "diff-network"
	appConfig     = "diff-config"
	appRBAC       = "diff-rbac"
	appCluster    = "diff-cluster"
	appCRs        = "diff-crs"
	appNoValidate = "diff-novalidate"
	appSSA        = "diff-ssa"
)

// differentialCRDs are applied with kubectl before the Applications sync.
const differentialCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.diff.example.com}
spec:
  group: diff.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget}
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
              size: {type: integer, default: 3}
              mode: {type: string, default: auto}
              ratio: {type: number}
              enabled: {type: boolean, default: false}
              label: {type: string}
              port: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
              ports:
                type: array
                items: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
              limits:
                type: object
                additionalProperties: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}], pattern: '^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$'}
              timeout: {type: string, format: duration}
              tags: {type: array, items: {type: string}}
              nested:
                type: object
                default: {}
                properties:
                  level: {type: integer, default: 1}
                  note: {type: string}
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    weight: {type: integer, default: 10}
              extras:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              nullable: {type: string, nullable: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: blobs.diff.example.com}
spec:
  group: diff.example.com
  names: {kind: Blob, plural: blobs, singular: blob}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// cpuForms and memForms are quantities as people write them; the API server
// stores each in its canonical form on built-in kinds.
var (
	cpuForms = []string{"1000m", "0.5", "1", "500m", "1.5", "2000m", "+1", "100m", "0.1", "1e3m", "250m", "2", "0.25", "1500m"}
	memForms = []string{"1024Mi", "0.5Gi", "1e3", "1000M", "128974848", "129e6", "123Mi", "1Gi", "1e9", "0.0625Gi", "64Mi", "2048Ki", "1G", "512Mi"}
)

// differentialManifests generates the manifests, at least 300.
func differentialManifests() []genManifest {
	s := &manifestSet{}
	s.deploymentManifests()
	s.workloadManifests()
	s.networkManifests()
	s.configManifests()
	s.rbacManifests()
	s.clusterManifests()
	s.customResourceManifests()
	s.undeclaredFieldManifests()
	return append(s.out, serverSideCopies(s.out)...)
}

// manifestSet gathers the generated manifests.
type manifestSet struct{ out []genManifest }

// add adds the manifest body of kind and name to Application app.
func (s *manifestSet) add(app, kind, name, body string) {
	s.out = append(s.out, genManifest{app: app, file: strings.ToLower(kind) + "-" + name + ".yaml", yaml: body})
}

// genDeployment is a Deployment of one container with the given extra
// lines of pod spec, container, spec and metadata.
func genDeployment(name, podSpecExtra, containerExtra, specExtra, metaExtra string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
%sspec:
  selector:
    matchLabels: {app: %s}
%s  template:
    metadata:
      labels: {app: %s}
    spec:
%s      containers:
      - name: main
        image: registry.example.com/app:1.0
%s`, name, metaExtra, name, specExtra, name, podSpecExtra, containerExtra)
}

// genService is a Service with the given spec lines.
func genService(name, spec string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec:\n%s", name, spec)
}

// genGadget is a Gadget custom resource with the given spec and metadata
// lines.
func genGadget(name, spec, meta string) string {
	return fmt.Sprintf("apiVersion: diff.example.com/v1\nkind: Gadget\nmetadata:\n  name: %s\n%sspec:\n%s", name, meta, spec)
}

// deploymentManifests are Deployments: quantities, zero and empty values,
// omitted defaults.
func (s *manifestSet) deploymentManifests() {
	// --- Deployments: quantities, zero and empty values, omitted defaults.
	for i := range cpuForms {
		s.add(appWorkloads, "Deployment", fmt.Sprintf("q%d", i), genDeployment(fmt.Sprintf("q%d", i), "", fmt.Sprintf(
			"        resources:\n          limits: {cpu: %q, memory: %q}\n          requests: {cpu: 10m}\n", cpuForms[i], memForms[i]), "", ""))
	}
	for i, m := range memForms {
		s.add(appWorkloads, "Deployment", fmt.Sprintf("rq%d", i), genDeployment(fmt.Sprintf("rq%d", i), "", fmt.Sprintf(
			"        resources:\n          requests: {memory: %q, cpu: %q}\n", m, cpuForms[(i+3)%len(cpuForms)]), "", ""))
	}
	depVariants := []struct{ name, pod, ctr, spec, meta string }{
		{"replicas-omitted", "", "", "", ""},
		{"replicas-zero", "", "", "  replicas: 0\n", ""},
		{"replicas-one", "", "", "  replicas: 1\n", ""},
		{"annotations-empty", "", "", "", "  annotations: {}\n"},
		{"labels-empty", "", "", "", "  labels: {}\n"},
		{"env-empty", "", "        env: []\n", "", ""},
		{"env-empty-value", "", "        env:\n        - {name: A, value: \"\"}\n        - {name: B, value: \"1\"}\n", "", ""},
		{"env-fieldref", "", "        env:\n        - name: POD\n          valueFrom: {fieldRef: {fieldPath: metadata.name}}\n", "", ""},
		{"env-resourcefieldref", "", "        env:\n        - name: CPU\n          valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1000m}}\n", "", ""},
		{"ports-no-protocol", "", "        ports:\n        - containerPort: 8080\n", "", ""},
		{"ports-named", "", "        ports:\n        - {name: http, containerPort: 8080, protocol: TCP}\n        - {name: metrics, containerPort: 9090}\n", "", ""},
		{"ports-udp", "", "        ports:\n        - {containerPort: 53, protocol: UDP}\n        - {containerPort: 53, protocol: TCP}\n", "", ""},
		{"strategy-empty", "", "", "  strategy: {}\n", ""},
		{"strategy-recreate", "", "", "  strategy: {type: Recreate}\n", ""},
		{"strategy-int", "", "", "  strategy:\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}\n", ""},
		{"strategy-percent", "", "", "  strategy:\n    type: RollingUpdate\n    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}\n", ""},
		{"explicit-defaults", "      dnsPolicy: ClusterFirst\n      restartPolicy: Always\n      schedulerName: default-scheduler\n      terminationGracePeriodSeconds: 30\n      securityContext: {}\n",
			"        imagePullPolicy: IfNotPresent\n        terminationMessagePath: /dev/termination-log\n        terminationMessagePolicy: File\n",
			"  revisionHistoryLimit: 10\n  progressDeadlineSeconds: 600\n", ""},
		{"pull-latest", "", "        imagePullPolicy: Always\n", "", ""},
		{"security-empty", "      securityContext: {}\n", "        securityContext: {}\n", "", ""},
		{"security-false", "      hostNetwork: false\n      hostPID: false\n", "        securityContext: {privileged: false, runAsNonRoot: false, readOnlyRootFilesystem: false}\n", "", ""},
		{"resources-empty", "", "        resources: {}\n", "", ""},
		{"resources-limits-empty", "", "        resources: {limits: {}, requests: {}}\n", "", ""},
		{"command-empty", "", "        command: []\n        args: []\n", "", ""},
		{"args-numbers", "", "        args: [\"--port\", \"8080\", \"--ratio=0.5\"]\n", "", ""},
		{"emptydir", "      volumes:\n      - name: tmp\n        emptyDir: {}\n", "        volumeMounts:\n        - {name: tmp, mountPath: /tmp}\n", "", ""},
		{"emptydir-size", "      volumes:\n      - name: tmp\n        emptyDir: {sizeLimit: 1024Mi}\n", "", "", ""},
		{"emptydir-memory", "      volumes:\n      - name: tmp\n        emptyDir: {medium: Memory, sizeLimit: 0.5Gi}\n", "", "", ""},
		{"configmap-volume", "      volumes:\n      - name: cfg\n        configMap: {name: settings}\n", "", "", ""},
		{"configmap-volume-mode", "      volumes:\n      - name: cfg\n        configMap: {name: settings, defaultMode: 420}\n", "", "", ""},
		{"secret-volume-octal", "      volumes:\n      - name: sec\n        secret: {secretName: creds, defaultMode: 0400}\n", "", "", ""},
		{"secret-volume-items", "      volumes:\n      - name: sec\n        secret:\n          secretName: creds\n          items: [{key: a, path: a.txt}]\n", "", "", ""},
		{"projected", "      volumes:\n      - name: all\n        projected:\n          sources:\n          - configMap: {name: settings}\n          - serviceAccountToken: {path: token}\n", "", "", ""},
		{"tolerations-empty", "      tolerations: []\n      nodeSelector: {}\n", "", "", ""},
		{"affinity-empty", "      affinity: {}\n", "", "", ""},
		{"tolerations", "      tolerations:\n      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}\n      - {operator: Exists}\n", "", "", ""},
		{"init-empty", "      initContainers: []\n", "", "", ""},
		{"init", "      initContainers:\n      - name: init\n        image: registry.example.com/init:1\n", "", "", ""},
		{"probe-port-name", "", "        ports: [{name: http, containerPort: 8080}]\n        livenessProbe:\n          httpGet: {path: /healthz, port: http}\n", "", ""},
		{"probe-port-int", "", "        readinessProbe:\n          httpGet: {path: /ready, port: 8080}\n          periodSeconds: 10\n", "", ""},
		{"probe-tcp-defaults", "", "        startupProbe:\n          tcpSocket: {port: 8080}\n          timeoutSeconds: 1\n          successThreshold: 1\n          failureThreshold: 3\n", "", ""},
		{"probe-exec", "", "        livenessProbe:\n          exec: {command: [cat, /tmp/ok]}\n          initialDelaySeconds: 0\n", "", ""},
		{"probe-grpc", "", "        livenessProbe:\n          grpc: {port: 9000}\n", "", ""},
		{"lifecycle", "", "        lifecycle:\n          preStop:\n            exec: {command: [sleep, \"5\"]}\n", "", ""},
		{"topology", "      topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: ScheduleAnyway\n        labelSelector: {matchLabels: {app: topology}}\n", "", "", ""},
		{"pull-secrets-empty", "      imagePullSecrets: []\n", "", "", ""},
		{"pull-secrets", "      imagePullSecrets: [{name: regcred}]\n", "", "", ""},
		{"min-ready-zero", "", "", "  minReadySeconds: 0\n  paused: false\n", ""},
		{"sa-name", "      serviceAccountName: default\n", "", "", ""},
		{"automount-false", "      automountServiceAccountToken: false\n      enableServiceLinks: false\n", "", "", ""},
		{"host-aliases", "      hostAliases:\n      - ip: 10.1.2.3\n        hostnames: [db.local]\n", "", "", ""},
		{"dns-config", "      dnsConfig:\n        options:\n        - {name: ndots, value: \"2\"}\n", "", "", ""},
		{"two-containers", "", "      - name: sidecar\n        image: registry.example.com/sidecar:1\n        resources: {limits: {memory: 1024Mi}}\n", "", ""},
		{"env-from", "", "        envFrom:\n        - configMapRef: {name: settings}\n        - prefix: S_\n          secretRef: {name: creds, optional: true}\n", "", ""},
		{"volume-mount-ro-false", "      volumes: [{name: tmp, emptyDir: {}}]\n", "        volumeMounts:\n        - {name: tmp, mountPath: /tmp, readOnly: false}\n", "", ""},
		{"priority-zero", "      priority: 0\n", "", "", ""},
		{"annotations-template-empty", "", "", "", "  annotations:\n    note: \"\"\n"},
		{"revision-history-zero", "", "", "  revisionHistoryLimit: 0\n", ""},
	}
	for _, v := range depVariants {
		s.add(appWorkloads, "Deployment", v.name, genDeployment(v.name, v.pod, v.ctr, v.spec, v.meta))
	}
}

// workloadManifests are the other workloads: StatefulSets, DaemonSets,
// Jobs, CronJobs and Pods.
func (s *manifestSet) workloadManifests() {
	// --- StatefulSets, DaemonSets, Jobs, CronJobs, Pods.
	sts := func(name, extra, vctExtra string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %s}
spec:
  serviceName: %s
  selector: {matchLabels: {app: %s}}
%s  template:
    metadata: {labels: {app: %s}}
    spec:
      containers:
      - name: main
        image: registry.example.com/db:1.0
%s`, name, name, name, extra, name, vctExtra)
	}
	stsVariants := []struct{ name, extra, vct string }{
		{"sts-plain", "", ""},
		{"sts-replicas", "  replicas: 1\n", ""},
		{"sts-vct", "  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources: {requests: {storage: 1024Mi}}\n", ""},
		{"sts-vct-typed", "  volumeClaimTemplates:\n  - apiVersion: v1\n    kind: PersistentVolumeClaim\n    metadata: {name: data}\n    spec:\n      accessModes: [ReadWriteOnce]\n      volumeMode: Filesystem\n      resources: {requests: {storage: 1Gi}}\n", ""},
		{"sts-policy", "  podManagementPolicy: Parallel\n  updateStrategy: {type: OnDelete}\n", ""},
		{"sts-explicit-defaults", "  podManagementPolicy: OrderedReady\n  revisionHistoryLimit: 10\n  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {partition: 0}\n  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}\n", ""},
		{"sts-ordinals", "  ordinals: {start: 0}\n  minReadySeconds: 0\n", ""},
		{"sts-quantity", "", "        resources: {limits: {cpu: 1000m, memory: 1024Mi}}\n"},
	}
	for _, v := range stsVariants {
		s.add(appWorkloads, "StatefulSet", v.name, sts(v.name, v.extra, v.vct))
	}
	ds := func(name, extra, ctr string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: %s}
spec:
  selector: {matchLabels: {app: %s}}
%s  template:
    metadata: {labels: {app: %s}}
    spec:
      containers:
      - name: agent
        image: registry.example.com/agent:1.0
%s`, name, name, extra, name, ctr)
	}
	for _, v := range []struct{ name, extra, ctr string }{
		{"ds-plain", "", ""},
		{"ds-ondelete", "  updateStrategy: {type: OnDelete}\n", ""},
		{"ds-rolling", "  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {maxUnavailable: 1, maxSurge: 0}\n", ""},
		{"ds-percent", "  updateStrategy:\n    rollingUpdate: {maxUnavailable: 10%}\n", ""},
		{"ds-quantity", "", "        resources: {requests: {cpu: \"0.1\", memory: 100Mi}, limits: {cpu: 200m, memory: 0.25Gi}}\n"},
		{"ds-hostport", "", "        ports: [{containerPort: 9100, hostPort: 9100}]\n"},
		{"ds-history", "  revisionHistoryLimit: 10\n  minReadySeconds: 0\n", ""},
	} {
		s.add(appWorkloads, "DaemonSet", v.name, ds(v.name, v.extra, v.ctr))
	}
	job := func(name, extra string) string {
		return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s}
spec:
  suspend: true
%s  template:
    spec:
      restartPolicy: Never
      containers:
      - name: task
        image: registry.example.com/task:1.0
`, name, extra)
	}
	for _, v := range []struct{ name, extra string }{
		{"job-plain", ""},
		{"job-backoff", "  backoffLimit: 6\n  completions: 1\n  parallelism: 1\n"},
		{"job-indexed", "  completionMode: Indexed\n  completions: 3\n  parallelism: 2\n"},
		{"job-ttl", "  ttlSecondsAfterFinished: 100\n  activeDeadlineSeconds: 600\n"},
		{"job-manual-false", "  manualSelector: false\n"},
		{"job-pod-failure", "  podFailurePolicy:\n    rules:\n    - action: FailJob\n      onExitCodes: {operator: In, values: [42]}\n"},
		{"job-pod-replacement", "  podReplacementPolicy: Failed\n"},
	} {
		s.add(appWorkloads, "Job", v.name, job(v.name, v.extra))
	}
	cron := func(name, extra string) string {
		return fmt.Sprintf(`apiVersion: batch/v1
kind: CronJob
metadata: {name: %s}
spec:
  schedule: "0 3 1 1 *"
%s  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: task
            image: registry.example.com/task:1.0
`, name, extra)
	}
	for _, v := range []struct{ name, extra string }{
		{"cron-plain", ""},
		{"cron-suspend", "  suspend: true\n"},
		{"cron-suspend-false", "  suspend: false\n"},
		{"cron-defaults", "  concurrencyPolicy: Allow\n  successfulJobsHistoryLimit: 3\n  failedJobsHistoryLimit: 1\n"},
		{"cron-forbid", "  concurrencyPolicy: Forbid\n  startingDeadlineSeconds: 200\n"},
		{"cron-timezone", "  timeZone: Etc/UTC\n"},
	} {
		s.add(appWorkloads, "CronJob", v.name, cron(v.name, v.extra))
	}
	for _, v := range []struct{ name, extra string }{
		{"pod-plain", ""},
		{"pod-quantity", "    resources: {limits: {cpu: 1000m, memory: 1024Mi}}\n"},
		{"pod-requests-only", "    resources: {requests: {cpu: \"0.5\"}}\n"},
	} {
		s.add(appWorkloads, "Pod", v.name, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n  - name: main\n    image: registry.example.com/app:1.0\n%s", v.name, v.extra))
	}
	s.add(appWorkloads, "ReplicaSet", "rs-plain", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs-plain}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: rs-plain}}\n  template:\n    metadata: {labels: {app: rs-plain}}\n    spec:\n      containers:\n      - {name: main, image: registry.example.com/app:1.0}\n")
	s.add(appWorkloads, "PodTemplate", "pt-plain", "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt-plain}\ntemplate:\n  metadata: {labels: {app: pt}}\n  spec:\n    containers:\n    - {name: main, image: registry.example.com/app:1.0, resources: {limits: {cpu: 1000m}}}\n")
}

// networkManifests are Services, NetworkPolicies and Ingresses.
func (s *manifestSet) networkManifests() {
	// --- Services and networking.
	for _, v := range []struct{ name, spec string }{
		{"svc-port-only", "  selector: {app: web}\n  ports:\n  - port: 80\n"},
		{"svc-target-int", "  selector: {app: web}\n  ports:\n  - {port: 80, targetPort: 8080}\n"},
		{"svc-target-name", "  selector: {app: web}\n  ports:\n  - {name: http, port: 80, targetPort: http}\n"},
		{"svc-protocol", "  selector: {app: web}\n  ports:\n  - {port: 53, protocol: UDP}\n  - {name: tcp, port: 53, protocol: TCP}\n"},
		{"svc-multi", "  selector: {app: web}\n  ports:\n  - {name: http, port: 80}\n  - {name: https, port: 443, targetPort: 8443}\n"},
		{"svc-type-explicit", "  type: ClusterIP\n  sessionAffinity: None\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-nodeport", "  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-nodeport-fixed", "  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80, nodePort: 30080}]\n"},
		{"svc-nodeport-policy", "  type: NodePort\n  externalTrafficPolicy: Local\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-lb", "  type: LoadBalancer\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-lb-no-nodeports", "  type: LoadBalancer\n  allocateLoadBalancerNodePorts: false\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-headless", "  clusterIP: None\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-clusterip-empty", "  clusterIP: \"\"\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-externalname", "  type: ExternalName\n  externalName: db.example.com\n"},
		{"svc-no-selector", "  ports: [{port: 5432}]\n"},
		{"svc-selector-empty", "  selector: {}\n  ports: [{port: 80}]\n"},
		{"svc-ipfamily", "  ipFamilyPolicy: SingleStack\n  ipFamilies: [IPv4]\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-internal-policy", "  internalTrafficPolicy: Cluster\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-app-protocol", "  selector: {app: web}\n  ports: [{name: grpc, port: 9000, appProtocol: grpc}]\n"},
		{"svc-affinity", "  sessionAffinity: ClientIP\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
		{"svc-publish", "  publishNotReadyAddresses: false\n  selector: {app: web}\n  ports: [{port: 80}]\n"},
	} {
		s.add(appNetwork, "Service", v.name, genService(v.name, v.spec))
	}
	netpol := func(name, spec string) string {
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: %s}\nspec:\n%s", name, spec)
	}
	for _, v := range []struct{ name, spec string }{
		{"np-deny-all", "  podSelector: {}\n"},
		{"np-ingress-empty", "  podSelector: {}\n  ingress: []\n"},
		{"np-allow-all", "  podSelector: {}\n  ingress: [{}]\n"},
		{"np-types", "  podSelector: {}\n  policyTypes: [Ingress, Egress]\n"},
		{"np-egress-only", "  podSelector: {matchLabels: {app: web}}\n  egress:\n  - to: [{ipBlock: {cidr: 10.0.0.0/8}}]\n"},
		{"np-ports", "  podSelector: {matchLabels: {app: web}}\n  ingress:\n  - ports:\n    - port: 80\n    - {port: http, protocol: TCP}\n"},
		{"np-endport", "  podSelector: {}\n  egress:\n  - ports:\n    - {port: 32000, endPort: 32768}\n"},
		{"np-from", "  podSelector: {}\n  ingress:\n  - from:\n    - namespaceSelector: {matchLabels: {team: a}}\n      podSelector: {matchLabels: {role: client}}\n"},
	} {
		s.add(appNetwork, "NetworkPolicy", v.name, netpol(v.name, v.spec))
	}
	ing := func(name, spec string) string {
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s}\nspec:\n%s", name, spec)
	}
	for _, v := range []struct{ name, spec string }{
		{"ing-port-number", "  rules:\n  - host: a.example.com\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n"},
		{"ing-port-name", "  rules:\n  - http:\n      paths:\n      - {path: /api, pathType: ImplementationSpecific, backend: {service: {name: web, port: {name: http}}}}\n"},
		{"ing-class", "  ingressClassName: diff-nginx\n  rules:\n  - host: b.example.com\n    http:\n      paths:\n      - {path: /, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}\n"},
		{"ing-tls-empty", "  tls: []\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n"},
		{"ing-tls", "  tls:\n  - hosts: [c.example.com]\n    secretName: c-tls\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n"},
	} {
		s.add(appNetwork, "Ingress", v.name, ing(v.name, v.spec))
	}
	s.add(appNetwork, "Endpoints", "ep-manual", "apiVersion: v1\nkind: Endpoints\nmetadata: {name: svc-no-selector}\nsubsets:\n- addresses: [{ip: 10.1.1.1}]\n  ports: [{port: 5432}]\n")
}

// configManifests are configuration, storage and policy objects.
func (s *manifestSet) configManifests() {
	// --- Configuration, storage, policy.
	for _, v := range []struct{ name, body string }{
		{"cm-plain", "data: {key: value}\n"},
		{"cm-empty-data", "data: {}\n"},
		{"cm-no-data", ""},
		{"cm-numbers", "data: {port: \"8080\", ratio: \"0.5\", enabled: \"true\", big: \"1e3\"}\n"},
		{"cm-empty-value", "data: {empty: \"\"}\n"},
		{"cm-multiline", "data:\n  config.yaml: |\n    a: 1\n    b: [x, y]\n"},
		{"cm-binary", "binaryData: {blob: aGVsbG8=}\n"},
		{"cm-immutable-false", "immutable: false\ndata: {a: b}\n"},
		{"cm-labels-empty", "data: {a: b}\n"},
		{"cm-annotations-empty", "data: {a: b}\n"},
		{"cm-null-data", "data:\n"},
	} {
		meta := ""
		switch v.name {
		case "cm-labels-empty":
			meta = "  labels: {}\n"
		case "cm-annotations-empty":
			meta = "  annotations: {}\n"
		}
		s.add(appConfig, "ConfigMap", v.name, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n%s%s", v.name, meta, v.body))
	}
	s.add(appConfig, "ConfigMap", "settings", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n")
	for _, v := range []struct{ name, body string }{
		{"sec-data", "data: {password: c2VjcmV0}\n"},
		{"sec-stringdata", "stringData: {password: secret}\n"},
		{"sec-both", "data: {a: YQ==}\nstringData: {b: b}\n"},
		{"sec-type-explicit", "type: Opaque\ndata: {a: YQ==}\n"},
		{"sec-empty-stringdata", "stringData: {}\n"},
		{"sec-empty-value", "stringData: {empty: \"\"}\n"},
		{"sec-no-data", ""},
		{"sec-tls", "type: kubernetes.io/tls\ndata: {tls.crt: \"\", tls.key: \"\"}\n"},
		{"sec-stringdata-number", "stringData: {port: \"8080\"}\n"},
		{"sec-immutable", "immutable: true\ndata: {a: YQ==}\n"},
	} {
		s.add(appConfig, "Secret", v.name, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\n%s", v.name, v.body))
	}
	s.add(appConfig, "Secret", "creds", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {a: b}\n")
	for _, v := range []struct{ name, body string }{
		{"sa-plain", ""},
		{"sa-automount-false", "automountServiceAccountToken: false\n"},
		{"sa-automount-true", "automountServiceAccountToken: true\n"},
		{"sa-pull-secrets", "imagePullSecrets: [{name: regcred}]\n"},
		{"sa-secrets-empty", "secrets: []\n"},
	} {
		s.add(appConfig, "ServiceAccount", v.name, fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: %s}\n%s", v.name, v.body))
	}
	for i, st := range []string{"1024Mi", "1Gi", "1e9", "0.5Gi", "500M", "1000Mi"} {
		s.add(appConfig, "PersistentVolumeClaim", fmt.Sprintf("pvc-q%d", i), fmt.Sprintf("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-q%d}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: %q}}\n", i, st))
	}
	s.add(appConfig, "PersistentVolumeClaim", "pvc-mode", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-mode}\nspec:\n  accessModes: [ReadWriteOnce]\n  volumeMode: Filesystem\n  storageClassName: \"\"\n  resources: {requests: {storage: 1Gi}}\n")
	s.add(appConfig, "PersistentVolumeClaim", "pvc-class", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: pvc-class}\nspec:\n  accessModes: [ReadWriteMany, ReadOnlyMany]\n  storageClassName: diff-standard\n  resources: {requests: {storage: 10Gi}, limits: {storage: 20Gi}}\n")
	for _, v := range []struct{ name, spec string }{
		{"pdb-min-int", "  minAvailable: 1\n  selector: {matchLabels: {app: web}}\n"},
		{"pdb-min-percent", "  minAvailable: 50%\n  selector: {matchLabels: {app: web}}\n"},
		{"pdb-max-zero", "  maxUnavailable: 0\n  selector: {matchLabels: {app: web}}\n"},
		{"pdb-max-string", "  maxUnavailable: \"25%\"\n  selector: {matchLabels: {app: web}}\n"},
		{"pdb-selector-empty", "  maxUnavailable: 1\n  selector: {}\n"},
		{"pdb-eviction", "  minAvailable: 1\n  unhealthyPodEvictionPolicy: AlwaysAllow\n  selector: {matchLabels: {app: web}}\n"},
	} {
		s.add(appConfig, "PodDisruptionBudget", v.name, fmt.Sprintf("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: %s}\nspec:\n%s", v.name, v.spec))
	}
	hpa := func(name, spec string) string {
		return fmt.Sprintf("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: %s}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: absent-%s}\n  maxReplicas: 5\n%s", name, name, spec)
	}
	for _, v := range []struct{ name, spec string }{
		{"hpa-no-metrics", ""},
		{"hpa-min", "  minReplicas: 1\n"},
		{"hpa-cpu", "  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}\n"},
		{"hpa-memory-value", "  metrics:\n  - type: Resource\n    resource: {name: memory, target: {type: AverageValue, averageValue: 1024Mi}}\n"},
		{"hpa-cpu-value", "  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: AverageValue, averageValue: \"0.5\"}}\n"},
		{"hpa-two-metrics", "  metrics:\n  - type: Resource\n    resource: {name: memory, target: {type: Utilization, averageUtilization: 70}}\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\n"},
		{"hpa-behavior-partial", "  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60}\n"},
		{"hpa-behavior-policies", "  behavior:\n    scaleUp:\n      policies: [{type: Pods, value: 4, periodSeconds: 15}]\n"},
		{"hpa-pods-metric", "  metrics:\n  - type: Pods\n    pods:\n      metric: {name: requests}\n      target: {type: AverageValue, averageValue: 1000m}\n"},
		{"hpa-external", "  metrics:\n  - type: External\n    external:\n      metric: {name: queue, selector: {matchLabels: {q: a}}}\n      target: {type: Value, value: \"100\"}\n"},
	} {
		s.add(appConfig, "HorizontalPodAutoscaler", v.name, hpa(v.name, v.spec))
	}
	for _, v := range []struct{ name, spec string }{
		{"lr-max", "  limits:\n  - type: Container\n    max: {cpu: \"2\", memory: 1024Mi}\n"},
		{"lr-default", "  limits:\n  - type: Container\n    default: {cpu: 500m, memory: 0.5Gi}\n    defaultRequest: {cpu: \"0.1\"}\n"},
		{"lr-pvc", "  limits:\n  - type: PersistentVolumeClaim\n    min: {storage: 1024Mi}\n    max: {storage: 10Gi}\n"},
		{"lr-ratio", "  limits:\n  - type: Container\n    maxLimitRequestRatio: {cpu: \"2\"}\n"},
		{"lr-pod", "  limits:\n  - type: Pod\n    max: {cpu: 4000m}\n"},
	} {
		// In a namespace without Pods or claims, which the limits would refuse.
		s.add(appCluster, "LimitRange", v.name, fmt.Sprintf("apiVersion: v1\nkind: LimitRange\nmetadata: {name: %s}\nspec:\n%s", v.name, v.spec))
	}
	for _, v := range []struct{ name, spec string }{
		{"rq-compute", "  hard: {requests.cpu: 1000m, requests.memory: 1024Mi, limits.cpu: \"4\", limits.memory: 4Gi}\n"},
		{"rq-counts", "  hard: {pods: \"10\", count/deployments.apps: \"5\", configmaps: \"+20\", services: 1e1}\n"},
		{"rq-scopes", "  hard: {pods: \"5\"}\n  scopes: [BestEffort]\n"},
		{"rq-storage", "  hard: {requests.storage: 100Gi, persistentvolumeclaims: \"3\"}\n"},
	} {
		s.add(appCluster, "ResourceQuota", v.name, fmt.Sprintf("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: %s}\nspec:\n%s", v.name, v.spec))
	}
	s.add(appConfig, "Lease", "lease-plain", "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: lease-plain}\nspec:\n  holderIdentity: someone\n  leaseDurationSeconds: 15\n")
}

// rbacManifests are Roles, ClusterRoles and their bindings.
func (s *manifestSet) rbacManifests() {
	// --- RBAC.
	rules := "rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list]\n"
	for _, v := range []struct{ name, body string }{
		{"role-plain", rules},
		{"role-empty-rules", "rules: []\n"},
		{"role-no-rules", ""},
		{"role-names", "rules:\n- apiGroups: [\"\"]\n  resources: [secrets]\n  resourceNames: [creds]\n  verbs: [get]\n"},
		{"role-multi", "rules:\n- apiGroups: [apps]\n  resources: [deployments, deployments/scale]\n  verbs: [get, patch]\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [\"*\"]\n"},
		{"role-empty-groups", "rules:\n- apiGroups: []\n  resources: [pods]\n  verbs: [get]\n"},
	} {
		s.add(appRBAC, "Role", v.name, fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: %s}\n%s", v.name, v.body))
	}
	for _, v := range []struct{ name, body string }{
		{"diff-cr-plain", rules},
		{"diff-cr-empty-rules", "rules: []\n"},
		{"diff-cr-no-rules", ""},
		{"diff-cr-urls", "rules:\n- nonResourceURLs: [/healthz, /metrics]\n  verbs: [get]\n"},
		{"diff-cr-agg-source", "metadata:\n  labels: {diff.example.com/aggregate-to-viewer: \"true\"}\n" + rules},
		{"diff-cr-agg-no-rules", "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {diff.example.com/aggregate-to-viewer: \"true\"}\n"},
		{"diff-cr-agg-empty-rules", "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {diff.example.com/aggregate-to-viewer: \"true\"}\nrules: []\n"},
		{"diff-cr-agg-rules", "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {diff.example.com/aggregate-to-viewer: \"true\"}\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n"},
		{"diff-cr-agg-nothing", "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {diff.example.com/aggregate-to-nobody: \"true\"}\n"},
	} {
		body := v.body
		meta := "metadata: {name: " + v.name + "}\n"
		if strings.HasPrefix(body, "metadata:\n") {
			meta = "metadata:\n  name: " + v.name + "\n"
			body = strings.TrimPrefix(body, "metadata:\n")
		}
		s.add(appRBAC, "ClusterRole", v.name, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"+meta+body)
	}
	for _, v := range []struct{ name, subjects string }{
		{"rb-sa", "- kind: ServiceAccount\n  name: sa-plain\n"},
		{"rb-sa-ns", "- kind: ServiceAccount\n  name: sa-plain\n  namespace: " + appRBAC + "\n"},
		{"rb-user", "- kind: User\n  name: jane\n  apiGroup: rbac.authorization.k8s.io\n"},
		{"rb-group", "- kind: Group\n  name: devs\n  apiGroup: rbac.authorization.k8s.io\n"},
		{"rb-many", "- {kind: User, name: a, apiGroup: rbac.authorization.k8s.io}\n- {kind: User, name: b, apiGroup: rbac.authorization.k8s.io}\n"},
	} {
		s.add(appRBAC, "RoleBinding", v.name, fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: %s}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-plain}\nsubjects:\n%s", v.name, v.subjects))
	}
	s.add(appRBAC, "RoleBinding", "rb-clusterrole", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: rb-clusterrole}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\nsubjects:\n- {kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}\n")
	s.add(appRBAC, "RoleBinding", "rb-no-subjects", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: rb-no-subjects}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-plain}\n")
	for _, v := range []struct{ name, subjects string }{
		{"diff-crb-sa", "- kind: ServiceAccount\n  name: sa-plain\n  namespace: " + appRBAC + "\n"},
		{"diff-crb-group", "- kind: Group\n  name: system:authenticated\n  apiGroup: rbac.authorization.k8s.io\n"},
		{"diff-crb-empty", ""},
	} {
		sub := "subjects:\n" + v.subjects
		if v.subjects == "" {
			sub = "subjects: []\n"
		}
		s.add(appRBAC, "ClusterRoleBinding", v.name, fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: %s}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: diff-cr-plain}\n%s", v.name, sub))
	}
}

// clusterManifests are cluster-scoped kinds, admission webhooks among them.
func (s *manifestSet) clusterManifests() {
	// --- Cluster-scoped kinds.
	for _, v := range []struct{ name, body string }{
		{"diff-pc-plain", "value: 1000\n"},
		{"diff-pc-zero", "value: 0\nglobalDefault: false\n"},
		{"diff-pc-never", "value: 100\npreemptionPolicy: Never\ndescription: \"\"\n"},
		{"diff-pc-desc", "value: 1e3\ndescription: batch jobs\n"},
	} {
		s.add(appCluster, "PriorityClass", v.name, fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\n%s", v.name, v.body))
	}
	webhook := func(kind, name, extra string) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata: {name: %s}
webhooks:
- name: hook.diff.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://127.0.0.1:9999/hook"}
  rules:
  - {apiGroups: [nothing.diff.example.com], apiVersions: [v1], operations: [CREATE], resources: [things]}
%s`, kind, name, extra)
	}
	for _, v := range []struct{ name, extra string }{
		{"plain", ""},
		{"defaults", "  failurePolicy: Fail\n  matchPolicy: Equivalent\n  timeoutSeconds: 10\n  namespaceSelector: {}\n  objectSelector: {}\n"},
		{"ignore", "  failurePolicy: Ignore\n  timeoutSeconds: 5\n"},
		{"selector", "  namespaceSelector:\n    matchExpressions:\n    - {key: diff, operator: In, values: [\"yes\"]}\n"},
		{"cabundle-empty", "  failurePolicy: Ignore\n"},
	} {
		for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
			extra := v.extra
			n := "diff-" + strings.ToLower(kind[:1]) + "wc-" + v.name
			body := webhook(kind, n, extra)
			if v.name == "cabundle-empty" {
				body = strings.Replace(body, `clientConfig: {url: "https://127.0.0.1:9999/hook"}`, `clientConfig: {url: "https://127.0.0.1:9999/hook", caBundle: ""}`, 1)
			}
			s.add(appCluster, kind, n, body)
		}
	}
	s.add(appCluster, "MutatingWebhookConfiguration", "diff-mwc-reinvoke", webhook("MutatingWebhookConfiguration", "diff-mwc-reinvoke", "  reinvocationPolicy: Never\n  failurePolicy: Ignore\n"))
	for _, v := range []struct{ name, body string }{
		{"diff-sc-plain", "provisioner: diff.example.com/none\n"},
		{"diff-standard", "provisioner: diff.example.com/none\nreclaimPolicy: Delete\nvolumeBindingMode: Immediate\nallowVolumeExpansion: false\n"},
		{"diff-sc-params", "provisioner: diff.example.com/none\nparameters: {type: ssd, iops: \"3000\"}\nmountOptions: []\n"},
	} {
		s.add(appCluster, "StorageClass", v.name, fmt.Sprintf("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\n%s", v.name, v.body))
	}
	s.add(appCluster, "IngressClass", "diff-nginx", "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: diff-nginx}\nspec:\n  controller: diff.example.com/ingress\n")
	s.add(appCluster, "IngressClass", "diff-ic-params", "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: diff-ic-params}\nspec:\n  controller: diff.example.com/ingress\n  parameters: {apiGroup: diff.example.com, kind: Params, name: p, scope: Cluster}\n")
	s.add(appCluster, "RuntimeClass", "diff-rc", "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: diff-rc}\nhandler: runc\n")
	s.add(appCluster, "RuntimeClass", "diff-rc-overhead", "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: diff-rc-overhead}\nhandler: kata\noverhead: {podFixed: {cpu: 250m, memory: 0.125Gi}}\n")
	s.add(appCluster, "Namespace", "diff-ns-plain", "apiVersion: v1\nkind: Namespace\nmetadata: {name: diff-ns-plain}\n")
	s.add(appCluster, "Namespace", "diff-ns-labels", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: diff-ns-labels\n  labels: {team: a}\n")
	s.add(appCluster, "Namespace", "diff-ns-spec", "apiVersion: v1\nkind: Namespace\nmetadata: {name: diff-ns-spec}\nspec: {finalizers: [kubernetes]}\n")
	s.add(appCluster, "CustomResourceDefinition", "diff-crd-min", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.min.diff.example.com}
spec:
  group: min.diff.example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`)
	s.add(appCluster, "CustomResourceDefinition", "diff-crd-full", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.full.diff.example.com}
spec:
  group: full.diff.example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList, shortNames: [wd]}
  scope: Cluster
  conversion: {strategy: None}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 1, minimum: 0}
`)
	s.add(appCluster, "ValidatingAdmissionPolicy", "diff-vap", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: diff-vap}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [nothing.diff.example.com]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [things]
  validations:
  - expression: "object.metadata.name != 'x'"
`)
}

// customResourceManifests are custom resources: schema defaults, pruning,
// int-or-string, quantities.
func (s *manifestSet) customResourceManifests() {
	// --- Custom resources: schema defaults, pruning, int-or-string, quantities.
	for _, v := range []struct{ name, spec, meta string }{
		{"g-empty", "  {}\n", ""},
		{"g-defaults-omitted", "  label: a\n", ""},
		{"g-defaults-explicit", "  size: 3\n  mode: auto\n  enabled: false\n  nested: {level: 1}\n", ""},
		{"g-size-other", "  size: 5\n", ""},
		{"g-zero", "  size: 0\n  label: \"\"\n  enabled: false\n", ""},
		{"g-pruned", "  label: a\n  color: blue\n", ""},
		{"g-pruned-nested", "  nested: {level: 2, shade: dark}\n", ""},
		{"g-port-int", "  port: 80\n", ""},
		{"g-port-string", "  port: \"80\"\n", ""},
		{"g-port-name", "  port: http\n", ""},
		{"g-ports-mixed", "  ports: [80, \"443\", http]\n", ""},
		{"g-quantity-milli", "  limits: {cpu: 1000m, memory: 1024Mi}\n", ""},
		{"g-quantity-decimal", "  limits: {cpu: \"0.5\", memory: 0.5Gi}\n", ""},
		{"g-quantity-int", "  limits: {cpu: 2, memory: 1e3}\n", ""},
		{"g-quantity-plus", "  limits: {cpu: \"+1\"}\n", ""},
		{"g-ratio-int", "  ratio: 1\n", ""},
		{"g-ratio-float", "  ratio: 0.5\n", ""},
		{"g-ratio-float-int", "  ratio: 2.0\n", ""},
		{"g-duration", "  timeout: 1m30s\n", ""},
		{"g-duration-hours", "  timeout: 1h\n", ""},
		{"g-tags-empty", "  tags: []\n", ""},
		{"g-tags", "  tags: [b, a]\n", ""},
		{"g-items-defaults", "  items:\n  - name: a\n  - {name: b, weight: 5}\n", ""},
		{"g-extras", "  extras: {anything: [1, \"2\", {x: null}], n: 1.50}\n", ""},
		{"g-extras-empty", "  extras: {}\n", ""},
		{"g-null", "  label: null\n  nullable: null\n", ""},
		{"g-nested-empty", "  nested: {}\n", ""},
		{"g-labels-empty", "  label: a\n", "  labels: {}\n"},
		{"g-annotations-empty", "  label: a\n", "  annotations: {}\n"},
		{"g-top-unknown", "  label: a\n", ""},
	} {
		body := genGadget(v.name, v.spec, v.meta)
		if v.name == "g-top-unknown" {
			body += "extra: {not: declared}\n"
		}
		s.add(appCRs, "Gadget", v.name, body)
	}
	for _, v := range []struct{ name, body string }{
		{"b-plain", "spec: {a: 1}\n"},
		{"b-quantity", "spec: {cpu: 1000m, memory: 1024Mi}\n"},
		{"b-empty", "spec: {}\ndata: []\n"},
		{"b-numbers", "spec: {int: 1, float: 1.0, str: \"1\", exp: 1e3, big: 12345678901234567890}\n"},
		{"b-null", "spec: {a: null}\n"},
		{"b-bool-string", "spec: {a: \"true\", b: true}\n"},
	} {
		s.add(appCRs, "Blob", v.name, fmt.Sprintf("apiVersion: diff.example.com/v1\nkind: Blob\nmetadata: {name: %s}\n%s", v.name, v.body))
	}
}

// undeclaredFieldManifests hold fields their kind does not declare, synced
// with Validate=false.
func (s *manifestSet) undeclaredFieldManifests() {
	// --- Fields a kind does not declare (synced with Validate=false).
	for _, v := range []struct{ kind, name, body string }{
		{"Deployment", "nv-dep-spec", strings.Replace(genDeployment("nv-dep-spec", "", "", "", ""), "spec:\n  selector:", "spec:\n  bogus: 1\n  selector:", 1)},
		{"Deployment", "nv-dep-container", genDeployment("nv-dep-container", "", "        unknownField: x\n", "", "")},
		{"Deployment", "nv-dep-pod", genDeployment("nv-dep-pod", "      notAField: {a: b}\n", "", "", "")},
		{"Service", "nv-svc", genService("nv-svc", "  selector: {app: web}\n  ports: [{port: 80, bogus: true}]\n")},
		{"ConfigMap", "nv-cm", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nv-cm}\ndata: {a: b}\nextra: value\n"},
		{"ConfigMap", "nv-cm-meta", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nv-cm-meta, color: blue}\ndata: {a: b}\n"},
		{"Secret", "nv-secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: nv-secret}\nstringData: {a: b}\nextra: value\n"},
		{"Role", "nv-role", "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: nv-role}\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n  bogus: yes\n"},
		{"Gadget", "nv-gadget", genGadget("nv-gadget", "  label: a\n  color: red\n", "")},
		{"ServiceAccount", "nv-sa", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: nv-sa}\nbogus: 1\n"},
	} {
		s.add(appNoValidate, v.kind, v.name, v.body)
	}
}

// serverSideCopies are the namespaced variations of out the differential
// also syncs under server-side apply.
func serverSideCopies(out []genManifest) []genManifest {
	var ssa []genManifest
	for _, m := range out {
		if m.app != appWorkloads && m.app != appNetwork && m.app != appConfig && m.app != appCRs {
			continue
		}
		k := m.file
		if strings.Contains(k, "nodeport-fixed") {
			continue // a node port is allocated once per cluster
		}
		if strings.HasPrefix(k, "deployment-q") || strings.HasPrefix(k, "deployment-rq") || strings.HasPrefix(k, "service-") ||
			strings.HasPrefix(k, "configmap-") || strings.HasPrefix(k, "secret-") || strings.HasPrefix(k, "gadget-") ||
			strings.HasPrefix(k, "horizontalpodautoscaler-") || strings.HasPrefix(k, "persistentvolumeclaim-") ||
			strings.HasPrefix(k, "statefulset-") ||
			strings.Contains(k, "env-") || strings.Contains(k, "strategy") || strings.Contains(k, "empty") || strings.Contains(k, "probe") {
			ssa = append(ssa, genManifest{app: appSSA, file: m.file, yaml: m.yaml})
		}
	}
	return ssa
}

// TestDifferentialManifests checks the generator without the stack: enough
// manifests, each a YAML object with a unique file in its Application.
func TestDifferentialManifests(t *testing.T) {
	ms := differentialManifests()
	if len(ms) < 300 {
		t.Fatalf("%d manifests, want at least 300", len(ms))
	}
	seen := map[string]bool{}
	kinds := map[string]int{}
	for _, m := range ms {
		if seen[m.app+"/"+m.file] {
			t.Errorf("%s/%s generated twice", m.app, m.file)
		}
		seen[m.app+"/"+m.file] = true
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(m.yaml), &obj); err != nil || obj["kind"] == nil {
			t.Errorf("%s/%s is not a manifest (%v):\n%s", m.app, m.file, err, m.yaml)
			continue
		}
		kinds[obj["kind"].(string)]++
	}
	t.Logf("%d manifests of %d kinds: %v", len(ms), len(kinds), kinds)
}
