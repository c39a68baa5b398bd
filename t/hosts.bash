# Network namespaces as hosts, for the tests of --hosts and --pool.
#
# hosts_up N makes N+1 network namespaces joined by veth pairs to a
# bridge in a namespace of its own (the "switch"): ns0 (10.77.0.1) is the
# local host, where the tests run flimflam, and ns1..nsN (10.77.0.2 ...)
# each run the distribution's sshd on their own address. Nothing of the
# machine is touched: the namespaces are held by processes of the test
# (no /run/netns), each sshd runs in a private mount namespace with a
# tmpfs over /run (its privilege separation directory), and its keys,
# configuration, authorized_keys and the client's known_hosts, identity
# and ssh_config are in the test's own directory. Traffic goes to these
# namespaces only. The namespaces share the file system, so flimflam on
# a namespace host is this checkout's bin/, at the same absolute path.
#
# After hosts_up:
#   HOSTS_DIR        the keys, configurations and logs
#   HOSTS_SSH_CONFIG the client's ssh_config (FLIMFLAM_SSH_CONFIG is set to it)
#   HOST_ADDR[i]     nsi's address; HOST_NS[i] the pid holding its namespace
#   HOST_SSHD[i]     nsi's sshd listener
#   in_local CMD...  runs CMD in ns0 (the local host)
#   in_host I CMD... runs CMD in nsI
# hosts_down (every test's teardown) stops every process in the
# namespaces, by pid, and the namespaces with them.

HOSTS_NET=10.77.0

# hosts_skip_unless_possible: skip, saying why, where namespaces, veth
# pairs or sshd cannot be had.
hosts_skip_unless_possible() {
	[ "$(id -u)" -eq 0 ] || skip "namespaces as hosts need root"
	[ -x /usr/sbin/sshd ] || skip "/usr/sbin/sshd is missing (openssh-server; make deps installs it)"
	command -v ssh >/dev/null || skip "ssh is missing (openssh-client; make deps installs it)"
	command -v ssh-keygen >/dev/null || skip "ssh-keygen is missing (openssh-client)"
	command -v ip >/dev/null || skip "ip (iproute2) is missing"
	command -v nsenter >/dev/null || skip "nsenter (util-linux) is missing"
	unshare -n true 2>/dev/null || skip "cannot make a network namespace here (unshare -n failed)"
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here (unshare -m failed)"
}

# ns_hold: a process in a network namespace of its own; echoes its pid.
ns_hold() {
	unshare -n sleep 100000 3>&- </dev/null >/dev/null 2>&1 &
	local p=$! i
	# unshare execs sleep once the namespace is made.
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink /proc/$p/exe 2>/dev/null)" = "$(command -v sleep)" ] && break
		sleep 0.02
	done
	echo "$p"
}

in_ns() {
	local p="$1"
	shift
	nsenter --net=/proc/"$p"/ns/net "$@"
}

in_local() {
	in_ns "${HOST_NS[0]}" "$@"
}

in_host() {
	local i="$1"
	shift
	in_ns "${HOST_NS[$i]}" "$@"
}

# listening_in PID PORT: some socket of PID's network namespace listens on PORT.
listening_in() {
	awk -v p="$(printf '%04X' "$2")" \
		'$4 == "0A" && substr($2, index($2, ":") + 1) == p { f = 1 } END { exit !f }' \
		/proc/"$1"/net/tcp /proc/"$1"/net/tcp6 2>/dev/null
}

# ports_bound_in I: the TCP ports that listen in nsI other than sshd's 22,
# one a line.
ports_bound_in() {
	local hex
	awk '$4 == "0A" { n = split($2, a, ":"); print a[n] }' \
		/proc/"${HOST_NS[$1]}"/net/tcp /proc/"${HOST_NS[$1]}"/net/tcp6 2>/dev/null |
		while read -r hex; do
			[ $((16#$hex)) -eq 22 ] || echo $((16#$hex))
		done | sort -un
}

# procs_in I: the processes of nsI other than its holder and its sshd
# listener (what a run started there, and sshd's sessions), one a line.
procs_in() {
	local want p
	want=$(readlink /proc/"${HOST_NS[$1]}"/ns/net) || return 0
	# net:[N] as find's pattern: the brackets literally.
	want=${want//[/\\[}
	want=${want//]/\\]}
	for p in $(find /proc/[0-9]*/ns/net -maxdepth 0 -lname "$want" 2>/dev/null |
		cut -d/ -f3); do
		[ "$p" = "${HOST_NS[$1]}" ] && continue
		[ "$p" = "${HOST_SSHD[$1]:-}" ] && continue
		[ "$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null)" = Z ] && continue
		echo "$p"
	done
}

# hosts_clean SECONDS: every namespace host has no process of a run left
# and no port bound but sshd's, within SECONDS (an ssh session's end takes
# sshd a moment); otherwise says what is left and fails.
hosts_clean() {
	local i n t left
	for ((t = 0; t < $1 * 10; t++)); do
		left=
		for ((i = 0; i < ${#HOST_NS[@]}; i++)); do
			n=$(procs_in "$i")
			[ -z "$n" ] || left="$left ns$i: processes $(echo "$n" | tr '\n' ' ')"
			n=$(ports_bound_in "$i")
			[ -z "$n" ] || left="$left ns$i: ports $(echo "$n" | tr '\n' ' ')"
		done
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "left on the hosts:$left"
	for ((i = 0; i < ${#HOST_NS[@]}; i++)); do
		for n in $(procs_in "$i"); do
			echo "ns$i $n: $(tr '\0' ' ' </proc/"$n"/cmdline 2>/dev/null)"
		done
	done
	return 1
}

# start_sshd I: nsI's sshd on its address, port 22, in the foreground of
# a private mount namespace; HOST_SSHD[I] is its pid once it listens.
start_sshd() {
	local i="$1" cfg="$HOSTS_DIR/sshd$1.conf" t
	ssh-keygen -q -t ed25519 -N '' -C "ns$i" -f "$HOSTS_DIR/host$i" || return 1
	echo "${HOST_ADDR[$i]} $(cut -d' ' -f1,2 "$HOSTS_DIR/host$i.pub")" >>"$HOSTS_DIR/known_hosts"
	# The remote stages find the programs as the test does: this PATH
	# (bin/ first), and skrouterd's libraries where the test has them.
	cat >"$cfg" <<-EOF
		ListenAddress ${HOST_ADDR[$i]}:22
		HostKey $HOSTS_DIR/host$i
		AuthorizedKeysFile $HOSTS_DIR/authorized_keys
		PidFile none
		UsePAM no
		StrictModes no
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		MaxSessions 30
		MaxStartups 30
		SetEnv PATH=$PATH LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} PYTHONPATH=${PYTHONPATH:-} FLIMFLAM_RUNS=$FLIMFLAM_RUNS HOME=$HOSTS_DIR/home TMPDIR=$HOSTS_DIR/tmp
	EOF
	# shellcheck disable=SC2016 # the inner sh expands $0
	nsenter --net=/proc/"${HOST_NS[$i]}"/ns/net unshare -m sh -c \
		'mount -t tmpfs -o mode=755 tmpfs /run && mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -D -e -f "$0"' \
		"$cfg" </dev/null >"$HOSTS_DIR/sshd$i.log" 2>&1 3>&- &
	HOST_SSHD[i]=$!
	for ((t = 0; t < 200; t++)); do
		listening_in "${HOST_NS[$i]}" 22 && return 0
		kill -0 "${HOST_SSHD[$i]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "sshd of ns$i did not listen; its log:"
	cat "$HOSTS_DIR/sshd$i.log"
	return 1
}

# hosts_up N: the switch, ns0 (local) and ns1..nsN with their sshd.
hosts_up() {
	local n="$1" i
	hosts_skip_unless_possible
	HOSTS_DIR="$BATS_TEST_TMPDIR/hosts"
	mkdir -p "$HOSTS_DIR"
	chmod 700 "$HOSTS_DIR"
	HOST_NS=() HOST_SSHD=() HOST_ADDR=()
	HOSTS_SWITCH=$(ns_hold)
	in_ns "$HOSTS_SWITCH" ip link add br0 type bridge || return 1
	in_ns "$HOSTS_SWITCH" ip link set br0 up || return 1
	for ((i = 0; i <= n; i++)); do
		HOST_NS[i]=$(ns_hold)
		HOST_ADDR[i]=$HOSTS_NET.$((i + 1))
		in_ns "$HOSTS_SWITCH" ip link add "port$i" type veth peer name eth0 netns "${HOST_NS[$i]}" || return 1
		in_ns "$HOSTS_SWITCH" ip link set "port$i" master br0 up || return 1
		in_host "$i" ip link set lo up || return 1
		in_host "$i" ip addr add "${HOST_ADDR[$i]}/24" dev eth0 || return 1
		in_host "$i" ip link set eth0 up || return 1
	done
	# The sessions' HOME (perf's build-id cache) and TMPDIR (the captures' directories).
	mkdir -p "$HOSTS_DIR/home" "$HOSTS_DIR/tmp"
	ssh-keygen -q -t ed25519 -N '' -C flimflam-test -f "$HOSTS_DIR/id" || return 1
	cp "$HOSTS_DIR/id.pub" "$HOSTS_DIR/authorized_keys"
	: >"$HOSTS_DIR/known_hosts"
	for ((i = 1; i <= n; i++)); do
		start_sshd "$i" || return 1
	done
	HOSTS_SSH_CONFIG="$HOSTS_DIR/ssh_config"
	# Host ns1 ... name the namespaces; their address is their HostName.
	{
		for ((i = 1; i <= n; i++)); do
			printf 'Host ns%d\n\tHostName %s\n' "$i" "${HOST_ADDR[$i]}"
		done
		cat <<-EOF
			Host *
			User root
			IdentityFile $HOSTS_DIR/id
			IdentitiesOnly yes
			UserKnownHostsFile $HOSTS_DIR/known_hosts
			GlobalKnownHostsFile /dev/null
			StrictHostKeyChecking yes
			ConnectTimeout 10
			LogLevel ERROR
		EOF
	} >"$HOSTS_SSH_CONFIG"
	export FLIMFLAM_SSH_CONFIG="$HOSTS_SSH_CONFIG"
}

# hosts_down: every process in the namespaces (runs, sessions, sshd) and
# the holders, by pid; then the namespaces are gone with their holders.
hosts_down() {
	local i p pids=
	[ -n "${HOST_NS[*]:-}" ] || return 0
	for ((i = 0; i < ${#HOST_NS[@]}; i++)); do
		pids="$pids $(procs_in "$i") ${HOST_SSHD[$i]:-}"
	done
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	sleep 0.2
	for p in $pids "${HOST_NS[@]}" ${HOSTS_SWITCH:-}; do
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in $pids "${HOST_NS[@]}" ${HOSTS_SWITCH:-}; do
		wait "$p" 2>/dev/null || true
	done
	HOST_NS=()
	return 0
}

# The helpers the --hosts test files share (t/hosts.bats, t/hosts-capture.bats,
# t/hosts-tls.bats).

# run_hosts FILE ARGS...: flimflam run --json ARGS on the local host (ns0),
# in the background, events to FILE and stderr to FILE.err; RUN_PID is
# flimflam's (nsenter execs it).
run_hosts() {
	local f="$1"
	shift
	nsenter --net=/proc/"${HOST_NS[0]}"/ns/net flimflam run --json "$@" >"$f" 2>"$f.err" 3>&- &
	RUN_PID=$!
}

# The four roles on four namespaces: the ssh destination is the alias of
# ssh_config, the address the namespace's.
four_hosts() {
	echo "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns3/${HOST_ADDR[3]},server=ns4/${HOST_ADDR[4]}"
}

# wait_measuring FILE: the run's window opened (the whole topology is up).
wait_measuring() {
	wait_for_grep '"event":"window"' "$1" 30
}

# ssh_master DEST: the pid of flimflam's ssh master of DEST.
ssh_master() {
	local p
	for p in $(descendants "$RUN_PID"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qE "^ssh .*ControlMaster=yes.* $1 $" && { echo "$p"; return 0; }
	done
	return 1
}

# relay_pids FILE ROLE: the pids of the relay ROLE, as its capture event lists them, one a line.
relay_pids() {
	jq -r --arg r "$2" 'select(.event == "capture") | .relays[] | select(.role == $r) | .pids[]' "$1"
}

# link_hosts_ok EVENTS N: the chain of N routers, each on its own host:
# each router's inter-router listener on its host's address, and the
# connector of the one before it aimed there (their configurations).
link_hosts_ok() {
	local ev="$1" n="$2" k a conf prev
	for ((k = 1; k <= n; k++)); do
		a=$(jq -r --arg r "r$k" 'select(.event == "topology") | .relays[] | select(.role == $r) | .address' "$ev")
		conf=$(jq -r --arg r "r$k" 'select(.event == "topology") | .relays[] | select(.role == $r) | .config' "$ev")
		[ "$a" = "${HOST_ADDR[$k]}" ]
		if ((k > 1)); then
			# Its listener for the link, on its address; the previous router's connector to it.
			grep -A2 '^listener {' "$conf" | grep -qx "    host: $a"
			grep -A3 '^connector {' "$prev" | grep -qx "    host: $a"
		fi
		prev=$conf
	done
}

# err_why_one_line FILE: a failed run's stderr: why (one line), then where its files are.
err_why_one_line() {
	[ "$(wc -l <"$1")" -eq 2 ] && sed -n 2p "$1" | grep -q "^flimflam: the run failed; its files are in '"
}

# no_keys_left EVENTS: no relay's key is left on the relays' hosts: their
# private directories (TMPDIR there) are gone, and no run directory of a
# remote stage holds a key; here, the run's own directory keeps them.
no_keys_left() {
	local ev="$1" d
	[ -z "$(find "$HOSTS_DIR/tmp" -name 'flimflam-tls-*' 2>/dev/null)" ] ||
		{ find "$HOSTS_DIR/tmp"; false; }
	for d in $(jq -r 'select(.event == "start" and .tool == "ff-topology") | .run_dir' "$ev"); do
		[ -z "$(find "$d" -name '*.key')" ] || { find "$d" -name '*.key'; false; }
	done
}

# run_hosts_window FILE I ARGS...: run_hosts FILE ARGS, and once its window
# opens, nsI's listening sockets ("address:port", one a line) into
# FILE.listen; then its status. A window the busy machine stretched
# (BUSY_ERE: the namespaces share this machine's 2 CPUs) is run once more.
# shellcheck disable=SC2154 # $status is set by wait_status (t/helper.bash)
run_hosts_window() {
	local f="$1" i="$2" try
	shift 2
	for try in 1 2; do
		rm -f "$f" "$f.err" "$f.listen"
		run_hosts "$f" "$@"
		if wait_measuring "$f"; then
			in_host "$i" ss -Hltn | awk '{print $4}' >"$f.listen"
		fi
		wait_status "$RUN_PID"
		cat "$f.err"
		[ "$status" -eq 1 ] && grep -qE -- "$BUSY_ERE" "$f.err" && [ "$try" -eq 1 ] && continue
		return 0
	done
}

# The client, the relays (together) and the server on three hosts.
three_hosts() {
	echo "client=ns1/${HOST_ADDR[1]},r1=ns2/${HOST_ADDR[2]},r2=ns2/${HOST_ADDR[2]},server=ns3/${HOST_ADDR[3]}"
}

# server_listens_on FILE ADDRESS: the run's server (its server event's
# port) listened on ADDRESS only, in FILE.listen.
server_listens_on() {
	local port
	port=$(jq -r 'select(.event == "server") | .port' "$1")
	[ -n "$port" ]
	cat "$1.listen"
	grep -qx "$2:$port" "$1.listen"
	! grep -v "^$2:" "$1.listen" | grep -q ":$port\$" || false
}

# in_local_private DIR CMD...: CMD on the local host in a mount namespace
# of its own, with a tmpfs over DIR that only it sees.
in_local_private() {
	local dir="$1"
	shift
	# shellcheck disable=SC2016 # the inner sh expands $1 and $@
	in_local unshare -m sh -c 'mount -t tmpfs tmpfs "$1" && shift && exec "$@"' sh "$dir" "$@"
}

# hold_exit PID SECONDS: PID (a process of the run RUN_PID, an ssh master)
# traced by t/fixtures/hosts/hold-exit.py, which keeps its exit from
# flimflam until flimflam has reaped every other child but its masters,
# and SECONDS more; HOLD_PID is the tracer's pid (wait_hold waits for it,
# the teardown ends it). Skips where this machine forbids ptrace.
hold_exit() {
	local out="$BATS_TEST_TMPDIR/hold"
	"$TOP/t/fixtures/hosts/hold-exit.py" "$1" "$RUN_PID" "$2" >"$out.out" 2>"$out.err" 3>&- &
	HOLD_PID=$!
	if ! wait_for_grep seized "$out.out" 10; then
		cat "$out.err"
		grep -q 'Operation not permitted' "$out.err" && skip "ptrace is not permitted here (kernel.yama.ptrace_scope)"
		return 1
	fi
}

# wait_hold: hold_exit's tracer has ended, and said how long it held.
wait_hold() {
	local s=0
	wait "$HOLD_PID" || s=$?
	HOLD_PID=
	cat "$BATS_TEST_TMPDIR/hold.err"
	[ "$s" -eq 0 ]
}
