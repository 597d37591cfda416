{{/* The release's base name: the release name when it already says the chart's name. */}}
{{- define "skyhook.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The operator's Deployment, ServiceAccount and pods. */}}
{{- define "skyhook.manager" -}}
{{ include "skyhook.fullname" . }}-controller-manager
{{- end }}

{{/* The metrics Service: NodeWright's name for a release named
     skyhook-operator, shortened for long release names (a Service name has
     at most 63 characters). */}}
{{- define "skyhook.metricsService" -}}
{{ include "skyhook.fullname" . | trunc 28 | trimSuffix "-" }}-controller-manager-metrics-service
{{- end }}

{{- define "skyhook.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end }}

{{- define "skyhook.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: skyhook-operator
{{- end }}

{{/* repository[:tag][@digest] of an image value; tag defaults to appVersion when no digest is given. */}}
{{- define "skyhook.image" -}}
{{- $image := index . 0 }}{{- $root := index . 1 }}
{{- $image.repository }}
{{- if $image.digest }}
{{- with $image.tag }}:{{ . }}{{ end }}@{{ $image.digest }}
{{- else }}:{{ $image.tag | default $root.Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* Every pull secret: NodeWright's single imagePullSecret and the list. */}}
{{- define "skyhook.pullSecrets" -}}
{{- $all := list }}
{{- with .Values.imagePullSecret }}{{ $all = append $all . }}{{ end }}
{{- range .Values.imagePullSecrets }}{{ $all = append $all . }}{{ end }}
{{- $all | uniq | join "," }}
{{- end }}

{{/* The port of a ":8080"-style address. */}}
{{- define "skyhook.port" -}}
{{- splitList ":" . | last | int }}
{{- end }}

{{/* Where the operator pods run: tolerations, nodeSelector, affinity, priority class. */}}
{{- define "skyhook.placement" -}}
{{- with .Values.controllerManager.tolerations }}
tolerations:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- with .Values.controllerManager.selectors }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if .Values.controllerManager.affinity }}
{{- toYaml .Values.controllerManager.affinity | nindent 2 }}
{{- else }}
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/os, operator: In, values: [linux]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
        {{- with .Values.controllerManager.nodeAffinity.matchExpressions }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end }}
{{- with .Values.controllerManager.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end }}

{{/* The pod and container security settings of every pod the chart runs. */}}
{{- define "skyhook.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}
