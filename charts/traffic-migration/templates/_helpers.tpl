{{- define "traffic-migration.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{- define "traffic-migration.agentImage" -}}
{{ default (include "traffic-migration.image" .) .Values.agentImage }}
{{- end -}}

{{- /* Helm's standard labels, on every object of the release; the plain manifests in
manifests/ have only the app.kubernetes.io/name and part-of labels. */}}
{{- define "traffic-migration.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
{{- end -}}
