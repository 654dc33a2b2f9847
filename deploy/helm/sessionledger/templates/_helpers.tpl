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

{{/* a pod template's metadata: include "sessionledger.podMetadata" (list . "web") */}}
{{- define "sessionledger.podMetadata" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $own := (index $root.Values $component | default dict).podAnnotations | default dict -}}
labels:
  {{- include "sessionledger.labels" $root | nindent 2 }}
  app.kubernetes.io/component: {{ $component }}
  {{- with $root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with merge (deepCopy $own) $root.Values.podAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "sessionledger.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "sessionledger.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ .Values.serviceAccount.name | default (include "sessionledger.fullname" .) }}
{{- else -}}
{{ .Values.serviceAccount.name | default "default" }}
{{- end -}}
{{- end -}}

{{/* the public host without port: ALLOWED_HOSTS and the probes' Host header */}}
{{- define "sessionledger.host" -}}
{{ regexReplaceAll ":[0-9]+$" (urlParse .Values.siteUrl).host "" }}
{{- end -}}

{{/* one credential: include "sessionledger.credential" (dict "env" "SECRET_KEY" "name" … "key" … "file" …):
     a mounted file (NAME_FILE, config/env.py), else a key of an existing Secret, else nothing */}}
{{- define "sessionledger.credential" -}}
{{- if .file }}
- name: {{ .env }}_FILE
  value: {{ .file | quote }}
{{- else if .name }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .key }}
{{- end }}
{{- end -}}

{{/* SESSIONLEDGER_PROXY_COUNT: set, or one proxy (the ingress controller) when the chart makes an Ingress */}}
{{- define "sessionledger.proxyCount" -}}
{{- if kindIs "invalid" .Values.proxyCount -}}
{{ ternary 1 0 .Values.ingress.enabled }}
{{- else -}}
{{ .Values.proxyCount }}
{{- end -}}
{{- end -}}

{{/* every container's environment: include "sessionledger.env" (list . "web"); the migrate Job alone gets
     the schema owner's DATABASE_OWNER_URL when migrations.databaseUrlSecret names one */}}
{{- define "sessionledger.env" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $values := $root.Values -}}
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
  value: {{ $values.siteUrl | quote }}
- name: ALLOWED_HOSTS
  value: {{ printf "%s,$(POD_IP)" (include "sessionledger.host" $root) | quote }}
- name: LOG_LEVEL
  value: {{ $values.logLevel | quote }}
- name: SESSIONLEDGER_PROXY_COUNT
  value: {{ include "sessionledger.proxyCount" $root | quote }}
- name: DATABASE_WEB_ROLE
  value: {{ $values.postgresql.webRole | quote }}
- name: S3_BUCKET
  value: {{ $values.s3.bucket | quote }}
- name: S3_ENDPOINT_URL
  value: {{ $values.s3.endpointUrl | quote }}
- name: S3_REGION
  value: {{ $values.s3.region | quote }}
- name: PROMETHEUS_MULTIPROC_DIR
  value: /tmp/prometheus
{{- include "sessionledger.credential" (merge (dict "env" "SECRET_KEY") $values.secrets.secretKey) }}
{{- include "sessionledger.credential" (merge (dict "env" "DATABASE_URL") $values.postgresql.urlSecret) }}
{{- $owner := $values.migrations.databaseUrlSecret }}
{{- if and (eq $component "migrate") (or $owner.name $owner.file) }}
{{- /* migrate logs in as the owner and grants the runtime login (DATABASE_URL) what it may do */}}
{{- include "sessionledger.credential" (merge (dict "env" "DATABASE_OWNER_URL") $owner) }}
{{- end }}
{{- include "sessionledger.credential" (merge (dict "env" "REDIS_URL") $values.redis.urlSecret) }}
{{- with $values.s3.credentialsSecret }}
{{- include "sessionledger.credential" (dict "env" "S3_ACCESS_KEY_ID" "name" .name "key" .accessKeyIdKey "file" .accessKeyIdFile) }}
{{- include "sessionledger.credential" (dict "env" "S3_SECRET_ACCESS_KEY" "name" .name "key" .secretAccessKeyKey "file" .secretAccessKeyFile) }}
{{- end }}
{{- include "sessionledger.credential" (merge (dict "env" "SESSIONLEDGER_METRICS_TOKEN") $values.secrets.metricsToken) }}
{{- include "sessionledger.credential" (merge (dict "env" "SESSIONLEDGER_OIDC_PROVIDERS") $values.secrets.oidcProviders) }}
{{- include "sessionledger.credential" (merge (dict "env" "EMAIL_HOST_PASSWORD") $values.secrets.emailHostPassword) }}
{{- include "sessionledger.credential" (merge (dict "env" "SESSIONLEDGER_SCIM_TOKEN") $values.secrets.scimToken) }}
{{- include "sessionledger.credential" (merge (dict "env" "SENTRY_DSN") $values.secrets.sentryDsn) }}
{{- if kindIs "map" $values.extraEnv }}
{{- /* the chart's earlier form, {NAME: value}: still accepted */}}
{{- range $name, $value := $values.extraEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- else if $values.extraEnv }}
{{ toYaml $values.extraEnv }}
{{- end }}
{{- end -}}

{{/* what every container shares after its env: envFrom, the security context, the mounts */}}
{{- define "sessionledger.containerCommon" -}}
{{- with .Values.extraEnvFrom }}
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  # The root filesystem is read-only: /tmp (uploads spooled to disk, gunicorn's heartbeat files, beat's
  # schedule) and the metrics' multiprocess files are the only writable places.
  - {name: tmp, mountPath: /tmp}
  - {name: prometheus, mountPath: /tmp/prometheus}
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* pod-level settings shared by every workload: include "sessionledger.podSpec" (list . "web") */}}
{{- define "sessionledger.podSpec" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $values := $root.Values -}}
{{- if eq $component "migrate" }}
{{- with $values.migrations.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- else }}
serviceAccountName: {{ include "sessionledger.serviceAccountName" $root }}
{{- end }}
# No process here talks to the Kubernetes API.
automountServiceAccountToken: false
{{- with $values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $values.podSecurityContext | nindent 2 }}
{{- with $values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if and (has $component (list "web" "worker")) $values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- range $values.topologySpreadConstraints }}
  {{- $selector := dict "labelSelector" (dict "matchLabels" (include "sessionledger.selector" (list $root $component) | fromYaml)) }}
  - {{- toYaml (merge (deepCopy .) $selector) | nindent 4 }}
  {{- end }}
{{- end }}
volumes:
  - {name: tmp, emptyDir: {}}
  - {name: prometheus, emptyDir: {}}
  {{- with $values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* a scrape endpoint's bearer token: the metrics token's Secret */}}
{{- define "sessionledger.metricsAuth" -}}
{{- if .Values.secrets.metricsToken.name -}}
bearerTokenSecret:
  name: {{ .Values.secrets.metricsToken.name }}
  key: {{ .Values.secrets.metricsToken.key }}
{{- end -}}
{{- end -}}
