{{/* Labels of every object of the chart. */}}
{{- define "liqo.labels" -}}
app.kubernetes.io/part-of: liqo
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ include "liqo.tag" . | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
{{- end -}}

{{/* The components' image tag. */}}
{{- define "liqo.tag" -}}
{{- .Values.tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* The image of component .name. */}}
{{- define "liqo.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.repository .name (include "liqo.tag" .root) -}}
{{- end -}}

{{/* k=v,k=v from a map, sorted. */}}
{{- define "liqo.kv" -}}
{{- $out := list -}}
{{- range $k, $v := . }}{{ $out = append $out (printf "%s=%s" $k $v) }}{{ end -}}
{{- join "," $out -}}
{{- end -}}

{{/* A generated ClusterRole (files/rbac/NAME.yaml) with the chart's labels. */}}
{{- define "liqo.generatedClusterRole" -}}
{{- $role := .root.Files.Get (printf "files/rbac/%s.yaml" .name) | fromYaml -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .name }}
  labels:
    {{- include "liqo.labels" .root | nindent 4 }}
rules:
{{- toYaml $role.rules | nindent 0 }}
{{- end -}}
