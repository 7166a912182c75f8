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
 *   target = base_target + fs(cwnd)
 *   fs(cwnd) = clamp(alpha / sqrt(cwnd) - alpha / sqrt(fs_max_cwnd),
 *                    0, fs_range)
 *   alpha = fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd))
 *
 * The flow-scaling term fs() raises the target for flows with a small
 * window, so that many flows sharing a bottleneck converge to a fair share
 * instead of the last flows starving.  The topology (hop-count) term of the
 * paper is not implemented: it is zero.
 *
 * On every ACK that carries an RTT sample ("delay", in us):
 *
 *   delay <  target: additive increase of ai packets per RTT:
 *                    cwnd += ai * acked / cwnd   if cwnd >= 1
 *                    cwnd += ai * acked          if cwnd <  1
 *   delay >= target: multiplicative decrease, at most once per smoothed RTT:
 *                    cwnd *= max(1 - beta * (delay - target) / delay,
 *                                1 - max_mdf)
 *
 * Entering fast recovery or CWR decreases cwnd by max_mdf, at most once per
 * RTT as well; an RTO restarts from at most one packet.  Swift has no slow
 * start: a connection starts from the initial window set by the stack.
 *
 * The window is kept in units of 1/1024 packet, between about 0.001 packet
 * and min(snd_cwnd_clamp, 2^20) packets.  The stack only knows whole
 * packets, so tp->snd_cwnd is the integer part (at least 1) and the
 * fraction is realised with pacing, which this module owns (.cong_control):
 *
 *   cwnd <  1: pacing_rate = cwnd * mss / srtt          (one packet every
 *                                                        srtt / cwnd)
 *   cwnd >= 1: pacing_rate = 5 / 4 * cwnd * mss / srtt (pacing smooths
 *                                                        bursts, cwnd limits)
 *
 * both capped by sk->sk_max_pacing_rate.  Pacing is requested from the stack
 * (SK_PACING_NEEDED) unless sch_fq already paces the socket.
 *
 * The delay is the RTT the stack measures per ACK (rs->rtt_us), including
 * host and delayed-ACK time; Swift proper subtracts remote host delay using
 * NIC timestamps.  A receiver holds the ACK of a lone segment (cwnd < 2) for
 * its delayed-ACK timeout: see Documentation/networking/tcp-swift.rst.
 *
 * Only for data centers: it yields to any loss-based flow sharing its
 * bottleneck and its defaults assume base RTTs of tens of microseconds.
 */

#include <linux/inet_diag.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <net/tcp.h>

#define SWIFT_SHIFT		10			/* cwnd fixed point */
#define SWIFT_ONE		1024U			/* 1 << SWIFT_SHIFT */
#define SWIFT_MIN_CWND_FP	1U			/* ~0.001 packet */
#define SWIFT_MAX_CWND		1048576U		/* packets (2^20) */
#define SWIFT_MILLI		1000U			/* parameter unit */
#define SWIFT_MAX_ACKED		SWIFT_MAX_CWND

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
/* Largest decrease of one reaction (1/1000). */
static struct swift_param swift_max_mdf = { 500, 1, 1000 };
/* Flow-scaling range (us); 0 disables flow scaling. */
static struct swift_param swift_fs_range_us = { 400, 0, 1000000 };
/* Window (1/1000 packet) at and below which fs() is fs_range. */
static struct swift_param swift_fs_min_cwnd = { 100, 1, 1000000 };
/* Window (1/1000 packet) at and above which fs() is 0. */
static struct swift_param swift_fs_max_cwnd = { 100000, 1, 1000000000 };

/* Values out of range are rejected; a set takes effect at the next ACK of
 * every socket, since the parameters are read with READ_ONCE() per use.
 */
static int swift_param_set(const char *val, const struct kernel_param *kp)
{
	struct swift_param *p = kp->arg;
	u32 v;

	if (kstrtou32(val, 0, &v) || v < p->min || v > p->max)
		return -EINVAL;
	WRITE_ONCE(p->val, v);
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
MODULE_PARM_DESC(base_target_us, "base target delay in us (1..1000000)");
module_param_cb(ai, &swift_param_ops, &swift_ai, 0644);
MODULE_PARM_DESC(ai, "additive increase per RTT in 1/1000 packet (1..100000)");
module_param_cb(beta, &swift_param_ops, &swift_beta, 0644);
MODULE_PARM_DESC(beta, "multiplicative decrease constant in 1/1000 (1..1000)");
module_param_cb(max_mdf, &swift_param_ops, &swift_max_mdf, 0644);
MODULE_PARM_DESC(max_mdf, "max multiplicative decrease in 1/1000 (1..1000)");
module_param_cb(fs_range_us, &swift_param_ops, &swift_fs_range_us, 0644);
MODULE_PARM_DESC(fs_range_us, "flow-scaling range in us, 0: off (0..1000000)");
module_param_cb(fs_min_cwnd, &swift_param_ops, &swift_fs_min_cwnd, 0644);
MODULE_PARM_DESC(fs_min_cwnd, "flow-scaling min cwnd, 1/1000 pkt (1..1000000)");
module_param_cb(fs_max_cwnd, &swift_param_ops, &swift_fs_max_cwnd, 0644);
MODULE_PARM_DESC(fs_max_cwnd, "flow-scaling max cwnd, 1/1000 pkt (1..10^9)");

static u32 swift_read(const struct swift_param *p)
{
	return READ_ONCE(p->val);
}

struct swift {
	u64	last_decrease_us;	/* tp->tcp_mstamp of the last decrease */
	u32	cwnd_fp;		/* window in 1/1024 packet; 0: no init */
	u32	undo_cwnd_fp;		/* cwnd_fp before the last loss reaction */
	u32	ai_rem;			/* remainder of the additive increase */
	u32	target_us;		/* target delay of the last sample */
	u32	recovery_kick:1,	/* entered recovery: let one packet out */
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

/* 1 / sqrt() of a window parameter given in 1/1000 packet. */
static u32 swift_param_inv_sqrt(const struct swift_param *p)
{
	return swift_inv_sqrt(swift_milli_to_fp(swift_read(p)));
}

/* Flow scaling: fs_range at fs_min_cwnd and below, 0 at fs_max_cwnd and
 * above, linear in 1/sqrt(cwnd) in between.  Off when fs_min_cwnd is not
 * below fs_max_cwnd.
 */
static u32 swift_fs_delay(u32 cwnd_fp)
{
	u32 range = swift_read(&swift_fs_range_us);
	u32 inv_cwnd, inv_min, inv_max;

	if (!range)
		return 0;
	inv_min = swift_param_inv_sqrt(&swift_fs_min_cwnd);
	inv_max = swift_param_inv_sqrt(&swift_fs_max_cwnd);
	if (inv_min <= inv_max)
		return 0;
	inv_cwnd = swift_inv_sqrt(cwnd_fp);
	if (inv_cwnd <= inv_max)
		return 0;
	if (inv_cwnd >= inv_min)
		return range;
	return div_u64((u64)range * (inv_cwnd - inv_max), inv_min - inv_max);
}

static u32 swift_target_delay(u32 cwnd_fp)
{
	return swift_read(&swift_base_target_us) + swift_fs_delay(cwnd_fp);
}

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

/* Bytes per second for cwnd_fp over srtt with a gain in 1/256, capped by
 * SO_MAX_PACING_RATE.  The product is below 2^55 (mss < 2^16,
 * cwnd_fp <= 2^30, gain < 2^9).
 */
static unsigned long swift_rate(const struct sock *sk, u32 cwnd_fp, u32 gain)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 rate = (u64)tp->mss_cache * cwnd_fp * gain;

	rate = mul_u64_u64_div_u64(rate, USEC_PER_SEC,
				   (u64)swift_rtt_us(tp) <<
				   (SWIFT_SHIFT + SWIFT_GAIN_SHIFT));
	/* A zero rate would turn pacing off: keep at least 1 byte/s. */
	rate = max_t(u64, rate, 1);
	return min_t(u64, rate, READ_ONCE(sk->sk_max_pacing_rate));
}

static u32 swift_pacing_gain(u32 cwnd_fp)
{
	return cwnd_fp < SWIFT_ONE ? SWIFT_GAIN_UNIT : SWIFT_PACING_GAIN;
}

static void swift_set_pacing_rate(struct sock *sk)
{
	const struct swift *ca = inet_csk_ca(sk);

	WRITE_ONCE(sk->sk_pacing_rate,
		   swift_rate(sk, ca->cwnd_fp, swift_pacing_gain(ca->cwnd_fp)));
}

/* Hand the window to the stack: whole packets in tp->snd_cwnd, the
 * fraction below one packet through the pacing rate.
 */
static void swift_apply(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 cwnd = max(ca->cwnd_fp >> SWIFT_SHIFT, 1U);

	/* With .cong_control the stack does no PRR: on entering fast
	 * recovery, allow the fast retransmit out at once.
	 */
	if (ca->recovery_kick) {
		ca->recovery_kick = 0;
		cwnd = max(cwnd, tcp_packets_in_flight(tp) + 1);
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
	ca->undo_cwnd_fp = cwnd;
	ca->ai_rem = 0;
	WRITE_ONCE(ca->target_us, swift_target_delay(cwnd));
	ca->recovery_kick = 0;
	swift_set_pacing_rate(sk);
	/* Pace in TCP unless sch_fq does it (SK_PACING_FQ). */
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

static void swift_cong_control(struct sock *sk, u32 ack, int flag,
			       const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);
	u32 delay, target, md;

	/* The ACK of a SYN may arrive before swift_init(). */
	if (unlikely(!ca->cwnd_fp))
		return;

	if (rs->rtt_us >= 0) {
		delay = rs->rtt_us;
		target = swift_target_delay(ca->cwnd_fp);
		WRITE_ONCE(ca->target_us, target);

		if (delay < target) {
			/* Grow only a window in use; below one packet the
			 * flow is limited by pacing, not by cwnd.
			 */
			if (rs->acked_sacked &&
			    (ca->cwnd_fp < SWIFT_ONE || tcp_is_cwnd_limited(sk)))
				swift_increase(sk, rs->acked_sacked);
		} else if (!rs->is_ack_delayed && swift_can_decrease(tp, ca)) {
			/* delay >= target >= 1 */
			md = div_u64((u64)swift_read(&swift_beta) *
				     (delay - target), delay);
			md = min(md, swift_read(&swift_max_mdf));
			swift_decrease(sk, md);
		}
	}
	swift_apply(sk);
}

/* Fast recovery, CWR and the first RTO of a window: decrease by max_mdf,
 * at most once per RTT, after saving the window for undo.
 */
static u32 swift_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);

	if (unlikely(!ca->cwnd_fp))
		return max(tcp_snd_cwnd(tp) >> 1U, 2U);

	ca->undo_cwnd_fp = ca->cwnd_fp;
	if (swift_can_decrease(tp, ca))
		swift_decrease(sk, swift_read(&swift_max_mdf));
	return max(ca->cwnd_fp >> SWIFT_SHIFT, 2U);
}

static void swift_set_state(struct sock *sk, u8 new_state)
{
	struct swift *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Recovery &&
	    inet_csk(sk)->icsk_ca_state != TCP_CA_Recovery)
		ca->recovery_kick = 1;
}

static void swift_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);

	if (ev != CA_EVENT_LOSS || unlikely(!ca->cwnd_fp))
		return;

	/* RTO (after swift_ssthresh()): restart from at most one packet;
	 * a fractional window stays fractional.
	 */
	if (ca->cwnd_fp > SWIFT_ONE) {
		WRITE_ONCE(ca->cwnd_fp, SWIFT_ONE);
		ca->last_decrease_us = tp->tcp_mstamp;
	}
	ca->ai_rem = 0;
	swift_set_pacing_rate(sk);
}

static u32 swift_undo_cwnd(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct swift *ca = inet_csk_ca(sk);

	if (unlikely(!ca->cwnd_fp))
		return tcp_snd_cwnd(tp);

	WRITE_ONCE(ca->cwnd_fp, max(ca->cwnd_fp, ca->undo_cwnd_fp));
	return max(ca->cwnd_fp >> SWIFT_SHIFT, 1U);
}

/* No INET_DIAG attribute of its own: struct tcp_bbr_info is the one that
 * iproute2 prints ("bbr:(...)" in ss -ti), so Swift reports in it:
 *   bbr_bw          cwnd * mss / srtt, bytes per second
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
	.cwnd_event	= swift_cwnd_event,
	.get_info	= swift_get_info,
	.owner		= THIS_MODULE,
	.name		= "swift",
};

static int __init swift_register(void)
{
	BUILD_BUG_ON(sizeof(struct swift) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(SWIFT_ONE != 1U << SWIFT_SHIFT);
	BUILD_BUG_ON(SWIFT_GAIN_UNIT != 1U << SWIFT_GAIN_SHIFT);
	return tcp_register_congestion_control(&tcp_swift);
}

static void __exit swift_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_swift);
}

module_init(swift_register);
module_exit(swift_unregister);

MODULE_AUTHOR("Fleet maintainers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP Swift (delay-based data-center congestion control)");
