{{- define "traffic-migration.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{- define "traffic-migration.agentImage" -}}
{{ default (include "traffic-migration.image" .) .Values.agentImage }}
{{- end -}}
