#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Emulated bottleneck for the Swift tests (tests/swift/swift_test) and the
# benchmark (bench/swift/run, which sources this file):
#
#   sender ns (swift-snd)     router ns (swift-rtr)          receiver ns
#   s-eth0 10.77.1.1 ---- r-eth0 10.77.1.2                   (swift-rcv)
#     fq (pacing)              r-eth1 10.77.2.2 ---- d-eth0 10.77.2.1
#                              netem delay 1ms               stock delayed
#                              + tbf 50mbit, 1 MB buffer     ACKs
#
# netem with a delay orphans the skb (TCP small queues and fq pacing no
# longer see it), so the shaping sits on the router and the sender keeps a
# plain fq on its egress veth. veth is IFF_NO_QUEUE: every qdisc is added
# explicitly. The default is the stock configuration: a receiver with
# delayed ACKs and fq on the sender. QUICKACK=1 makes the receiver ACK every
# segment (route quickack 1); SND_QDISC=none leaves the sender's veth
# without a qdisc, so that pacing is TCP's own (SK_PACING_NEEDED).
#
# Usage: topo.sh COMMAND [ARGS]
#   up                       build the topology (removes a stale one first)
#   down                     stop what runs in the namespaces, remove them
#   aqm fifo|red             bottleneck buffer: tail-drop fifo (default) or
#                            RED marking ECN (DCTCP); red drops non-ECT
#   drops                    packets dropped so far at the bottleneck
#   delay DELAY              change the netem delay (e.g. 3ms)
#   ping COUNT INTERVAL OUT  COUNT idle pings sender -> receiver to OUT
#   run CC FLOWS SECS OUT    iperf3 -C CC -P FLOWS -t SECS to port PORT (5201)
#                            (JSON to OUT.json)
#                            with pings every PING_INTERVAL s (OUT.ping) and
#                            the bottleneck drops of the run (OUT.drops)
#   incast CC FLOWS BYTES OUT
#                            FLOWS connections that all send BYTES at once
#                            (swift_incast): OUT.txt, OUT.drops
#
# Exit status is non-zero on any failure, with a message on stderr. iperf3
# missing is a failure, never a skip.

NS_SND=swift-snd
NS_RTR=swift-rtr
NS_RCV=swift-rcv
SND_ADDR=10.77.1.1
RCV_ADDR=10.77.2.1
# Bottleneck, as in the issue: 50 Mbit/s, 32 KB bucket, 1 MB buffer, 1 ms.
RATE=${RATE:-50mbit}
BURST=${BURST:-32kb}
LIMIT=${LIMIT:-1000000}
DELAY=${DELAY:-1ms}
QUICKACK=${QUICKACK:-0}
SND_QDISC=${SND_QDISC:-fq}
PORT=${PORT:-5201}
PING_INTERVAL=${PING_INTERVAL:-0.02}
# Pings start this long after the flows so that the start-up is left out.
PING_SKIP=${PING_SKIP:-2}
# The incast helper (swift_incast.c), installed beside this script.
INCAST=${SWIFT_INCAST:-$(dirname "${BASH_SOURCE[0]}")/swift_incast}

topo_die() {
	echo "topo.sh: $*" >&2
	exit 1
}

topo_need() {
	local c

	for c in ip tc ss ping iperf3; do
		command -v "$c" >/dev/null 2>&1 ||
			topo_die "$c not found: install it (iperf3, iproute2, iputils-ping)"
	done
}

nsx() {	# NS CMD...
	local ns=$1

	shift
	ip netns exec "$ns" "$@"
}

topo_down() {
	local ns pid

	for ns in $NS_SND $NS_RTR $NS_RCV; do
		[ -e "/run/netns/$ns" ] || continue
		# Only processes of the namespaces this script created.
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

topo_up() {
	topo_need
	topo_down
	ip netns add $NS_SND || topo_die "ip netns add failed"
	# One chain: any step failing undoes the lot.
	# shellcheck disable=SC2015
	ip netns add $NS_RTR && ip netns add $NS_RCV &&
	ip link add s-eth0 netns $NS_SND type veth peer name r-eth0 netns $NS_RTR &&
	ip link add r-eth1 netns $NS_RTR type veth peer name d-eth0 netns $NS_RCV &&
	nsx $NS_SND ip addr add $SND_ADDR/24 dev s-eth0 &&
	nsx $NS_RTR ip addr add 10.77.1.2/24 dev r-eth0 &&
	nsx $NS_RTR ip addr add 10.77.2.2/24 dev r-eth1 &&
	nsx $NS_RCV ip addr add $RCV_ADDR/24 dev d-eth0 &&
	nsx $NS_SND ip link set lo up && nsx $NS_RTR ip link set lo up &&
	nsx $NS_RCV ip link set lo up &&
	nsx $NS_SND ip link set s-eth0 up && nsx $NS_RTR ip link set r-eth0 up &&
	nsx $NS_RTR ip link set r-eth1 up && nsx $NS_RCV ip link set d-eth0 up &&
	nsx $NS_RTR sysctl -qw net.ipv4.ip_forward=1 &&
	nsx $NS_SND ip route add default via 10.77.1.2 &&
	nsx $NS_RCV ip route add default via 10.77.2.2 quickack "$QUICKACK" &&
	case $SND_QDISC in
	fq) nsx $NS_SND tc qdisc add dev s-eth0 root fq ;;
	none) true ;;
	*) false ;;
	esac &&
	nsx $NS_RTR tc qdisc add dev r-eth1 root handle 1: \
		netem delay "$DELAY" limit 10000 &&
	nsx $NS_RTR tc qdisc add dev r-eth1 parent 1:1 handle 10: \
		tbf rate "$RATE" burst "$BURST" limit "$LIMIT" ||
		{ topo_down; topo_die "topology set-up failed"; }
	# The path must work before anything is measured on it.
	nsx $NS_SND ping -n -q -c 1 -W 5 $RCV_ADDR >/dev/null ||
		{ topo_down; topo_die "no connectivity sender -> receiver"; }
}

# Replace the tbf's fifo with RED marking CE above ~20 packets of queue
# (DCTCP's K), all of them above 30 KB; ECN needs tcp_ecn on both ends.
topo_aqm() {
	case $1 in
	red)
		nsx $NS_RTR tc qdisc replace dev r-eth1 parent 10:1 handle 20: \
			red limit "$LIMIT" min 20000 max 30000 avpkt 1500 \
			burst 14 probability 1.0 bandwidth "$RATE" ecn ||
			topo_die "cannot add red"
		nsx $NS_SND sysctl -qw net.ipv4.tcp_ecn=1 &&
		nsx $NS_RCV sysctl -qw net.ipv4.tcp_ecn=1
		;;
	fifo)
		# Another handle than red's: replace then grafts a new qdisc
		# (a qdisc cannot change its kind in place).
		nsx $NS_RTR tc qdisc replace dev r-eth1 parent 10:1 handle 30: \
			bfifo limit "$LIMIT" || topo_die "cannot add bfifo"
		nsx $NS_SND sysctl -qw net.ipv4.tcp_ecn=2 &&
		nsx $NS_RCV sysctl -qw net.ipv4.tcp_ecn=2
		;;
	*)
		topo_die "aqm: fifo or red"
		;;
	esac
}

topo_delay() {
	nsx $NS_RTR tc qdisc change dev r-eth1 root handle 1: \
		netem delay "$1" limit 10000 || topo_die "cannot change delay"
}

# Drops of the root qdisc of the bottleneck: netem counts its own and those
# of its child (tbf and the fifo or red below it).
topo_drops() {
	nsx $NS_RTR tc -s qdisc show dev r-eth1 |
		awk '$1 == "qdisc" { root = ($0 ~ / root /) }
		     root && $1 == "Sent" {
			for (i = 1; i < NF; i++)
				if ($i == "(dropped") { sub(",", "", $(i + 1)); print $(i + 1); found = 1 }
		     }
		     END { if (!found) exit 1 }'
}

# RTT probes. ECT(0) (-Q 2) so that RED marks them as it marks DCTCP's
# packets instead of dropping them; a fifo ignores the bits.
PING_OPTS="-n -Q 2"

topo_ping() {	# COUNT INTERVAL OUT
	# shellcheck disable=SC2086 # PING_OPTS is a list
	nsx $NS_SND ping $PING_OPTS -c "$1" -i "$2" -W 1 $RCV_ADDR >"$3" 2>&1
}

# Start a one-off iperf3 server in the receiver and wait until it listens.
topo_server() {	# OUT
	nsx $NS_RCV iperf3 -s -1 -p $PORT >"$1.srv" 2>&1 &
	srv_pid=$!
	for _ in $(seq 100); do
		nsx $NS_RCV ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q . &&
			return 0
		kill -0 $srv_pid 2>/dev/null || break
		sleep 0.1
	done
	kill $srv_pid 2>/dev/null
	topo_die "iperf3 server did not start: $(cat "$1.srv")"
}

topo_run() {	# CC FLOWS SECS OUT
	local cc=$1 flows=$2 secs=$3 out=$4
	local d0 d1 rc npings ping_pid

	topo_need
	d0=$(topo_drops) || topo_die "cannot read qdisc drops"
	topo_server "$out"
	npings=$(awk -v s="$secs" -v k="$PING_SKIP" -v i="$PING_INTERVAL" \
		'BEGIN { n = int((s - k - 1) / i); print (n > 10 ? n : 10) }')
	( sleep "$PING_SKIP"; topo_ping "$npings" "$PING_INTERVAL" "$out.ping" ) &
	ping_pid=$!
	nsx $NS_SND iperf3 -c $RCV_ADDR -p $PORT -C "$cc" -P "$flows" \
		-t "$secs" -J >"$out.json" 2>"$out.err"
	rc=$?
	wait $ping_pid
	wait $srv_pid 2>/dev/null
	d1=$(topo_drops) || topo_die "cannot read qdisc drops"
	echo $((d1 - d0)) >"$out.drops"
	[ $rc -eq 0 ] || topo_die "iperf3 -C $cc failed ($rc): $(cat "$out.err") $(grep '"error"' "$out.json")"
}

topo_incast() {	# CC FLOWS BYTES OUT
	local cc=$1 flows=$2 bytes=$3 out=$4
	local d0 d1 rc

	[ -x "$INCAST" ] || topo_die "no incast helper at $INCAST"
	d0=$(topo_drops) || topo_die "cannot read qdisc drops"
	"$INCAST" -c "$cc" -n "$flows" -b "$bytes" -s $NS_SND -r $NS_RCV \
		-a $RCV_ADDR -t 60 >"$out.txt" 2>"$out.err"
	rc=$?
	d1=$(topo_drops) || topo_die "cannot read qdisc drops"
	echo $((d1 - d0)) >"$out.drops"
	[ $rc -eq 0 ] || topo_die "incast -C $cc failed ($rc): $(cat "$out.err") $(tail -n 1 "$out.txt")"
}

topo_usage() {
	sed -n '/^# Usage/,/^# Exit/p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

topo_main() {
	local cmd=${1:-}

	[ $# -gt 0 ] && shift
	case $cmd:$# in
	up:0) topo_up ;;
	down:0) topo_down ;;
	aqm:1) topo_aqm "$@" ;;
	drops:0) topo_drops ;;
	delay:1) topo_delay "$@" ;;
	ping:3) topo_ping "$@" ;;
	run:4) topo_run "$@" ;;
	incast:4) topo_incast "$@" ;;
	*) topo_usage ;;
	esac
}

# Run as a command; sourced (bench/swift/run), only define the functions.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	topo_main "$@"
fi
