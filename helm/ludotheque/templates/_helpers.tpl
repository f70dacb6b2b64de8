{{/* The chart name, at most 63 characters (a DNS label). */}}
{{- define "ludotheque.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Object name prefix: the release name, with the chart name unless it already holds it. */}}
{{- define "ludotheque.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "ludotheque.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "ludotheque.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Pods of one component: "api" or "worker" (pass the component as .component). */}}
{{- define "ludotheque.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ludotheque.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "ludotheque.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "ludotheque.redisSecretName" -}}
{{- default (include "ludotheque.fullname" .) .Values.redis.existingSecret -}}
{{- end -}}

{{- define "ludotheque.redisSecretKey" -}}
{{- if .Values.redis.existingSecret -}}
{{- .Values.redis.existingSecretKey -}}
{{- else -}}
REDIS_URL
{{- end -}}
{{- end -}}

{{/* "true" when an archive database is configured (its URL, or a Secret holding it), else "". */}}
{{- define "ludotheque.database" -}}
{{- if or .Values.database.url .Values.database.existingSecret -}}
true
{{- end -}}
{{- end -}}

{{- define "ludotheque.databaseSecretName" -}}
{{- default (include "ludotheque.fullname" .) .Values.database.existingSecret -}}
{{- end -}}

{{- define "ludotheque.databaseSecretKey" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecretKey -}}
{{- else -}}
LUDOTHEQUE_DATABASE_URL
{{- end -}}
{{- end -}}

{{/* "true" when the chart creates its Secret: a URL (Redis's or the database's) to keep. */}}
{{- define "ludotheque.chartSecret" -}}
{{- if or (not .Values.redis.existingSecret) (and .Values.database.url (not .Values.database.existingSecret)) -}}
true
{{- end -}}
{{- end -}}

{{/* The environment both containers share: the URLs from Secrets, the record
key's file when there is one, the rest from the ConfigMap. */}}
{{- define "ludotheque.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "ludotheque.fullname" . }}
env:
  - name: REDIS_URL
    valueFrom:
      secretKeyRef:
        name: {{ include "ludotheque.redisSecretName" . }}
        key: {{ include "ludotheque.redisSecretKey" . }}
  {{- if include "ludotheque.database" . }}
  - name: LUDOTHEQUE_DATABASE_URL
    valueFrom:
      secretKeyRef:
        name: {{ include "ludotheque.databaseSecretName" . }}
        key: {{ include "ludotheque.databaseSecretKey" . }}
  {{- end }}
  {{- if .Values.recordKey.existingSecret }}
  - name: LUDOTHEQUE_RECORD_KEY_FILE
    value: /etc/ludotheque/record-key/{{ .Values.recordKey.existingSecretKey }}
  {{- end }}
{{- end -}}

{{/* Pod-level security: the image's non-root user, default seccomp profile. */}}
{{- define "ludotheque.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.runAsUser }}
runAsGroup: {{ .Values.runAsUser }}
fsGroup: {{ .Values.runAsUser }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "ludotheque.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.runAsUser }}
runAsGroup: {{ .Values.runAsUser }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop:
    - ALL
{{- end -}}

{{/* Rolls the pods when the configuration they read changes. */}}
{{- define "ludotheque.configChecksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if include "ludotheque.chartSecret" . }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}
