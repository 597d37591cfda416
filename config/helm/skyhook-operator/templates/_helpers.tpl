{{/* The release's base name: fullnameOverride, else the release name when
     it already says the chart's name or NodeWright's (so a release named
     nodewright gets NodeWright v0.20's nodewright-* names), else
     <release>-<chart>. */}}
{{- define "skyhook.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else if or (contains .Chart.Name .Release.Name) (contains "nodewright" .Release.Name) }}
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

{{/* The webhook Service: webhook.serviceName, or, when that is empty (as
     NodeWright's values have it), <fullname>-webhook-service as NodeWright
     derives it. The default values name it, so existing installs keep
     skyhook-operator-webhook-service whatever their release is called. */}}
{{- define "skyhook.webhookService" -}}
{{- .Values.webhook.serviceName | default (printf "%s-webhook-service" (include "skyhook.fullname" .)) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The metrics Service's port: the entry named metrics (else the first) of
     NodeWright's metricsService.ports when given, else metricsService.port.
     Its targetPort is always the operator's metrics port (metricsPort). */}}
{{- define "skyhook.metricsServicePort" -}}
{{- $port := .Values.metricsService.port }}
{{- with .Values.metricsService.ports }}
{{- $port = (first .).port }}
{{- range . }}{{ if eq (toString .name) "metrics" }}{{ $port = .port }}{{ end }}{{ end }}
{{- end }}
{{- $port | int }}
{{- end }}

{{/* NodeWright's operator settings under controllerManager.manager.env
     that have no flag here, passed under NodeWright's variable names, as
     its chart passes them. The operator reads JOB_STAGE_TIMEOUT,
     JOB_BACKOFF_LIMIT, REAPPLY_ON_REBOOT and PUBLISH_LEGACY_METRICS (the
     defaults of the flags of those names);
     the others are passed for when it reads them (docs/install.md says
     which it does not, and why). Unset values are left out. */}}
{{- define "skyhook.nodewrightEnv" -}}
{{- $env := .Values.controllerManager.manager.env }}
{{- range list
      (list "JOB_STAGE_TIMEOUT" $env.jobStageTimeout)
      (list "JOB_BACKOFF_LIMIT" $env.jobBackoffLimit)
      (list "JOB_TTL_SUCCEEDED" $env.jobTtlSucceeded)
      (list "JOB_TTL_FAILED" $env.jobTtlFailed)
      (list "LEGACY_CLEANUP_DELAY" $env.legacyCleanupDelay)
      (list "PUBLISH_LEGACY_METRICS" $env.publishLegacyMetrics)
      (list "REAPPLY_ON_REBOOT" $env.reapplyOnReboot)
      (list "COPY_DIR_ROOT" $env.copyDirRoot)
      (list "AGENT_LOG_ROOT" $env.agentLogRoot) }}
{{- $value := index . 1 }}
{{- if not (kindIs "invalid" $value) }}
{{- if ne (toString $value) "" }}
- name: {{ index . 0 }}
  value: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- end }}
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
{{- with index (include "skyhook.replacedImages" $root | fromYaml) $image.repository }}
{{- . }}:{{ $root.Chart.AppVersion }}
{{- else }}
{{- $image.repository }}
{{- if $image.digest }}
{{- with $image.tag }}:{{ . }}{{ end }}@{{ $image.digest }}
{{- else }}:{{ $image.tag | default $root.Chart.AppVersion }}
{{- end }}
{{- end }}
{{- end }}

{{/* NodeWright's published operator and agent images, and this chart's
     images that take their place: a values file written for NodeWright
     names them (pinned to its release), and neither can run here (its
     operator takes other flags, its agent another calling convention), so
     the file installs this operator unchanged. NOTES.txt says so. A
     mirror of these images under another name is used as given. */}}
{{- define "skyhook.replacedImages" -}}
ghcr.io/nvidia/nodewright/operator: ghcr.io/skyhook-go/skyhook-operator
ghcr.io/nvidia/skyhook/operator: ghcr.io/skyhook-go/skyhook-operator
nvcr.io/nvidia/skyhook/operator: ghcr.io/skyhook-go/skyhook-operator
ghcr.io/nvidia/nodewright/agent: ghcr.io/skyhook-go/skyhook-agent
ghcr.io/nvidia/skyhook/agent: ghcr.io/skyhook-go/skyhook-agent
nvcr.io/nvidia/skyhook/agent: ghcr.io/skyhook-go/skyhook-agent
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
  {{- /* Replicas rather on different nodes, so one node going down does not
         take the leader and its standby at once (as NodeWright v0.20). Preferred,
         not required: a cluster with fewer nodes than replicas still runs them all. */}}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "skyhook.selectorLabels" . | nindent 12 }}
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
