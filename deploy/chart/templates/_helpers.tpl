{{/* The app's name: nameOverride or the chart's name. */}}
{{- define "driftfix.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of every object: fullnameOverride, or the release's name (what the
chart has always used, so an upgrade renames nothing).
*/}}
{{- define "driftfix.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "driftfix.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The standard labels, on every object and pod. */}}
{{- define "driftfix.labels" -}}
helm.sh/chart: {{ include "driftfix.chart" . }}
{{ include "driftfix.selector" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The selector labels: name and instance only, so they never change on upgrade. */}}
{{- define "driftfix.selector" -}}
app.kubernetes.io/name: {{ include "driftfix.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "driftfix.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "driftfix.securityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities: {drop: [ALL]}
seccompProfile: {type: RuntimeDefault}
{{- end }}

{{/*
"true" when the pods run the receiver: GitHub's deliveries (webhook.enabled)
or Argo CD's notifications (argocd.notifications.enabled), on webhook.port.
A CronJob has none (driftfix.notifySecret refuses notifications with one).
*/}}
{{- define "driftfix.receiver" -}}
{{- if and (eq .Values.mode "deployment") (or .Values.webhook.enabled .Values.argocd.notifications.enabled) }}true{{ end }}
{{- end }}

{{/*
The Secret holding Argo CD Notifications' shared secret when it is not a key
of existingSecret (already mounted): the chart's own (secretValue) or
argocd.notifications.existingSecret; "" otherwise. Every mode renders the
pod's volumes through it, so it refuses notifications with a CronJob.
*/}}
{{- define "driftfix.notifySecret" -}}
{{- $n := .Values.argocd.notifications }}
{{- if and $n.enabled (ne .Values.mode "deployment") }}
{{- fail "argocd.notifications.enabled: needs mode: deployment (a CronJob runs no receiver for Argo CD to post to)" }}
{{- end }}
{{- if and $n.enabled $n.secretValue $n.existingSecret }}
{{- fail "argocd.notifications: give existingSecret or secretValue, not both" }}
{{- end }}
{{- if and $n.enabled $n.secretValue }}{{ include "driftfix.fullname" . }}-argocd-notify
{{- else if and $n.enabled $n.existingSecret (ne $n.existingSecret .Values.existingSecret) }}{{ $n.existingSecret }}
{{- end }}
{{- end }}

{{/* The file the pods read Argo CD Notifications' shared secret from. */}}
{{- define "driftfix.notifySecretFile" -}}
{{- if include "driftfix.notifySecret" . -}}
/var/run/secrets/driftfix-argocd-notify/{{ .Values.argocd.notifications.secretKey }}
{{- else -}}
/var/run/secrets/driftfix/{{ .Values.argocd.notifications.secretKey }}
{{- end }}
{{- end }}

{{- define "driftfix.volumes" -}}
- name: config
  configMap: {name: {{ include "driftfix.fullname" . }}}
- name: secrets
  secret: {secretName: {{ .Values.existingSecret }}}
{{- with include "driftfix.notifySecret" . }}
- name: argocd-notify
  secret:
    secretName: {{ . }}
    items: [{key: {{ $.Values.argocd.notifications.secretKey }}, path: {{ $.Values.argocd.notifications.secretKey }}}]
{{- end }}
- name: state
{{- if .Values.persistence.enabled }}
  persistentVolumeClaim: {claimName: {{ include "driftfix.fullname" . }}-state}
{{- else }}
  emptyDir: {}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "driftfix.podExtras" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "driftfix.mounts" -}}
- {name: config, mountPath: /etc/driftfix, readOnly: true}
- {name: secrets, mountPath: /var/run/secrets/driftfix, readOnly: true}
{{- if include "driftfix.notifySecret" . }}
- {name: argocd-notify, mountPath: /var/run/secrets/driftfix-argocd-notify, readOnly: true}
{{- end }}
- {name: state, mountPath: /var/lib/driftfix}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The policy file the chart writes, before the config value is merged over it. */}}
{{- define "driftfix.config" -}}
schedule: {{ .Values.schedule | quote }}
jitter: {{ .Values.jitter }}
dryRun: {{ .Values.dryRun }}
stateFile: /var/lib/driftfix/state.db
argocd:
  - name: {{ .Values.argocd.name }}
    server: {{ .Values.argocd.server }}
    tokenFile: /var/run/secrets/driftfix/argocd-token
    namespace: {{ .Values.argocd.namespace }}
{{- with .Values.argocd.caKey }}
    caFile: /var/run/secrets/driftfix/{{ . }}
{{- end }}
{{- if .Values.argocd.insecure }}
    insecure: true
{{- end }}
{{- if .Values.argocd.insecurePlaintext }}
    insecurePlaintext: true
{{- end }}
{{- if .Values.argocd.dryRunEvidence }}
    dryRunEvidence: true
{{- end }}
{{- if .Values.github.appID }}
github:
  appID: {{ int64 .Values.github.appID }}
  privateKeyFile: /var/run/secrets/driftfix/github-app.pem
  {{- with .Values.github.baseURL }}
  baseURL: {{ . }}
  {{- end }}
{{- else if .Values.github.tokenMode }}
github:
  tokenFile: /var/run/secrets/driftfix/github-token
  {{- with .Values.github.baseURL }}
  baseURL: {{ . }}
  {{- end }}
{{- end }}
{{- if .Values.slack.channel }}
slack:
  tokenFile: /var/run/secrets/driftfix/slack-token
  channel: {{ .Values.slack.channel | quote }}
  {{- with .Values.slack.apiURL }}
  apiURL: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.platformRepos }}
platformRepos:
  {{- toYaml . | nindent 2 }}
{{- end }}
policy:
  {{- toYaml .Values.policy | nindent 2 }}
{{- with .Values.overrides }}
overrides:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
