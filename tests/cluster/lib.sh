# The cluster on one host, for tests/cluster/run.sh and bench/cluster.sh
# (sourced after tests/lib/harness.sh and h_begin: uses T, RUNNER, IMG, GW).
#
#   cl_init            names and addresses, all derived from this shell's pid
#                      so parallel runs never share one: netns cl<pid>n<i>,
#                      bridge cl<pid>br, runners cl<pid><a|b|c>, a /24 out of
#                      10.210.0.0/16-10.249.255.0/24 not in use on this host
#   cl_net_up          the bridge (host side .1) and CL_N network namespaces,
#                      runner i at CL_ADDR[i] (.2, .3, ...) behind a veth pair,
#                      and at CL_ADDR6[i] in an fd00::/8 /64 of this run's own
#   cl_certs           the cluster CA (deploy/certs.sh) in T/pki: each
#                      runner's certificate, the gateways' one (gw), and a
#                      second, unrelated CA in T/pki-other
#   cl_runner_start I [ARGS]   runner I in its netns (nsenter --net only: it
#                      keeps the host's mounts and cgroups) on T/r<I>.sock,
#                      state T/s<I>, --listen-tls CL_LISTEN[I] (default
#                      CL_ADDR[I]:CL_RPORT); waits for both sockets. RPID[I],
#                      its log T/runner.<name>.log
#   cl_runner_kill9 I  SIGKILL (its sandboxes stay behind until it starts
#                      again: the teardown restarts it to reap them)
#   cl_runner_stop I   SIGTERM and wait (it stops its sandboxes first)
#   cl_gateway NAME ARGS...   a gateway on a free loopback port (CL_PORT,
#                      GW_PID) with the cluster TLS flags, the key(s) in
#                      KEY and the metrics key CL_METRICS_KEY (the whole
#                      of /v1/runners); its log T/gw.NAME.log
#   cl_start_gw NAME BIN ARGS...   the same for any gateway command line
#   cl_gateway_dns NAME ARGS...   the same under `unshare -m` with
#                      T/resolv.conf bind-mounted on /etc/resolv.conf: its
#                      resolver asks cl_dns_start's server, nothing else
#   cl_dns_start       tests/cluster/dns.py on CL_DNS:53 (a loopback address
#                      of this run's own), zone T/zone, queries in T/dns.log
#   cl_teardown        everything above gone: processes, runners (one started
#                      again where one was killed, to reap what it left), netns,
#                      bridge; safe to call twice (the exit trap calls it too)
CL_N=3
CL_RPORT=7443
CL_PKI=
CL_ADDR=() CL_ADDR6=() CL_LISTEN=() CL_NS=() CL_NAME=() RPID=() CL_DIRTY=()
CL_NET_MADE=0
CL_METRICS_KEY=metrics-cluster-$$

cl_init() {
	local p=$$ i x y
	CL_TAG=cl$p
	CL_BR=${CL_TAG}br
	for i in $(seq 0 39); do
		x=$((210 + (p / 256 + i) % 40)) y=$((p % 256))
		ip -4 addr show | grep -q "inet 10\.$x\.$y\." && continue
		ip -4 route show | grep -q "^10\.$x\.$y\." && continue
		CL_NET=10.$x.$y
		break
	done
	[ -n "${CL_NET:-}" ] || return 1
	CL_NET6=$(printf 'fd5b:%x:%x:' $((p >> 16)) $((p & 65535)))
	for i in $(seq 1 $CL_N); do
		CL_NS[i]=${CL_TAG}n$i
		CL_ADDR[i]=$CL_NET.$((i + 1))
		CL_ADDR6[i]=$CL_NET6:$((i + 1))
		CL_NAME[i]=$CL_TAG$(echo abcdefgh | cut -c"$i")
		CL_DIRTY[i]=0
	done
	# a loopback address of our own for the DNS server's port 53
	CL_DNS=127.53.$(((p >> 8) & 255)).$((p & 255))
	CL_PKI=$T/pki
}

cl_net_up() {
	local i
	CL_NET_MADE=1
	ip link add "$CL_BR" type bridge || return 1
	ip addr add "$CL_NET.1/24" dev "$CL_BR" && ip link set "$CL_BR" up || return 1
	ip -6 addr add "$CL_NET6:1/64" dev "$CL_BR" nodad || return 1
	for i in $(seq 1 $CL_N); do
		ip netns add "${CL_NS[i]}" &&
		ip link add "${CL_TAG}h$i" type veth peer name "${CL_TAG}p$i" &&
		ip link set "${CL_TAG}p$i" netns "${CL_NS[i]}" &&
		ip link set "${CL_TAG}h$i" master "$CL_BR" &&
		ip link set "${CL_TAG}h$i" up &&
		ip -n "${CL_NS[i]}" link set lo up &&
		ip -n "${CL_NS[i]}" addr add "${CL_ADDR[i]}/24" dev "${CL_TAG}p$i" &&
		# a link set down to simulate a vanished host keeps its IPv6
		# address (by default the kernel drops it with the link)
		nsenter --net="/run/netns/${CL_NS[i]}" sysctl -qw "net.ipv6.conf.${CL_TAG}p$i.keep_addr_on_down=1" &&
		ip -n "${CL_NS[i]}" -6 addr add "${CL_ADDR6[i]}/64" dev "${CL_TAG}p$i" nodad &&
		ip -n "${CL_NS[i]}" link set "${CL_TAG}p$i" up &&
		ip -n "${CL_NS[i]}" route add default via "$CL_NET.1" || return 1
	done
	# the host reaches every namespace over the bridge (a bridge with no
	# port up yet answers nothing: wait for the first ARP to work)
	for i in $(seq 1 $CL_N); do
		for _ in $(seq 50); do
			ip netns exec "${CL_NS[i]}" bash -c "exec 3<>/dev/tcp/$CL_NET.1/9 || true" 2>/dev/null
			ip neigh show "${CL_ADDR[i]}" dev "$CL_BR" 2>/dev/null | grep -q lladdr && break
			sleep 0.1
		done
	done
}

cl_certs() {
	local i out
	out=$T/certs.log
	deploy/certs.sh ca "$CL_PKI" >>"$out" 2>&1 || return 1
	for i in $(seq 1 $CL_N); do
		deploy/certs.sh runner "$CL_PKI" "${CL_NAME[i]}" "${CL_ADDR[i]}" >>"$out" 2>&1 || return 1
	done
	deploy/certs.sh gateway "$CL_PKI" gw >>"$out" 2>&1 || return 1
	deploy/certs.sh ca "$T/pki-other" >>"$out" 2>&1 || return 1
}

# 0 once something accepts TCP on addr:port, 1 after ~10 s or when pid died
cl_wait_tcp() { # addr port [pid]
	for _ in $(seq 100); do
		timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

cl_runner_start() { # i [extra args]
	local i=$1 name log
	shift
	name=${CL_NAME[i]}
	log=$T/runner.$name.log
	rm -f "$T/r$i.sock"
	nsenter --net="/run/netns/${CL_NS[i]}" "$RUNNER" --name "$name" --socket "$T/r$i.sock" \
		--state-dir "$T/s$i" --image-dir "$IMG" --max-memory-mb "${CL_RUNNER_MB:-4096}" \
		--listen-tls "${CL_LISTEN[i]:-${CL_ADDR[i]}:$CL_RPORT}" --cert "$CL_PKI/runner-$name.crt" \
		--key "$CL_PKI/runner-$name.key" --client-ca "$CL_PKI/ca.crt" "$@" >>"$log" 2>&1 &
	RPID[i]=$!
	h_track "${RPID[i]}"
	CL_DIRTY[i]=1
	for _ in $(seq 100); do
		[ -S "$T/r$i.sock" ] && break
		kill -0 "${RPID[i]}" 2>/dev/null || break
		sleep 0.1
	done
	if [ -S "$T/r$i.sock" ] && cl_wait_tcp "${CL_ADDR[i]}" $CL_RPORT "${RPID[i]}"; then
		return 0
	fi
	echo "runner $name did not start:"; tail -5 "$log"
	return 1
}

cl_runner_kill9() { # i
	kill -KILL "${RPID[$1]}" 2>/dev/null
	wait "${RPID[$1]}" 2>/dev/null
}

cl_runner_stop() { # i
	local p=${RPID[$1]:-}
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	CL_DIRTY[$1]=0
}

# bin on a free port: up to three random ports. A taken port can look
# free: another suite's gateway on it answers /healthz for ours, which then
# dies on its bind; so ours is taken as started only once it said it
# listens on that port.
cl_start_gw() { # name bin args... -> CL_PORT, GW_PID
	local name=$1 bin=$2 port log
	shift 2
	log=$T/gw.$name.log
	for _ in 1 2 3; do
		port=$(random_port)
		if SANDBOX_API_KEYS=$KEY SANDBOX_METRICS_KEY=$CL_METRICS_KEY \
			start_gateway "$bin" "$port" "$log" "$@"; then
			for _ in $(seq 50); do
				grep -q "listening on http://127.0.0.1:$port[, ]" "$log" && { CL_PORT=$port; return 0; }
				kill -0 "$GW_PID" 2>/dev/null || break
				sleep 0.1
			done
		fi
		kill "$GW_PID" 2>/dev/null; wait "$GW_PID" 2>/dev/null
	done
	tail -5 "$log"
	return 1
}

cl_gateway() { # name args...
	local name=$1
	shift
	cl_start_gw "$name" "$GW" --runner-ca "$CL_PKI/ca.crt" --runner-cert "$CL_PKI/gateway-gw.crt" \
		--runner-key "$CL_PKI/gateway-gw.key" "$@"
}

cl_gateway_dns() { # name args...
	local name=$1
	shift
	printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$CL_DNS" >"$T/resolv.conf"
	# one pid from here to the gateway: unshare execs, sh execs
	cat >"$T/gw-dns.sh" <<-EOF
	#!/bin/sh
	exec unshare -m --propagation private sh -c 'mount --bind "\$0" /etc/resolv.conf && exec "\$@"' "$T/resolv.conf" "$GW" "\$@"
	EOF
	chmod +x "$T/gw-dns.sh"
	cl_start_gw "$name" "$T/gw-dns.sh" --runner-ca "$CL_PKI/ca.crt" \
		--runner-cert "$CL_PKI/gateway-gw.crt" --runner-key "$CL_PKI/gateway-gw.key" "$@"
}

cl_dns_start() {
	: >>"$T/zone"
	python3 tests/cluster/dns.py "$CL_DNS" "$T/zone" "$T/dns.log" 2>>"$T/dns.err" &
	h_track $!
	for _ in $(seq 50); do [ -e "$T/dns.log.ready" ] && return 0; sleep 0.1; done
	cat "$T/dns.err"
	return 1
}

# rewrite the zone in place of the old one (dns.py rereads a changed file)
cl_zone() { # lines...
	printf '%s\n' "$@" >"$T/zone.new" && mv "$T/zone.new" "$T/zone"
}

# 0 once the DNS server answered NAME TYPE N more times after now's count;
# the resolver thread asks again every --discovery-interval-ms
cl_dns_asked() { # name type n [tries of 0.1 s]
	local base
	base=$(grep -c "^$1 $2 " "$T/dns.log")
	for _ in $(seq "${4:-100}"); do
		[ "$(grep -c "^$1 $2 " "$T/dns.log")" -ge $((base + $3)) ] && return 0
		sleep 0.1
	done
	return 1
}

cl_teardown() {
	local i
	# a runner that died (kill -9, a crash) left its sandboxes behind;
	# the ones alive now stop theirs on SIGTERM
	for i in $(seq 1 $CL_N); do
		kill -0 "${RPID[i]:-0}" 2>/dev/null && CL_DIRTY[i]=0
	done
	h_stop_all
	for i in $(seq 1 $CL_N); do
		# a runner of its name on its state dir reaps them at start
		# (reconcile); a plain one (no TLS, host network) suffices
		if [ "${CL_DIRTY[i]:-0}" = 1 ] && ! kill -0 "${RPID[i]:-0}" 2>/dev/null && [ -d "$T/s$i" ]; then
			"$RUNNER" --name "${CL_NAME[i]}" --socket "$T/reap$i.sock" --state-dir "$T/s$i" \
				--image-dir "$IMG" >>"$T/runner.${CL_NAME[i]}.log" 2>&1 &
			RPID[i]=$!
			for _ in $(seq 100); do
				[ -S "$T/reap$i.sock" ] && break
				kill -0 "${RPID[i]}" 2>/dev/null || break
				sleep 0.1
			done
			cl_runner_stop "$i"
		fi
		CL_DIRTY[i]=0
	done
	h_stop_all
	# the runners' name locks (the lock is the flock; the file stays)
	rm -f /run/sandbox-runner."$CL_TAG"[a-z].lock
	if [ "$CL_NET_MADE" = 1 ]; then
		# the veth pairs first, at once (a netns' own devices go in the
		# kernel's cleanup work, a moment after `ip netns del`)
		for i in $(seq 1 $CL_N); do
			ip link show "${CL_TAG}h$i" >/dev/null 2>&1 && ip link del "${CL_TAG}h$i"
			[ -e "/run/netns/${CL_NS[i]}" ] && ip netns del "${CL_NS[i]}"
		done
		ip link show "$CL_BR" >/dev/null 2>&1 && ip link del "$CL_BR"
		CL_NET_MADE=0
	fi
	return 0
}

# what is left of this run on the host, one line each; empty: nothing
cl_leftovers() {
	local i
	for i in $(seq 1 $CL_N); do
		[ -e "/run/netns/${CL_NS[i]}" ] && echo "netns ${CL_NS[i]}"
		pgrep -f -- "--name ${CL_NAME[i]} " >/dev/null && echo "runner process ${CL_NAME[i]}"
		find /sys/fs/cgroup -maxdepth 4 -name "sbx_${CL_NAME[i]}_*" 2>/dev/null | sed 's/^/cgroup /'
	done
	ls /run/sandbox-runner."$CL_TAG"[a-z].lock 2>/dev/null | sed 's/^/lock file /'
	ip -o link show 2>/dev/null | grep -o "$CL_TAG[a-z0-9]*" | sort -u | sed 's/^/link /'
	grep -F " $T/" /proc/mounts | awk '{print "mount " $2}'
	pgrep -f -- "$T/" | while read -r p; do echo "process $p $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"; done
	return 0
}
