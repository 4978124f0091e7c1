{{- define "driftfix.labels" -}}
app.kubernetes.io/name: driftfix
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "driftfix.selector" -}}
app.kubernetes.io/name: driftfix
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

{{- define "driftfix.volumes" -}}
- name: config
  configMap: {name: {{ .Release.Name }}}
- name: secrets
  secret: {secretName: {{ .Values.existingSecret }}}
- name: state
{{- if .Values.persistence.enabled }}
  persistentVolumeClaim: {claimName: {{ .Release.Name }}-state}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end }}

{{- define "driftfix.mounts" -}}
- {name: config, mountPath: /etc/driftfix, readOnly: true}
- {name: secrets, mountPath: /var/run/secrets/driftfix, readOnly: true}
- {name: state, mountPath: /var/lib/driftfix}
{{- end }}
