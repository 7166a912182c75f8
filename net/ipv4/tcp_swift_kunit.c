// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of TCP Swift's window arithmetic (net/ipv4/tcp_swift.c, which
 * includes this file when CONFIG_TCP_CONG_SWIFT_KUNIT_TEST is set): the
 * control law, sub-packet windows and pacing, the loss reactions and undo,
 * flow scaling and the path term.  Each test drives the congestion-control
 * operations on a zeroed tcp_sock with the fields they read set by hand;
 * no packet is sent.
 */
#include <kunit/test.h>

#define TEST_MSS	1448U
#define TEST_SRTT_US	1000U

/*
 * A socket to 192.0.2.@host (TEST-NET-1, one host per test: the path
 * table is shared) with a window of @cwnd packets, a 1 ms srtt and a path
 * minimum of @min_rtt us, initialised by swift_init().
 */
static struct sock *swift_test_sock(struct kunit *test, u8 host, u32 cwnd,
				    u32 min_rtt)
{
	struct tcp_sock *tp = kunit_kzalloc(test, sizeof(*tp), GFP_KERNEL);
	struct sock *sk;

	KUNIT_ASSERT_NOT_NULL(test, tp);
	sk = (struct sock *)tp;
	sock_net_set(sk, &init_net);
	sk->sk_family = AF_INET;
	sk->sk_daddr = htonl(0xc0000200 | host);
	sk->sk_max_pacing_rate = ~0UL;
	tp->mss_cache = TEST_MSS;
	tp->snd_cwnd_clamp = ~0U;
	tp->snd_ssthresh = 2;	/* out of slow start */
	tp->snd_wnd = 65535;
	tp->srtt_us = TEST_SRTT_US << 3;
	tp->tcp_mstamp = 10 * USEC_PER_SEC;
	tp->delivered = 1000;
	tcp_snd_cwnd_set(tp, cwnd);
	minmax_reset(&tp->rtt_min, tcp_jiffies32, min_rtt);
	swift_init(sk);
	inet_csk(sk)->icsk_ca_initialized = 1;
	return sk;
}

static u32 swift_test_cwnd_fp(struct sock *sk)
{
	return ((struct swift *)inet_csk_ca(sk))->cwnd_fp;
}

/* Let more than an RTT pass and packets sent since then be delivered. */
static void swift_test_next_rtt(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tp->tcp_mstamp += 2 * TEST_SRTT_US;
	tp->delivered += 10;
}

/* An ACK of @acked packets with an RTT sample of @rtt_us. */
static void swift_test_ack(struct sock *sk, u32 acked, u32 in_flight,
			   long rtt_us)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct rate_sample rs = {
		.prior_delivered = tp->delivered,
		.prior_in_flight = in_flight,
		.acked_sacked = acked,
		.rtt_us = rtt_us,
	};

	tp->delivered += acked;
	tp->is_cwnd_limited = 1;
	swift_cong_control(sk, 0, 0, &rs);
}

static void swift_test_init(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 1, 10, 1000);

	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 10U << SWIFT_SHIFT);
	KUNIT_EXPECT_EQ(test, sk->sk_pacing_status, SK_PACING_NEEDED);
	/* 1.25 * 10 * 1448 B / 1 ms */
	KUNIT_EXPECT_EQ(test, READ_ONCE(sk->sk_pacing_rate), 18100000UL);
}

/* Below the target: ai (one packet) per window of ACKs. */
static void swift_test_increase(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 2, 10, 1000);

	swift_test_ack(sk, 10, 10, 1050);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 11U << SWIFT_SHIFT);
	KUNIT_EXPECT_EQ(test, tcp_snd_cwnd(tcp_sk(sk)), 11U);
}

/*
 * Far above the target: one decrease by max_mdf (not beta's 0.8 * ...),
 * then none until an RTT has passed and packets sent after it are acked.
 */
static void swift_test_decrease_limits(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 3, 16, 1000);
	struct tcp_sock *tp = tcp_sk(sk);

	swift_test_ack(sk, 2, 16, 100000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	swift_test_ack(sk, 2, 8, 100000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	/* An RTT later, but the ACK is for a packet sent before the cut. */
	tp->tcp_mstamp += 2 * TEST_SRTT_US;
	{
		struct rate_sample rs = {
			.prior_delivered = tp->delivered - 4,
			.prior_in_flight = 8, .acked_sacked = 2,
			.rtt_us = 100000,
		};

		swift_cong_control(sk, 0, 0, &rs);
	}
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	swift_test_next_rtt(sk);
	swift_test_ack(sk, 2, 8, 100000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 4U << SWIFT_SHIFT);
}

/* A sample just above the target: md = beta * (delay - target) / delay. */
static void swift_test_decrease_proportional(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 4, 100, 1000);
	u32 target, md, want;

	/* At 100 packets fs() is 0: target = 1000 + 100 us. */
	target = 1000 + swift_read(&swift_base_target_us);
	KUNIT_ASSERT_EQ(test, swift_fs_delay(100U << SWIFT_SHIFT), 0U);
	swift_test_ack(sk, 2, 100, 2 * target);
	md = div_u64((u64)swift_read(&swift_beta) * target, 2 * target);
	want = (100U << SWIFT_SHIFT) -
	       div_u64((u64)(100U << SWIFT_SHIFT) * md, SWIFT_MILLI);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), want);
}

/* An ACK that may have been held (one segment, alone) does not decrease. */
static void swift_test_held_ack(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 5, 4, 1000);

	swift_test_ack(sk, 1, 1, 40000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 4U << SWIFT_SHIFT);
	/* The same sample acking two segments does. */
	swift_test_ack(sk, 2, 2, 40000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 2U << SWIFT_SHIFT);
}

/* Jitter: one high sample among low ones in the round is no queue. */
static void swift_test_standing_delay(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 6, 16, 1000);

	swift_test_ack(sk, 2, 16, 1010);
	swift_test_ack(sk, 2, 16, 5000);
	KUNIT_EXPECT_GE(test, swift_test_cwnd_fp(sk), 16U << SWIFT_SHIFT);
}

/*
 * Below two packets: snd_cwnd 2 (two segments leave together) and the
 * pacing rate alone sets the rate, at least one packet a second.
 */
static void swift_test_sub_packet(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 7, 1, 1000);
	struct swift *ca = inet_csk_ca(sk);

	WRITE_ONCE(ca->cwnd_fp, SWIFT_ONE / 4);
	swift_apply(sk, NULL);
	KUNIT_EXPECT_EQ(test, tcp_snd_cwnd(tcp_sk(sk)), SWIFT_BURST);
	/* 0.25 * 1448 B / 1 ms */
	KUNIT_EXPECT_EQ(test, READ_ONCE(sk->sk_pacing_rate), 362000UL);
	WRITE_ONCE(ca->cwnd_fp, SWIFT_MIN_CWND_FP);
	swift_apply(sk, NULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sk->sk_pacing_rate),
			(unsigned long)TEST_MSS);
	/* Below one packet, ai packets per ACKed packet. */
	WRITE_ONCE(ca->cwnd_fp, SWIFT_ONE / 4);
	swift_test_ack(sk, 2, 2, 1050);
	KUNIT_EXPECT_EQ(test, ca->cwnd_fp, SWIFT_ONE / 4 + 2 * SWIFT_ONE);
}

/*
 * Retransmit timeouts: the first cuts once (ssthresh, then set_state in
 * the same RTT), each later one by max_mdf, the fifth to the minimum.
 */
static void swift_test_rto_sequence(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 8, 64, 1000);
	struct inet_connection_sock *icsk = inet_csk(sk);
	u32 want = 32U << SWIFT_SHIFT;
	int i;

	/* What tcp_enter_loss() sets before the state changes. */
	tcp_sk(sk)->prior_ssthresh = 64;
	tcp_sk(sk)->undo_marker = 1;
	swift_ssthresh(sk);
	swift_set_state(sk, TCP_CA_Loss);
	icsk->icsk_ca_state = TCP_CA_Loss;
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), want);
	for (i = 1; i < SWIFT_RETX_RESET - 1; i++) {
		icsk->icsk_retransmits = i;
		swift_test_next_rtt(sk);
		swift_set_state(sk, TCP_CA_Loss);
		want /= 2;
		KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), want);
	}
	icsk->icsk_retransmits = SWIFT_RETX_RESET - 1;
	swift_test_next_rtt(sk);
	swift_set_state(sk, TCP_CA_Loss);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), SWIFT_MIN_CWND_FP);
	KUNIT_EXPECT_EQ(test, tcp_snd_cwnd(tcp_sk(sk)), SWIFT_BURST);
}

/* Undo restores the loss's cut, not a later delay-based one. */
static void swift_test_undo(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 9, 16, 1000);

	swift_ssthresh(sk);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	swift_test_next_rtt(sk);
	swift_test_ack(sk, 2, 8, 100000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 4U << SWIFT_SHIFT);
	KUNIT_EXPECT_EQ(test, swift_undo_cwnd(sk), 8U);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	/* A second undo has nothing left to restore. */
	swift_undo_cwnd(sk);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
}

/* Undo does not multiply growth since the loss beyond the prior window. */
static void swift_test_undo_bounded(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 14, 16, 1000);
	struct swift *ca = inet_csk_ca(sk);

	swift_ssthresh(sk);
	KUNIT_EXPECT_EQ(test, ca->cwnd_fp, 8U << SWIFT_SHIFT);
	WRITE_ONCE(ca->cwnd_fp, 12U << SWIFT_SHIFT);
	KUNIT_EXPECT_EQ(test, swift_undo_cwnd(sk), 16U);
}

/*
 * TCP_CA_Loss that is no timeout (a smaller path MTU: the stack clears
 * the undo state and keeps the window), and timeouts while the receiver's
 * window is zero, do not cut.
 */
static void swift_test_loss_not_congestion(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 15, 16, 1000);
	struct tcp_sock *tp = tcp_sk(sk);

	swift_set_state(sk, TCP_CA_Loss);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 16U << SWIFT_SHIFT);
	tp->prior_ssthresh = 16;
	tp->undo_marker = 1;
	tp->snd_wnd = 0;
	swift_ssthresh(sk);
	swift_set_state(sk, TCP_CA_Loss);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 16U << SWIFT_SHIFT);
}

/* A loss reaction within an RTT of a decrease does not cut: no undo. */
static void swift_test_undo_without_cut(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 10, 16, 1000);

	swift_test_ack(sk, 2, 16, 100000);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	swift_ssthresh(sk);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
	swift_undo_cwnd(sk);
	KUNIT_EXPECT_EQ(test, swift_test_cwnd_fp(sk), 8U << SWIFT_SHIFT);
}

/* First round of fast recovery: as many packets out as delivered. */
static void swift_test_conservation(struct kunit *test)
{
	struct sock *sk = swift_test_sock(test, 11, 16, 1000);
	struct tcp_sock *tp = tcp_sk(sk);

	swift_ssthresh(sk);
	swift_set_state(sk, TCP_CA_Recovery);
	inet_csk(sk)->icsk_ca_state = TCP_CA_Recovery;
	tp->packets_out = 14;
	{
		/* The ACK of a packet sent before recovery started. */
		struct rate_sample rs = {
			.prior_delivered = tp->delivered - 14,
			.prior_in_flight = 15, .acked_sacked = 1,
			.rtt_us = 1050,
		};

		tp->delivered++;
		swift_cong_control(sk, 0, 0, &rs);
	}
	KUNIT_EXPECT_EQ(test, tcp_snd_cwnd(tp), 15U);
	/* After a round, the cut window (8, +ai) applies. */
	tp->packets_out = 3;
	swift_test_next_rtt(sk);
	swift_test_ack(sk, 1, 4, 1050);
	KUNIT_EXPECT_EQ(test, tcp_snd_cwnd(tp), 8U);
}

/* fs(): fs_range at fs_min_cwnd and below, 0 at fs_max_cwnd and above. */
static void swift_test_flow_scaling(struct kunit *test)
{
	u32 range = swift_read(&swift_fs_range_us);
	u32 lo = swift_milli_to_fp(swift_read(&swift_fs_min_cwnd));
	u32 hi = swift_milli_to_fp(swift_read(&swift_fs_max_cwnd));
	u32 mid = swift_fs_delay(SWIFT_ONE);

	KUNIT_EXPECT_EQ(test, swift_fs_delay(lo), range);
	KUNIT_EXPECT_EQ(test, swift_fs_delay(1), range);
	KUNIT_EXPECT_EQ(test, swift_fs_delay(hi), 0U);
	KUNIT_EXPECT_GT(test, mid, 0U);
	KUNIT_EXPECT_LT(test, mid, range);
	KUNIT_EXPECT_GE(test, mid, swift_fs_delay(2 * SWIFT_ONE));
}

/*
 * The path term: the connection's own minimum, or the smaller one shared
 * by an earlier connection to the same destination (the latecomer guard);
 * another destination keeps its own.
 */
static void swift_test_path(struct kunit *test)
{
	struct sock *a = swift_test_sock(test, 12, 100, 1000);
	struct sock *b = swift_test_sock(test, 12, 100, 3000);
	struct sock *c = swift_test_sock(test, 13, 100, 3000);
	u32 base = swift_read(&swift_base_target_us);

	KUNIT_EXPECT_EQ(test, swift_target_delay(a, 100U << SWIFT_SHIFT),
			1000 + base);
	KUNIT_EXPECT_EQ(test, swift_target_delay(b, 100U << SWIFT_SHIFT),
			1000 + base);
	KUNIT_EXPECT_EQ(test, swift_target_delay(c, 100U << SWIFT_SHIFT),
			3000 + base);
}

static struct kunit_case swift_test_cases[] = {
	KUNIT_CASE(swift_test_init),
	KUNIT_CASE(swift_test_increase),
	KUNIT_CASE(swift_test_decrease_limits),
	KUNIT_CASE(swift_test_decrease_proportional),
	KUNIT_CASE(swift_test_held_ack),
	KUNIT_CASE(swift_test_standing_delay),
	KUNIT_CASE(swift_test_sub_packet),
	KUNIT_CASE(swift_test_rto_sequence),
	KUNIT_CASE(swift_test_undo),
	KUNIT_CASE(swift_test_undo_without_cut),
	KUNIT_CASE(swift_test_undo_bounded),
	KUNIT_CASE(swift_test_loss_not_congestion),
	KUNIT_CASE(swift_test_conservation),
	KUNIT_CASE(swift_test_flow_scaling),
	KUNIT_CASE(swift_test_path),
	{}
};

/* Leave no test destination (192.0.2.0/24 in init_net) in the table. */
static void swift_test_suite_exit(struct kunit_suite *suite)
{
	struct in6_addr net;
	unsigned int i;

	ipv6_addr_set_v4mapped(htonl(0xc0000200), &net);
	for (i = 0; i < ARRAY_SIZE(swift_paths); i++) {
		struct swift_path *p = &swift_paths[i];

		write_seqlock_bh(&p->lock);
		if (p->net_cookie == init_net.net_cookie &&
		    ipv6_prefix_equal(&p->daddr, &net, 120))
			p->min_rtt_us = ~0U;
		write_sequnlock_bh(&p->lock);
	}
}

static struct kunit_suite swift_test_suite = {
	.name = "tcp_swift",
	.test_cases = swift_test_cases,
	.suite_exit = swift_test_suite_exit,
};

kunit_test_suite(swift_test_suite);
