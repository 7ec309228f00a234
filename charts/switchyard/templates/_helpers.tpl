{{/* Release-scoped base name, at most 63 characters (a DNS label). */}}
{{- define "switchyard.fullname" -}}
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

{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Object names; component suffixes are short, so the base is cut to leave them room. */}}
{{- define "switchyard.gateway.fullname" -}}
{{- printf "%s-gateway" (include "switchyard.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- end -}}
{{- define "switchyard.operator.fullname" -}}
{{- printf "%s-operator" (include "switchyard.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- end -}}
{{/* Cluster-scoped names carry the namespace: two releases of the same name must not collide. */}}
{{- define "switchyard.operator.clusterRoleName" -}}
{{- printf "%s-%s" .Release.Namespace (include "switchyard.operator.fullname" .) -}}
{{- end -}}

{{- define "switchyard.gateway.consoleRoleName" -}}
{{- printf "%s-%s-console" .Release.Namespace (include "switchyard.gateway.fullname" .) -}}
{{- end -}}

{{- define "switchyard.gateway.serviceAccountName" -}}
{{- if .Values.gateway.serviceAccount.create -}}
{{- default (include "switchyard.gateway.fullname" .) .Values.gateway.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.gateway.serviceAccount.name -}}
{{- end -}}
{{- end -}}
{{- define "switchyard.operator.serviceAccountName" -}}
{{- if .Values.operator.serviceAccount.create -}}
{{- default (include "switchyard.operator.fullname" .) .Values.operator.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.operator.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchyard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component (gateway or operator): immutable once installed. */}}
{{- define "switchyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "switchyard.componentLabels" -}}
{{ include "switchyard.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "switchyard.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.sealKeySecretName" -}}
{{- default (printf "%s-seal-key" (include "switchyard.fullname" . | trunc 54 | trimSuffix "-")) .Values.sealKey.existingSecret -}}
{{- end -}}

{{- define "switchyard.redisSecretName" -}}
{{- default (printf "%s-redis" (include "switchyard.fullname" . | trunc 57 | trimSuffix "-")) .Values.redis.existingSecret.name -}}
{{- end -}}

{{/*
  Where Redis is: the chart's own Secret (redis.url and/or redis.clusterNodes) or one you manage
  (redis.existingSecret.name). The schema cannot say "exactly one", so the templates do.
*/}}
{{- define "switchyard.redisCheck" -}}
{{- $r := .Values.redis -}}
{{- if $r.existingSecret.name -}}
{{- if $r.url -}}
{{- fail "redis: set exactly one of redis.url or redis.existingSecret.name" -}}
{{- end -}}
{{- if $r.clusterNodes -}}
{{- fail "redis: with redis.existingSecret, name the cluster seeds with redis.existingSecret.clusterNodesKey instead of redis.clusterNodes" -}}
{{- end -}}
{{- else if not (or $r.url $r.clusterNodes) -}}
{{- fail "redis: set redis.url, redis.clusterNodes (Redis Cluster) or redis.existingSecret.name" -}}
{{- end -}}
{{- end -}}

{{/* True (non-empty) when the release runs on a Redis Cluster. */}}
{{- define "switchyard.redisCluster" -}}
{{- if or .Values.redis.clusterNodes .Values.redis.existingSecret.clusterNodesKey }}true{{ end -}}
{{- end -}}

{{/*
  The same Redis variables for the operator and the gateways: everything Switchyard keeps in Redis
  (the snapshot the operator publishes and the gateways follow, the gateways' runtime state, the
  spend the operator reports) goes to REDIS_CLUSTER_NODES when a cluster is named, else to
  REDIS_URL. On a cluster REDIS_URL only lends credentials and TLS, so it may be absent: the chart's
  Secret has no url then, and a managed Secret's urlKey is optional.
*/}}
{{- define "switchyard.redisEnv" -}}
{{- $v := .Values -}}
{{- include "switchyard.redisCheck" . -}}
{{- $own := not $v.redis.existingSecret.name -}}
{{- $cluster := include "switchyard.redisCluster" . -}}
{{- if or (not $own) $v.redis.url }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "switchyard.redisSecretName" . }}
      key: {{ ternary "url" $v.redis.existingSecret.urlKey $own }}
      {{- if and $cluster (not $own) }}
      optional: true
      {{- end }}
{{- end }}
{{- if $cluster }}
- name: REDIS_CLUSTER_NODES
  valueFrom:
    secretKeyRef:
      name: {{ include "switchyard.redisSecretName" . }}
      key: {{ ternary "clusterNodes" $v.redis.existingSecret.clusterNodesKey $own }}
{{- end }}
{{- end -}}

{{- define "switchyard.sealKeyEnv" -}}
- name: SWITCHYARD_SEAL_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "switchyard.sealKeySecretName" . }}
      key: {{ .Values.sealKey.key }}
{{- end -}}

{{/* The restricted Pod Security Standard, for pod and container. */}}
{{- define "switchyard.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}
{{- define "switchyard.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* topologySpreadConstraints with the component's selector filled in. */}}
{{- define "switchyard.topologySpread" -}}
{{- range .constraints }}
- topologyKey: {{ .topologyKey }}
  maxSkew: {{ .maxSkew }}
  whenUnsatisfiable: {{ .whenUnsatisfiable }}
  labelSelector:
    matchLabels:
      {{- include "switchyard.selectorLabels" $ | nindent 6 }}
{{- end }}
{{- end -}}

{{/* Labels of a monitoring object (ServiceMonitor, PrometheusRule, dashboard ConfigMap): its
  `release` label (what a Prometheus or Grafana selects on) and extra labels win over the chart's.
  Called with dict "root" . "values" <section> "extra" <dict>. */}}
{{- define "switchyard.monitoringLabels" -}}
{{- $release := dict -}}
{{- with .values.release }}{{ $_ := set $release "release" . }}{{ end -}}
{{- $labels := merge (dict) (.extra | default dict) $release (.values.labels | default dict) (include "switchyard.labels" .root | fromYaml) -}}
{{- toYaml $labels -}}
{{- end -}}
