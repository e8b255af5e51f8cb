#!/bin/sh
# Writes the part of the configuration a ConfigMap cannot hold into
# $IRONIC_CONF_D/50-pod.conf, read after ironic.conf (--config-dir):
#  - credentials, from the Secrets mounted under $IRONIC_SECRETS;
#  - [DEFAULT]/host, the pod's stable DNS name, so that the hash-ring entry
#    host:[json_rpc]/port reaches this pod through the headless Service;
#  - [deploy]/http_url, the address the booting machines fetch files from,
#    and [openkeel_http]/http_root_host_ip, so that the files are served on
#    that address only (not on every address of the node with hostNetwork);
#  - [openkeel_events]/host_ip and external_url, the push-event listener on
#    that same address, when push events are on.
# Runs in the init container of every pod with /bin/sh only.
set -eu

conf_d=${IRONIC_CONF_D:?IRONIC_CONF_D is not set}
secrets=${IRONIC_SECRETS:?IRONIC_SECRETS is not set}
out="$conf_d/50-pod.conf"

# value FILE: the content of a Secret key as an INI value. oslo.config
# interpolates "$", so it is doubled; a newline would end the value early,
# so one inside is refused rather than silently cut.
value() {
	v=$(cat "$1")
	case $v in
	*"
"*) echo "render-config: $1 holds more than one line" >&2; exit 1 ;;
	esac
	printf '%s' "$v" | sed 's/\$/$$/g'
}

# http_address: this pod's address on the provisioning network.
http_address() {
	case ${IRONIC_HTTP_ADDRESS_FROM:-} in
	hostNetwork | podNetwork)
		printf '%s' "${IRONIC_HTTP_ADDRESS:?IRONIC_HTTP_ADDRESS is not set}"
		;;
	attachment)
		# Multus writes k8s.v1.cni.cncf.io/network-status once the
		# attachment exists; the downward-API file may lag behind it.
		tries=0
		while :; do
			addr=""
			if [ -s "$IRONIC_NETWORK_STATUS" ]; then
				addr=$(tr -d ' \t\r\n' <"$IRONIC_NETWORK_STATUS" |
					sed -n 's/.*"interface":"'"$IRONIC_HTTP_INTERFACE"'","ips":\["\([^"]*\)".*/\1/p')
			fi
			[ -n "$addr" ] && break
			tries=$((tries + 1))
			if [ "$tries" -ge "${IRONIC_NETWORK_STATUS_TRIES:-90}" ]; then
				echo "render-config: no address on $IRONIC_HTTP_INTERFACE in $IRONIC_NETWORK_STATUS" >&2
				exit 1
			fi
			sleep 2
		done
		printf '%s' "$addr"
		;;
	*)
		echo "render-config: unknown IRONIC_HTTP_ADDRESS_FROM '${IRONIC_HTTP_ADDRESS_FROM:-}'" >&2
		exit 1
		;;
	esac
}

# Every value is read before anything is written: a failure inside a
# command substitution used as an argument would not stop the script.
connection=$(value "$secrets/database/connection")
rpc_user="" rpc_password=""
if [ -f "$secrets/json-rpc/username" ]; then
	rpc_user=$(value "$secrets/json-rpc/username")
	rpc_password=$(value "$secrets/json-rpc/password")
fi
ks_user="" ks_password=""
if [ -f "$secrets/keystone/username" ]; then
	ks_user=$(value "$secrets/keystone/username")
	ks_password=$(value "$secrets/keystone/password")
fi
http_url="" http_host="" events_url=""
if [ -n "${IRONIC_HTTP_ADDRESS_FROM:-}" ]; then
	http_host=$(http_address)
	addr=$http_host
	case $addr in *:*) addr="[$addr]" ;; esac
	http_url="http://$addr:${IRONIC_HTTP_PORT:?IRONIC_HTTP_PORT is not set}"
	if [ -n "${IRONIC_EVENTS_PORT:-}" ]; then
		events_url="${IRONIC_EVENTS_URL_PREFIX:?IRONIC_EVENTS_URL_PREFIX is not set}://$addr:$IRONIC_EVENTS_PORT"
	fi
fi

{
	echo "# Written by render-config.sh at pod start."
	if [ -n "${IRONIC_HOST:-}" ]; then
		printf '[DEFAULT]\nhost = %s\n' "$IRONIC_HOST"
	fi
	printf '[database]\nconnection = %s\n' "$connection"
	if [ -n "$rpc_user" ]; then
		printf '[json_rpc]\nusername = %s\npassword = %s\n' "$rpc_user" "$rpc_password"
	fi
	if [ -n "$ks_user" ]; then
		for section in ${IRONIC_KEYSTONE_SECTIONS:-}; do
			printf '[%s]\nusername = %s\npassword = %s\n' "$section" "$ks_user" "$ks_password"
		done
	fi
	if [ -n "$http_url" ]; then
		printf '[deploy]\nhttp_url = %s\n' "$http_url"
		printf '[openkeel_http]\nhttp_root_host_ip = %s\n' "$http_host"
	fi
	if [ -n "$events_url" ]; then
		printf '[openkeel_events]\nhost_ip = %s\nexternal_url = %s\n' "$http_host" "$events_url"
	fi
} >"$out.tmp"
mv "$out.tmp" "$out"
