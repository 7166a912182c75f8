// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Swift: delay-based congestion control for data centers.
 *
 * Gautam Kumar, Nandita Dukkipati, Keon Jang, Hassan M. G. Wassel, Xian Wu,
 * Behnam Montazeri, Yaogong Wang, Kevin Springborn, Christopher Alfeld,
 * Michael Ryan, David Wetherall and Amin Vahdat:
 * "Swift: Delay is Simple and Effective for Congestion Control in the
 * Datacenter", Proc. ACM SIGCOMM 2020.
 *
 * Swift keeps the measured delay close to a target delay with AIMD on a
 * congestion window that may be fractional:
 *
 *   target = path + base_target + fs(cwnd)
 *   fs(cwnd) = clamp(alpha / sqrt(cwnd) - alpha / sqrt(fs_max_cwnd),
 *                    0, fs_range)
 *   alpha = fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd))
 *
 * "path" is the propagation and fixed host delay of the path: the stack's
 * windowed minimum RTT of the connection (tcp_min_rtt()), or the smallest
 * one that any Swift connection to the same destination in the same netns
 * has seen within that window if it is smaller.  The paper scales the
 * target by the hop count for the same reason; measuring the path makes
 * the defaults work on any path, and sharing the minimum per destination
 * guards against the latecomer problem of delay-based schemes (a
 * connection that starts while others keep a queue would count that queue
 * as propagation delay, raise its target by it and take their share).
 * base_target is then the queueing delay Swift allows on top of the path.
 *
 * The flow-scaling term fs() raises the target for flows with a small
 * window, so that many flows sharing a bottleneck converge to a fair share
 * instead of the last flows starving.
 *
 * On every ACK that carries an RTT sample ("delay", in us):
 *
 *   delay <  target: additive increase of ai packets per RTT:
 *                    cwnd += ai * acked / cwnd   if cwnd >= 1
 *                    cwnd += ai * acked          if cwnd <  1
 *   standing >= target: multiplicative decrease, at most once per smoothed
 *                    RTT and per round trip:
 *                    cwnd *= max(1 - beta * (standing - target) / standing,
 *                                1 - max_mdf)
 *
 * "standing" is the smallest delay over the last round trip and this one:
 * a queue that stays shows in every sample, host jitter only in some.
 *
 * Loss, as in the paper: entering fast recovery or CWR, and a retransmit
 * timeout, decrease cwnd by max_mdf, at most once per RTT; only
 * SWIFT_RETX_RESET consecutive timeouts drop it to the minimum.  In the
 * first round of fast recovery the window keeps packet conservation (one
 * packet out for each packet delivered, as BBR does).  An undo of a
 * spurious loss restores the cut that loss made and nothing more.  Swift
 * has no slow start: a connection starts from the initial window set by the
 * stack.
 *
 * The window is kept in units of 1/1024 packet, between about 0.001 packet
 * and min(snd_cwnd_clamp, 2^20) packets.  The stack only knows whole
 * packets; the fraction is realised with pacing, which this module owns
 * (.cong_control):
 *
 *   cwnd <  2: pacing_rate = cwnd * mss / rtt;  tp->snd_cwnd = 2
 *   cwnd >= 2: pacing_rate = 5 / 4 * cwnd * mss / rtt (pacing smooths
 *              bursts, cwnd limits);  tp->snd_cwnd = cwnd
 *
 * with rtt the smaller of srtt and the last delay, capped by
 * sk->sk_max_pacing_rate and at least one packet per second.  Below two
 * packets the stack sends two segments per departure and waits twice as
 * long: a receiver ACKs a second full segment at once, where it holds the
 * ACK of a lone one for its delayed-ACK timeout (tens of ms, far above any
 * target).  ACKs that may still have been held (one segment acked while it
 * was alone in flight) do not decrease the window.  Pacing is requested
 * from the stack (SK_PACING_NEEDED) unless sch_fq already paces the socket.
 *
 * The delay is the RTT the stack measures per ACK (rs->rtt_us), including
 * host delay; Swift proper subtracts remote host delay using NIC
 * timestamps.  See Documentation/networking/tcp-swift.rst.
 *
 * Only for data centers: it yields to any loss-based flow sharing its
 * bottleneck.
 */

#include <linux/inet_diag.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seqlock.h>
#include <net/tcp.h>

#define SWIFT_SHIFT		10			/* cwnd fixed point */
#define SWIFT_ONE		1024U			/* 1 << SWIFT_SHIFT */
#define SWIFT_MIN_CWND_FP	1U			/* ~0.001 packet */
#define SWIFT_MAX_CWND		1048576U		/* packets (2^20) */
#define SWIFT_MILLI		1000U			/* parameter unit */
#define SWIFT_MAX_ACKED		SWIFT_MAX_CWND
#define SWIFT_BURST		2U			/* packets sent together */
#define SWIFT_RETX_RESET	5	/* timeouts in a row to the minimum */
#define SWIFT_UNDO_MAX		(SWIFT_MAX_CWND << SWIFT_SHIFT)

#define SWIFT_GAIN_SHIFT	8
#define SWIFT_GAIN_UNIT		256U	/* 1 << SWIFT_GAIN_SHIFT */
#define SWIFT_PACING_GAIN	(SWIFT_GAIN_UNIT * 5 / 4)	/* 1.25 */

/* A module parameter and its valid range. */
struct swift_param {
	u32 val;
	u32 min;
	u32 max;
};

/* Base target delay (us). */
static struct swift_param swift_base_target_us = { 100, 1, 1000000 };
/* Additive increase per RTT (1/1000 packet). */
static struct swift_param swift_ai = { 1000, 1, 100000 };
/* Multiplicative decrease constant (1/1000). */
static struct swift_param swift_beta = { 800, 1, 1000 };
/* Largest decrease of one reaction (1/1000); below 1: never to zero. */
static struct swift_param swift_max_mdf = { 500, 1, 999 };
/* Flow-scaling range (us); 0 disables flow scaling. */
static struct swift_param swift_fs_range_us = { 400, 0, 1000000 };
/* Window (1/1000 packet) at and below which fs() is fs_range. */
static struct swift_param swift_fs_min_cwnd = { 100, 1, 1000000 };
/* Window (1/1000 packet) at and above which fs() is 0. */
static struct swift_param swift_fs_max_cwnd = { 100000, 1, 1000000000 };

/*
 * 1 / sqrt() of fs_min_cwnd and fs_max_cwnd, precomputed when either is
 * set: inv_min in the high half, inv_max in the low half, so that a reader
 * sees a consistent pair.
 */
static u64 swift_fs_inv;

static u64 swift_milli_to_fp(u32 milli)
{
	return max_t(u64, div_u64((u64)milli << SWIFT_SHIFT, SWIFT_MILLI), 1);
}

/* 1 / sqrt(x_fp / 1024 packets), in units of 1/65536.  For x_fp >= 1 the
 * root is at least 1024, so the result is at most 2^21.
 */
static u32 swift_inv_sqrt(u64 x_fp)
{
	return (1U << 31) / int_sqrt64(x_fp << 20);
}

static void swift_fs_update(void)
{
	u32 inv_min = swift_inv_sqrt(swift_milli_to_fp(swift_fs_min_cwnd.val));
	u32 inv_max = swift_inv_sqrt(swift_milli_to_fp(swift_fs_max_cwnd.val));

	WRITE_ONCE(swift_fs_inv, (u64)inv_min << 32 | inv_max);
}

/*
 * Values out of range are rejected, and so is an fs_min_cwnd that is not
 * below fs_max_cwnd (set fs_max_cwnd first to raise both).  A set takes
 * effect at the next ACK of every socket.  The module parameter lock
 * (kernel_param_lock()) serialises the setters.
 */
static int swift_param_set(const char *val, const struct kernel_param *kp)
{
	struct swift_param *p = kp->arg;
	u32 v;

	if (kstrtou32(val, 0, &v) || v < p->min || v > p->max)
		return -EINVAL;
	if ((p == &swift_fs_min_cwnd && v >= swift_fs_max_cwnd.val) ||
	    (p == &swift_fs_max_cwnd && v <= swift_fs_min_cwnd.val))
		return -EINVAL;
	WRITE_ONCE(p->val, v);
	if (p == &swift_fs_min_cwnd || p == &swift_fs_max_cwnd)
		swift_fs_update();
	return 0;
}

static int swift_param_get(char *buffer, const struct kernel_param *kp)
{
	const struct swift_param *p = kp->arg;

	return scnprintf(buffer, PAGE_SIZE, "%u\n", READ_ONCE(p->val));
}

static const struct kernel_param_ops swift_param_ops = {
	.set = swift_param_set,
	.get = swift_param_get,
};

module_param_cb(base_target_us, &swift_param_ops, &swift_base_target_us, 0644);
MODULE_PARM_DESC(base_target_us,
		 "target queueing delay above the path's in us (1..1000000)");
module_param_cb(ai, &swift_param_ops, &swift_ai, 0644);
MODULE_PARM_DESC(ai, "additive increase per RTT in 1/1000 packet (1..100000)");
module_param_cb(beta, &swift_param_ops, &swift_beta, 0644);
MODULE_PARM_DESC(beta, "multiplicative decrease constant in 1/1000 (1..1000)");
module_param_cb(max_mdf, &swift_param_ops, &swift_max_mdf, 0644);
MODULE_PARM_DESC(max_mdf, "max multiplicative decrease in 1/1000 (1..999)");
module_param_cb(fs_range_us, &swift_param_ops, &swift_fs_range_us, 0644);
MODULE_PARM_DESC(fs_range_us, "flow-scaling range in us, 0: off (0..1000000)");
module_param_cb(fs_min_cwnd, &swift_param_ops, &swift_fs_min_cwnd, 0644);
MODULE_PARM_DESC(fs_min_cwnd,
		 "flow-scaling min cwnd, 1/1000 pkt (1..1000000, < fs_max_cwnd)");
module_param_cb(fs_max_cwnd, &swift_param_ops, &swift_fs_max_cwnd, 0644);
MODULE_PARM_DESC(fs_max_cwnd,
		 "flow-scaling max cwnd, 1/1000 pkt (1..10^9, > fs_min_cwnd)");

static u32 swift_read(const struct swift_param *p)
{
	return READ_ONCE(p->val);
}

struct swift {
	u64	last_decrease_us;	/* tp->tcp_mstamp of the last decrease */
	u32	cwnd_fp;		/* window in 1/1024 packet */
	u32	undo_fp;		/* cut of this loss episode, x 1/1024 */
	u32	prior_cwnd_fp;		/* cwnd_fp before the loss episode */
	u32	ai_rem;			/* remainder of the additive increase */
	u32	target_us;		/* target delay of the last sample */
	u32	next_rtt_delivered;	/* end of the conservation round */
	u32	round_end;		/* tp->delivered at the end of a round */
	u32	decrease_delivered;	/* tp->delivered at the last decrease */
	u32	round_min_us;		/* smallest delay of this round */
	u32	prev_min_us;		/* smallest delay of the last round */
	u32	last_rtt_us;		/* last delay not held; 0: none yet */
	u32	conservation:1,		/* first round of fast recovery */
		unused:31;
};

static u32 swift_rtt_us(const struct tcp_sock *tp)
{
	if (tp->srtt_us)
		return max(tp->srtt_us >> 3, 1U);
	return USEC_PER_MSEC;	/* no sample yet: nominal 1 ms, as BBR */
}

static u32 swift_max_cwnd_fp(const struct tcp_sock *tp)
{
	return clamp(tp->snd_cwnd_clamp, 1U, SWIFT_MAX_CWND) << SWIFT_SHIFT;
}

/* Flow scaling: fs_range at fs_min_cwnd and below, 0 at fs_max_cwnd and
 * above, linear in 1/sqrt(cwnd) in between.
 */
static u32 swift_fs_delay(u32 cwnd_fp)
{
	u32 range = swift_read(&swift_fs_range_us);
	u64 inv = READ_ONCE(swift_fs_inv);
	u32 inv_min = inv >> 32, inv_max = (u32)inv;
	u32 inv_cwnd;

	if (!range || inv_min <= inv_max)
		return 0;
	inv_cwnd = swift_inv_sqrt(cwnd_fp);
	if (inv_cwnd <= inv_max)
		return 0;
	if (inv_cwnd >= inv_min)
		return range;
	return div_u64((u64)range * (inv_cwnd - inv_max), inv_min - inv_max);
}

/*
 * The path's delay, shared by the Swift connections to one destination of a
 * netns: the smallest tcp_min_rtt() any of them reported within the stack's
 * min-RTT window (net.ipv4.tcp_min_rtt_wlen).  A hash table of fixed size;
 * a destination that collides with another simply finds no entry.  Entries
 * are written only when a connection sees a smaller minimum, when the entry
 * is older than the window, or (at most once a second) to keep it fresh;
 * readers retry on a concurrent write.
 */
#define SWIFT_PATH_BITS		8

struct swift_path {
	seqlock_t	lock;
	u64		net_cookie;
	struct in6_addr	daddr;		/* IPv4: v4-mapped */
	u32		min_rtt_us;	/* ~0U: empty */
	u64		stamp;		/* jiffies_64 of the minimum's sample */
} ____cacheline_aligned_in_smp;

static struct swift_path swift_paths[1 << SWIFT_PATH_BITS];

static void swift_daddr(const struct sock *sk, struct in6_addr *daddr)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		*daddr = sk->sk_v6_daddr;
		return;
	}
#endif
	ipv6_addr_set_v4mapped(sk->sk_daddr, daddr);
}

static struct swift_path *swift_path_of(u64 cookie, const struct in6_addr *a)
{
	u32 h = jhash2((const u32 *)a, 4, (u32)cookie ^ (u32)(cookie >> 32));

	return &swift_paths[hash_32(h, SWIFT_PATH_BITS)];
}

static bool swift_path_fresh(const struct swift_path *p, u64 now, u64 wlen)
{
	return p->min_rtt_us != ~0U && time_before64(now, p->stamp + wlen);
}

/*
 * The path delay for sk: the smaller of its own minimum RTT and the shared
 * one of its destination, which its own minimum updates.  An entry fresh
 * for another destination is left alone.  Entries carry the time of the
 * minimum's sample, so that they expire with the stack's own minimum.
 * With net.ipv4.tcp_min_rtt_wlen = 0 the stack keeps no minimum (each
 * sample replaces it): no path term then, the target is base_target + fs.
 */
static u32 swift_path_delay(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 own = tcp_min_rtt(tp), shared, age;
	u64 cookie = sock_net(sk)->net_cookie;
	u64 wlen, stamp, now = get_jiffies_64();
	struct in6_addr daddr;
	struct swift_path *p;
	bool mine, fresh, recent;
	unsigned int seq;

	wlen = (u64)READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_min_rtt_wlen) * HZ;
	if (own == ~0U || !wlen)
		return 0;
	age = tcp_jiffies32 - tp->rtt_min.s[0].t;
	stamp = now - min_t(u64, age, wlen);

	swift_daddr(sk, &daddr);
	p = swift_path_of(cookie, &daddr);
	do {
		seq = read_seqbegin(&p->lock);
		mine = p->net_cookie == cookie &&
		       ipv6_addr_equal(&p->daddr, &daddr);
		fresh = swift_path_fresh(p, now, wlen);
		recent = time_before64(stamp, p->stamp + HZ);
		shared = p->min_rtt_us;
	} while (read_seqretry(&p->lock, seq));

	if (fresh && !mine)
		return own;
	if (fresh && (own > shared || (own == shared && recent)))
		return shared;

	/* ACKs arrive in softirq and, from the socket backlog, in process
	 * context: keep softirqs off while holding the lock.
	 */
	write_seqlock_bh(&p->lock);
	mine = p->net_cookie == cookie && ipv6_addr_equal(&p->daddr, &daddr);
	fresh = swift_path_fresh(p, now, wlen);
	if (!fresh || (mine && own <= p->min_rtt_us)) {
		p->net_cookie = cookie;
		p->daddr = daddr;
		p->min_rtt_us = own;
		p->stamp = stamp;
		mine = true;
	}
	shared = mine ? p->min_rtt_us : own;
	write_sequnlock_bh(&p->lock);
	return min(own, shared);
}

static u32 swift_target_delay(struct sock *sk, u32 cwnd_fp)
{
	return swift_path_delay(sk) + swift_read(&swift_base_target_us) +
	       swift_fs_delay(cwnd_fp);
}

/*
 * At most one decrease per smoothed RTT.  A delay-based decrease waits in
 * addition for an ACK of a packet sent after the last decrease: while a
 * queue builds, srtt lags behind the RTT, and the samples still show the
 * queue that the last decrease has not drained yet.
 */
static bool swift_can_decrease(const struct tcp_sock *tp,
			       const struct swift *ca)
{
	return tp->tcp_mstamp - ca->last_decrease_us >= swift_rtt_us(tp);
}

/* cwnd *= (1 - md / 1000).  Only an actual decrease starts a new RTT in
 * which no further decrease is allowed.
 */
static void swift_decrease(struct sock *sk, u32 md)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 cwnd = ca->cwnd_fp;

	cwnd -= div_u64((u64)cwnd * md, SWIFT_MILLI);
	cwnd = max(cwnd, SWIFT_MIN_CWND_FP);
	if (cwnd < ca->cwnd_fp) {
		ca->last_decrease_us = tp->tcp_mstamp;
		ca->decrease_delivered = tp->delivered;
		ca->ai_rem = 0;
		WRITE_ONCE(ca->cwnd_fp, cwnd);
	}
}

/* ai packets per RTT: ai / cwnd per ACKed packet, or ai per ACKed packet
 * below one packet (fewer than one ACK per RTT arrives then).
 */
static void swift_increase(struct sock *sk, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 ai = swift_read(&swift_ai);
	u32 cwnd;
	u64 inc;

	/* (u64)ai * acked << 20 stays below 2^57 */
	acked = min(acked, SWIFT_MAX_ACKED);
	if (ca->cwnd_fp < SWIFT_ONE) {
		inc = div_u64((u64)ai * acked << SWIFT_SHIFT, SWIFT_MILLI);
	} else {
		inc = div_u64((u64)ai * acked << (2 * SWIFT_SHIFT), SWIFT_MILLI);
		inc = div_u64_rem(inc + ca->ai_rem, ca->cwnd_fp, &ca->ai_rem);
	}
	cwnd = min_t(u64, ca->cwnd_fp + inc, swift_max_cwnd_fp(tp));
	WRITE_ONCE(ca->cwnd_fp, cwnd);
}

/*
 * The RTT that turns the window into a rate: srtt, or the last delay if it
 * is smaller.  Once a queue drains, srtt lags behind for many samples, and
 * a window below one packet yields few samples: the flow would go on
 * pacing at the queue's RTT, far below its share.
 */
static u32 swift_rate_rtt_us(const struct sock *sk)
{
	const struct swift *ca = inet_csk_ca(sk);
	u32 srtt = swift_rtt_us(tcp_sk(sk));
	u32 last = READ_ONCE(ca->last_rtt_us);

	return last ? min(srtt, last) : srtt;
}

/* Bytes per second for cwnd_fp over the RTT with a gain in 1/256.  The
 * product is below 2^55 (mss < 2^16, cwnd_fp <= 2^30, gain < 2^9).
 */
static u64 swift_rate(const struct sock *sk, u32 cwnd_fp, u32 gain)
{
	u64 rate = (u64)READ_ONCE(tcp_sk(sk)->mss_cache) * cwnd_fp * gain;

	return mul_u64_u64_div_u64(rate, USEC_PER_SEC,
				   (u64)swift_rate_rtt_us(sk) <<
				   (SWIFT_SHIFT + SWIFT_GAIN_SHIFT));
}

/* Below SWIFT_BURST packets, pacing alone limits the flow. */
static u32 swift_pacing_gain(u32 cwnd_fp)
{
	return cwnd_fp < SWIFT_BURST << SWIFT_SHIFT ? SWIFT_GAIN_UNIT :
						      SWIFT_PACING_GAIN;
}

/*
 * The pacing rate, capped by SO_MAX_PACING_RATE, and at least one packet
 * per second: a slower rate would put the next departure beyond sch_fq's
 * horizon (10 s by default, for two packets), which drops it.
 */
static void swift_set_pacing_rate(struct sock *sk)
{
	const struct swift *ca = inet_csk_ca(sk);
	u64 rate = swift_rate(sk, ca->cwnd_fp, swift_pacing_gain(ca->cwnd_fp));

	rate = max_t(u64, rate, max(tcp_sk(sk)->mss_cache, 1U));
	WRITE_ONCE(sk->sk_pacing_rate,
		   min_t(u64, rate, READ_ONCE(sk->sk_max_pacing_rate)));
}

/*
 * Hand the window to the stack: whole packets in tp->snd_cwnd, at least
 * SWIFT_BURST so that the receiver ACKs at once (see the top of the file);
 * below that the rate is the pacing rate's.  In the first round of fast
 * recovery, packet conservation: at least as many packets may leave as
 * this ACK delivered.
 */
static void swift_apply(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 cwnd = max(ca->cwnd_fp >> SWIFT_SHIFT, SWIFT_BURST);

	if (ca->conservation && rs) {
		/* The round ends with the ACK of a packet sent after
		 * recovery started, as in BBR.
		 */
		if (inet_csk(sk)->icsk_ca_state != TCP_CA_Recovery ||
		    !before(rs->prior_delivered, ca->next_rtt_delivered))
			ca->conservation = 0;
		else
			cwnd = max(cwnd, tcp_packets_in_flight(tp) +
					 max_t(int, rs->acked_sacked, 1));
	}
	tcp_snd_cwnd_set(tp, min(cwnd, max(tp->snd_cwnd_clamp, 1U)));
	swift_set_pacing_rate(sk);
}

static void swift_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 cwnd = clamp(tcp_snd_cwnd(tp), 1U, SWIFT_MAX_CWND) << SWIFT_SHIFT;

	cwnd = min(cwnd, swift_max_cwnd_fp(tp));
	ca->last_decrease_us = 0;
	WRITE_ONCE(ca->cwnd_fp, cwnd);
	ca->undo_fp = SWIFT_ONE;
	ca->prior_cwnd_fp = cwnd;
	ca->ai_rem = 0;
	WRITE_ONCE(ca->target_us, 0);
	ca->next_rtt_delivered = 0;
	ca->round_end = tp->delivered;
	ca->decrease_delivered = tp->delivered;
	ca->round_min_us = ~0U;
	ca->prev_min_us = ~0U;
	ca->last_rtt_us = 0;
	ca->conservation = 0;
	swift_set_pacing_rate(sk);
	/* Pace in TCP unless sch_fq does it (SK_PACING_FQ). */
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

/*
 * May this ACK have been held by the receiver?  The stack flags lone runts
 * (rs->is_ack_delayed); a lone full-sized segment is held as well.
 */
static bool swift_ack_maybe_delayed(const struct rate_sample *rs)
{
	return rs->is_ack_delayed ||
	       (rs->acked_sacked == 1 && rs->prior_in_flight <= 1);
}

/*
 * The standing delay: the smallest delay over the last round trip and this
 * one so far (Copa's "standing RTT").  A queue that stays shows in every
 * sample; host and scheduling jitter, ACK compression and a held ACK only
 * in some.  ACKs that may have been held are left out.
 */
static u32 swift_standing_delay(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);

	if (!before(rs->prior_delivered, ca->round_end)) {
		ca->round_end = tp->delivered;
		ca->prev_min_us = ca->round_min_us;
		ca->round_min_us = ~0U;
	}
	if (!swift_ack_maybe_delayed(rs)) {
		ca->round_min_us = min_t(u32, ca->round_min_us, rs->rtt_us);
		WRITE_ONCE(ca->last_rtt_us, max_t(u32, rs->rtt_us, 1));
	}
	return min(ca->round_min_us, ca->prev_min_us);
}

static void swift_cong_control(struct sock *sk, u32 ack, int flag,
			       const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 delay, standing, target, md;

	/* The ACK of a SYN may arrive before swift_init(). */
	if (unlikely(!inet_csk(sk)->icsk_ca_initialized))
		return;

	if (rs->rtt_us >= 0) {
		delay = rs->rtt_us;
		standing = swift_standing_delay(sk, rs);
		target = swift_target_delay(sk, ca->cwnd_fp);
		WRITE_ONCE(ca->target_us, target);

		if (delay < target) {
			/* Grow only a window in use; below SWIFT_BURST
			 * packets the flow is limited by pacing, not by cwnd.
			 */
			if (rs->acked_sacked &&
			    (ca->cwnd_fp < SWIFT_BURST << SWIFT_SHIFT ||
			     tcp_is_cwnd_limited(sk)))
				swift_increase(sk, rs->acked_sacked);
		} else if (standing != ~0U && standing >= target &&
			   swift_can_decrease(tp, ca) &&
			   !before(rs->prior_delivered, ca->decrease_delivered)) {
			/* standing >= target >= 1 */
			md = div_u64((u64)swift_read(&swift_beta) *
				     (standing - target), standing);
			md = min(md, swift_read(&swift_max_mdf));
			swift_decrease(sk, md);
		}
	}
	swift_apply(sk, rs);
}

/* A loss cut from before to ca->cwnd_fp: remember it for undo. */
static void swift_note_cut(struct swift *ca, u32 before)
{
	u64 undo;

	if (ca->cwnd_fp >= before)
		return;
	undo = div_u64((u64)ca->undo_fp * before, ca->cwnd_fp);
	ca->undo_fp = min_t(u64, undo, SWIFT_UNDO_MAX);
}

/*
 * A timeout while the receiver's window is zero (the stack probes it with
 * the retransmit timer, without counting icsk_retransmits) says nothing
 * about congestion: no cut.
 */
static bool swift_receiver_limited(const struct tcp_sock *tp)
{
	return !tp->snd_wnd;
}

/*
 * The start of a loss episode (fast recovery, RTO, also CWR, which is never
 * undone): decrease by max_mdf, at most once per RTT.  The cut is saved for
 * undo only when there is one.
 */
static u32 swift_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 before = ca->cwnd_fp;

	if (unlikely(!inet_csk(sk)->icsk_ca_initialized))
		return max(tcp_snd_cwnd(tp) >> 1U, 2U);

	ca->undo_fp = SWIFT_ONE;
	ca->prior_cwnd_fp = before;
	if (swift_can_decrease(tp, ca) && !swift_receiver_limited(tp))
		swift_decrease(sk, swift_read(&swift_max_mdf));
	swift_note_cut(ca, before);
	return max(ca->cwnd_fp >> SWIFT_SHIFT, 2U);
}

/*
 * Fast recovery starts a round of packet conservation.  The stack enters
 * TCP_CA_Loss on every retransmit timeout (calling .ssthresh only on the
 * first of a loss episode), with icsk_retransmits counting the timeouts in
 * a row before this one: each cuts by max_mdf, at most once per RTT (the
 * first one's cut is usually swift_ssthresh()'s), and from the
 * SWIFT_RETX_RESET-th on the window drops to its minimum.
 */
static void swift_set_state(struct sock *sk, u8 new_state)
{
	struct inet_connection_sock *icsk = inet_csk(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 before = ca->cwnd_fp;

	if (unlikely(!icsk->icsk_ca_initialized))
		return;
	if (new_state == TCP_CA_Recovery &&
	    icsk->icsk_ca_state != TCP_CA_Recovery) {
		ca->conservation = 1;
		ca->next_rtt_delivered = tp->delivered;
	} else if (new_state != TCP_CA_Recovery) {
		ca->conservation = 0;
	}
	if (new_state != TCP_CA_Loss)
		return;

	/*
	 * Not a timeout: tcp_non_congestion_loss_retransmit() (a smaller
	 * path MTU, a failed TFO SYN-data) keeps the window and clears the
	 * undo state first; nor a zero-window probe.
	 */
	if ((!tp->undo_marker && !tp->prior_ssthresh) ||
	    swift_receiver_limited(tp))
		return;
	if (icsk->icsk_retransmits + 1 >= SWIFT_RETX_RESET) {
		WRITE_ONCE(ca->cwnd_fp, SWIFT_MIN_CWND_FP);
		ca->last_decrease_us = tp->tcp_mstamp;
	} else if (swift_can_decrease(tp, ca)) {
		swift_decrease(sk, swift_read(&swift_max_mdf));
	}
	swift_note_cut(ca, before);
	ca->ai_rem = 0;
	swift_apply(sk, NULL);
}

/*
 * The loss was spurious: undo its cut, and only its cut.  A delay-based
 * decrease since then stays; growth since then is not multiplied beyond
 * the window from before the loss.
 */
static u32 swift_undo_cwnd(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u64 cwnd;

	if (unlikely(!inet_csk(sk)->icsk_ca_initialized))
		return tcp_snd_cwnd(tp);

	cwnd = (u64)ca->cwnd_fp * ca->undo_fp >> SWIFT_SHIFT;
	cwnd = min_t(u64, cwnd, max(ca->cwnd_fp, ca->prior_cwnd_fp));
	WRITE_ONCE(ca->cwnd_fp, clamp_t(u64, cwnd, SWIFT_MIN_CWND_FP,
					swift_max_cwnd_fp(tp)));
	ca->undo_fp = SWIFT_ONE;
	return max(ca->cwnd_fp >> SWIFT_SHIFT, SWIFT_BURST);
}

/* No INET_DIAG attribute of its own: struct tcp_bbr_info is the one that
 * iproute2 prints ("bbr:(...)" in ss -ti), so Swift reports in it:
 *   bbr_bw          cwnd * mss / rtt, bytes per second
 *   bbr_min_rtt     current target delay, us
 *   bbr_pacing_gain pacing gain in 1/256 (256 below one packet, else 320)
 *   bbr_cwnd_gain   Swift's fractional cwnd in 1/256 packet (rounded up)
 * inet_diag can only ask for attributes up to INET_DIAG_VEGASINFO, hence
 * the answer to that bit as well (as BBR and DCTCP do).
 */
static size_t swift_get_info(struct sock *sk, u32 ext, int *attr,
			     union tcp_cc_info *info)
{
	const struct swift *ca = inet_csk_ca(sk);
	u32 cwnd_fp;
	u64 bw = 0;

	if (!(ext & (1 << (INET_DIAG_BBRINFO - 1))) &&
	    !(ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;

	cwnd_fp = READ_ONCE(ca->cwnd_fp);
	if (cwnd_fp)
		bw = swift_rate(sk, cwnd_fp, SWIFT_GAIN_UNIT);
	memset(&info->bbr, 0, sizeof(info->bbr));
	info->bbr.bbr_bw_lo = (u32)bw;
	info->bbr.bbr_bw_hi = (u32)(bw >> 32);
	info->bbr.bbr_min_rtt = READ_ONCE(ca->target_us);
	info->bbr.bbr_pacing_gain = swift_pacing_gain(cwnd_fp);
	info->bbr.bbr_cwnd_gain = DIV_ROUND_UP(cwnd_fp,
					       SWIFT_ONE / SWIFT_GAIN_UNIT);
	*attr = INET_DIAG_BBRINFO;
	return sizeof(info->bbr);
}

static struct tcp_congestion_ops tcp_swift __read_mostly = {
	.init		= swift_init,
	.cong_control	= swift_cong_control,
	.ssthresh	= swift_ssthresh,
	.undo_cwnd	= swift_undo_cwnd,
	.set_state	= swift_set_state,
	.get_info	= swift_get_info,
	.owner		= THIS_MODULE,
	.name		= "swift",
};

static int __init swift_register(void)
{
	unsigned int i;

	BUILD_BUG_ON(sizeof(struct swift) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(SWIFT_ONE != 1U << SWIFT_SHIFT);
	BUILD_BUG_ON(SWIFT_GAIN_UNIT != 1U << SWIFT_GAIN_SHIFT);
	for (i = 0; i < ARRAY_SIZE(swift_paths); i++) {
		seqlock_init(&swift_paths[i].lock);
		swift_paths[i].min_rtt_us = ~0U;
	}
	swift_fs_update();
	return tcp_register_congestion_control(&tcp_swift);
}

static void __exit swift_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_swift);
}

#if IS_ENABLED(CONFIG_TCP_CONG_SWIFT_KUNIT_TEST)
#include "tcp_swift_kunit.c"
#endif

module_init(swift_register);
module_exit(swift_unregister);

MODULE_AUTHOR("Fleet maintainers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP Swift (delay-based data-center congestion control)");
