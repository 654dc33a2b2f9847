{{- define "sessionledger.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "sessionledger.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* selector labels of one component: include "sessionledger.selector" (list . "web") */}}
{{- define "sessionledger.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ $root.Chart.Name }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "sessionledger.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* the public host without port: ALLOWED_HOSTS and the probes' Host header */}}
{{- define "sessionledger.host" -}}
{{ regexReplaceAll ":[0-9]+$" (urlParse .Values.siteUrl).host "" }}
{{- end -}}

{{- define "sessionledger.secretRef" -}}
valueFrom:
  secretKeyRef:
    name: {{ .name }}
    key: {{ .key }}
{{- end -}}

{{/* every container's environment: plain values, then credentials from existing Secrets */}}
{{- define "sessionledger.env" -}}
# The pod's own address is an allowed host too: Prometheus scrapes /metrics by pod IP.
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: SESSIONLEDGER_ENV
  value: production
- name: DEBUG
  value: "false"
- name: SITE_URL
  value: {{ .Values.siteUrl | quote }}
- name: ALLOWED_HOSTS
  value: {{ printf "%s,$(POD_IP)" (include "sessionledger.host" .) | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: DATABASE_WEB_ROLE
  value: {{ .Values.postgresql.webRole | quote }}
- name: S3_BUCKET
  value: {{ .Values.s3.bucket | quote }}
- name: S3_ENDPOINT_URL
  value: {{ .Values.s3.endpointUrl | quote }}
- name: S3_REGION
  value: {{ .Values.s3.region | quote }}
- name: PROMETHEUS_MULTIPROC_DIR
  value: /tmp/prometheus
{{- range $name, $value := .Values.extraEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
- name: SECRET_KEY
  {{- include "sessionledger.secretRef" .Values.secrets.secretKey | nindent 2 }}
- name: DATABASE_URL
  {{- include "sessionledger.secretRef" .Values.postgresql.urlSecret | nindent 2 }}
- name: REDIS_URL
  {{- include "sessionledger.secretRef" .Values.redis.urlSecret | nindent 2 }}
{{- with .Values.s3.credentialsSecret }}
{{- if .name }}
- name: S3_ACCESS_KEY_ID
  {{- include "sessionledger.secretRef" (dict "name" .name "key" .accessKeyIdKey) | nindent 2 }}
- name: S3_SECRET_ACCESS_KEY
  {{- include "sessionledger.secretRef" (dict "name" .name "key" .secretAccessKeyKey) | nindent 2 }}
{{- end }}
{{- end }}
{{- if .Values.secrets.metricsToken.name }}
- name: SESSIONLEDGER_METRICS_TOKEN
  {{- include "sessionledger.secretRef" .Values.secrets.metricsToken | nindent 2 }}
{{- end }}
{{- end -}}

{{/* pod-level settings shared by every workload */}}
{{- define "sessionledger.podSpec" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
