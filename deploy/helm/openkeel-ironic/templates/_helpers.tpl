{{/* Names: "<release>-openkeel-ironic", or the release name when it already says so. */}}
{{- define "ironic.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ironic.api.name" -}}{{ include "ironic.fullname" . }}-api{{- end -}}
{{- define "ironic.conductor.name" -}}{{ include "ironic.fullname" . }}-conductor{{- end -}}
{{- define "ironic.config.name" -}}{{ include "ironic.fullname" . }}-config{{- end -}}
{{- define "ironic.dbsync.name" -}}{{ include "ironic.fullname" . }}-dbsync{{- end -}}
{{- define "ironic.status.name" -}}{{ include "ironic.fullname" . }}-status-check{{- end -}}

{{- define "ironic.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Selector labels of one component: api, conductor or dbsync. */}}
{{- define "ironic.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "ironic.image" -}}
{{- $tag := .tag | default "" -}}
{{- if .digest -}}
{{- printf "%s@%s" .repository .digest -}}
{{- else -}}
{{- printf "%s:%s" .repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "ironic.mainImage" -}}
{{- include "ironic.image" (dict "repository" .Values.image.repository "tag" (.Values.image.tag | default .Chart.AppVersion) "digest" .Values.image.digest) -}}
{{- end -}}

{{/* The conductors' DNS domain: <pod>.<this>. */}}
{{- define "ironic.conductor.domain" -}}
{{- $d := printf "%s.%s.svc" (include "ironic.conductor.name" .) .Release.Namespace -}}
{{- if .Values.clusterDomain -}}{{- $d = printf "%s.%s" $d .Values.clusterDomain -}}{{- end -}}
{{- $d -}}
{{- end -}}

{{/*
The options the chart owns, derived from the values; they win over .Values.conf.
Paths point at the volumes mounted by "ironic.volumeMounts".
*/}}
{{- define "ironic.managedConf" -}}
DEFAULT:
  rpc_transport: json-rpc
  auth_strategy: {{ .Values.auth.strategy }}
  {{- if eq .Values.auth.strategy "http_basic" }}
  http_basic_auth_user_file: /etc/ironic/secrets/api/htpasswd
  {{- end }}
api:
  port: {{ .Values.api.port }}
  host_ip: "::"
healthcheck:
  enabled: true
  path: {{ .Values.healthcheckPath }}
json_rpc:
  port: {{ .Values.jsonRPC.port }}
  host_ip: "::"
  auth_strategy: http_basic
  http_basic_auth_user_file: /etc/ironic/secrets/json-rpc/htpasswd
  use_ssl: {{ .Values.jsonRPC.tls.enabled }}
  {{- if .Values.jsonRPC.tls.enabled }}
  cert_file: /etc/ironic/tls/json-rpc/tls.crt
  key_file: /etc/ironic/tls/json-rpc/tls.key
  cafile: /etc/ironic/tls/json-rpc/ca.crt
  {{- end }}
conductor:
  graceful_shutdown_timeout: {{ .Values.conductor.gracefulShutdownTimeout }}
deploy:
  http_root: {{ .Values.conductor.httpRoot }}
{{- with .Values.conductor.pushEvents }}
{{- if .enabled }}
openkeel_events:
  enabled: true
  port: {{ .port }}
  {{- if .tlsSecretName }}
  cert_file: /etc/ironic/tls/events/tls.crt
  key_file: /etc/ironic/tls/events/tls.key
  {{- end }}
{{- end }}
{{- end }}
{{- if .Values.secretsEncryption.enabled }}
openkeel_secrets:
  key_files: /etc/ironic/keys
  {{- with .Values.secretsEncryption.currentKeyID }}
  current_key_id: {{ . }}
  {{- end }}
{{- end }}
{{- if eq .Values.auth.strategy "keystone" }}
{{- $k := .Values.auth.keystone }}
{{- range $k.sections }}
{{ . }}:
  auth_type: password
  auth_url: {{ $k.authURL }}
  project_name: {{ $k.projectName }}
  user_domain_name: {{ $k.userDomainName }}
  project_domain_name: {{ $k.projectDomainName }}
  region_name: {{ $k.regionName }}
  {{- if eq . "keystone_authtoken" }}
  www_authenticate_uri: {{ $k.wwwAuthenticateURI }}
  {{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* ironic.conf: .Values.conf overlaid with the chart's own options, sorted. */}}
{{- define "ironic.conf" -}}
{{- $conf := deepCopy (.Values.conf | default dict) -}}
{{- $managed := include "ironic.managedConf" . | fromYaml -}}
{{- range $section, $opts := $managed -}}
{{- $_ := set $conf $section (mustMergeOverwrite (get $conf $section | default dict) $opts) -}}
{{- end -}}
# Rendered by the openkeel-ironic chart. Credentials and the per-pod options
# ([DEFAULT]/host, [deploy]/http_url) are written into conf.d at pod start.
{{- range $section := keys $conf | sortAlpha }}

[{{ $section }}]
{{- $opts := get $conf $section }}
{{- range $name := keys $opts | sortAlpha }}
{{- $v := get $opts $name }}
{{ $name }} = {{ if kindIs "slice" $v }}{{ join "," $v }}{{ else }}{{ $v }}{{ end }}
{{- end }}
{{- end }}
{{ end -}}

{{/* Downward-API environment of every ironic container. */}}
{{- define "ironic.podEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end -}}

{{/*
The init container that writes conf.d: credentials from the mounted Secrets
and, for conductors, the pod's identity and file-server URL.
Arguments: root, role (api, conductor, dbsync, status).
*/}}
{{- define "ironic.configInit" -}}
{{- $root := .root -}}
- name: config
  image: {{ include "ironic.mainImage" $root }}
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  command: ["/bin/sh", "/etc/ironic/config/render-config.sh"]
  env:
    {{- include "ironic.podEnv" $root | nindent 4 }}
    - name: IRONIC_CONF_D
      value: /etc/ironic/conf.d
    - name: IRONIC_SECRETS
      value: /etc/ironic/secrets
    {{- if $root.Values.auth.strategy | eq "keystone" }}
    - name: IRONIC_KEYSTONE_SECTIONS
      value: {{ join " " $root.Values.auth.keystone.sections | quote }}
    {{- end }}
    {{- if eq .role "conductor" }}
    - name: IRONIC_HOST
      value: "$(POD_NAME).{{ include "ironic.conductor.domain" $root }}"
    - name: IRONIC_HTTP_PORT
      value: {{ $root.Values.conductor.httpServer.port | quote }}
    - name: IRONIC_HTTP_ADDRESS_FROM
      value: {{ $root.Values.conductor.provisioning.mode }}
    {{- if $root.Values.conductor.pushEvents.enabled }}
    - name: IRONIC_EVENTS_URL_PREFIX
      value: {{ ternary "https" "http" (ne $root.Values.conductor.pushEvents.tlsSecretName "") }}
    - name: IRONIC_EVENTS_PORT
      value: {{ $root.Values.conductor.pushEvents.port | quote }}
    {{- end }}
    {{- if eq $root.Values.conductor.provisioning.mode "hostNetwork" }}
    - name: IRONIC_HTTP_ADDRESS
      valueFrom:
        fieldRef:
          fieldPath: status.hostIP
    {{- else if eq $root.Values.conductor.provisioning.mode "podNetwork" }}
    - name: IRONIC_HTTP_ADDRESS
      valueFrom:
        fieldRef:
          fieldPath: status.podIP
    {{- else }}
    - name: IRONIC_NETWORK_STATUS
      value: /etc/podinfo/network-status
    - name: IRONIC_HTTP_INTERFACE
      value: {{ $root.Values.conductor.provisioning.attachment.interface | quote }}
    {{- end }}
    {{- else if eq .role "api" }}
    - name: IRONIC_HOST
      value: "$(POD_NAME)"
    {{- end }}
  securityContext:
    {{- toYaml $root.Values.securityContext | nindent 4 }}
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {memory: 64Mi}
  volumeMounts:
    {{- include "ironic.volumeMounts" . | nindent 4 }}
    {{- if and (eq .role "conductor") (eq $root.Values.conductor.provisioning.mode "attachment") }}
    - name: podinfo
      mountPath: /etc/podinfo
      readOnly: true
    {{- end }}
{{- end -}}

{{/* Mounts shared by the init and main containers of a role. */}}
{{- define "ironic.volumeMounts" -}}
{{- $root := .root -}}
- name: config
  mountPath: /etc/ironic/config
  readOnly: true
- name: conf-d
  mountPath: /etc/ironic/conf.d
- name: tmp
  mountPath: /tmp
- name: database-secret
  mountPath: /etc/ironic/secrets/database
  readOnly: true
{{- if and $root.Values.secretsEncryption.enabled (ne .role "dbsync") }}
- name: secrets-keys
  mountPath: /etc/ironic/keys
  readOnly: true
{{- end }}
{{- if not (has .role (list "dbsync" "status")) }}
- name: json-rpc-secret
  mountPath: /etc/ironic/secrets/json-rpc
  readOnly: true
{{- if $root.Values.jsonRPC.tls.enabled }}
- name: json-rpc-tls
  mountPath: /etc/ironic/tls/json-rpc
  readOnly: true
{{- end }}
{{- if eq $root.Values.auth.strategy "keystone" }}
- name: keystone-secret
  mountPath: /etc/ironic/secrets/keystone
  readOnly: true
{{- else if eq $root.Values.auth.strategy "http_basic" }}
- name: api-secret
  mountPath: /etc/ironic/secrets/api
  readOnly: true
{{- end }}
{{- end }}
{{- end -}}

{{/* Volumes of a role (without the role's own scratch volumes). */}}
{{- define "ironic.volumes" -}}
{{- $root := .root -}}
- name: config
  configMap:
    name: {{ if eq .role "dbsync" }}{{ include "ironic.dbsync.name" $root }}{{ else }}{{ include "ironic.config.name" $root }}{{ end }}
    defaultMode: 0444
- name: conf-d
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
- name: tmp
  emptyDir:
    sizeLimit: 1Gi
- name: database-secret
  secret:
    secretName: {{ $root.Values.database.secretName }}
    defaultMode: 0440
    items:
      - key: {{ $root.Values.database.secretKey }}
        path: connection
{{- if and $root.Values.secretsEncryption.enabled (ne .role "dbsync") }}
{{- /* The key ring reads every file of the folder: one per key id. */}}
- name: secrets-keys
  secret:
    secretName: {{ $root.Values.secretsEncryption.secretName }}
    defaultMode: 0440
    items:
      {{- range $root.Values.secretsEncryption.keyIDs }}
      - {key: {{ . | quote }}, path: {{ . | quote }}}
      {{- end }}
{{- end }}
{{- if not (has .role (list "dbsync" "status")) }}
- name: json-rpc-secret
  secret:
    secretName: {{ $root.Values.jsonRPC.auth.secretName }}
    defaultMode: 0440
    items:
      - {key: username, path: username}
      - {key: password, path: password}
      - {key: htpasswd, path: htpasswd}
{{- if $root.Values.jsonRPC.tls.enabled }}
- name: json-rpc-tls
  secret:
    secretName: {{ $root.Values.jsonRPC.tls.secretName }}
    defaultMode: 0440
    items:
      - {key: tls.crt, path: tls.crt}
      - {key: tls.key, path: tls.key}
      - {key: ca.crt, path: ca.crt}
{{- end }}
{{- if eq $root.Values.auth.strategy "keystone" }}
- name: keystone-secret
  secret:
    secretName: {{ $root.Values.auth.keystone.secretName }}
    defaultMode: 0440
    items:
      - {key: username, path: username}
      - {key: password, path: password}
{{- else if eq $root.Values.auth.strategy "http_basic" }}
- name: api-secret
  secret:
    secretName: {{ $root.Values.auth.httpBasic.secretName }}
    defaultMode: 0440
    items:
      - {key: htpasswd, path: htpasswd}
{{- end }}
{{- end }}
{{- end -}}

{{- define "ironic.podSpecCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.serviceAccount.name }}
serviceAccountName: {{ . }}
{{- end }}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}
