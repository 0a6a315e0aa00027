/* TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1 and §5) and Patched TIMELY (Zhu et al.,
 * CoNEXT 2016) as TCP congestion control: crates/cc/src/timely.rs and patched_timely.rs in
 * fixed point. A completion (§3.1) is the ACK that brings the packets acknowledged since the
 * last one to a segment (`tso_segs` packets: with TSO on, the kernel's bursts are the
 * segments); its RTT is the kernel's `rtt_us` of the newest packet acknowledged, less the
 * segment's serialization at the line rate (`seg_ser_ps`), as the simulator's message transport
 * takes it (crates/sim/src/transport/message.rs). The rate paces the socket
 * (`sk_pacing_rate`, the kernel's own pacing, no qdisc needed); the window is fixed at
 * `cwnd_packets`, the message transport's outstanding limit, and never cut.
 *
 * Fixed point (docs/host.md, "Fixed point"): times in ps (u64), the gradient's EWMA in ps
 * rounded to nearest, weights and factors in Q16, the rate in bit/s. */
#include "rttlab.h"

/* Parameters, named as crates/cc's with their unit (set by the loader). */
const volatile __u64 alpha_q16 = 1311;          /* 0.02 */
const volatile __u64 beta_q16 = 52429;          /* 0.8 */
const volatile __u64 delta_bps = 10000000;
const volatile __u64 t_low_ps = 50000000;
const volatile __u64 t_high_ps = 500000000;
const volatile __u64 min_rtt_ps = 20000000;
const volatile __u64 hai_threshold = 5;
const volatile __u64 hai_factor_q16 = 5 << 16;
const volatile __u64 max_rate_bps = 1000000000;  /* min(max_rate, line rate) */
const volatile __u64 min_rate_bps = 10000000;
const volatile __u64 initial_rate_bps = 1000000000;
const volatile __u64 update_scaling = 0;        /* 0 all, 1 snippet, 2 none */
const volatile __u64 hai_counter = 0;           /* 0 gradient, 1 raw_diff, 2 any_increase */
const volatile __u64 decrease_floor = 1;        /* 0 none, 1 half */
const volatile __u64 zero_gradient = 0;         /* 0 increase, 1 hold */
const volatile __u64 rtt_ref_ps = 50000000;     /* Patched TIMELY's reference RTT */
const volatile __u64 cwnd_packets = 44;         /* the outstanding limit, in packets */
const volatile __u64 tso_segs = 11;             /* a segment (completion) in packets */
const volatile __u64 seg_ser_ps = 262144000;    /* a segment's serialization at the line rate */

struct timely {
	__u64 rate_bps;
	__u64 prev_rtt_ps;
	__s64 rtt_diff_ps;   /* the EWMA of RTT differences */
	__u64 last_update_ps;
	__u32 hai_count;
	__u32 patched;
	__u32 acked_packets; /* since the last completion */
	__u32 have_prev;     /* prev_rtt_ps and last_update_ps hold a sample */
};

static __always_inline __u64 now_ps(void)
{
	return bpf_ktime_get_ns() * 1000;
}

static __always_inline void apply(struct sock *sk, struct timely *s)
{
	sk->sk_pacing_rate = s->rate_bps / 8;
	tcp_sk(sk)->snd_cwnd = cwnd_packets;
}

static __always_inline void start(struct sock *sk, __u32 patched)
{
	struct timely *s = inet_csk_ca(sk);
	s->rate_bps = initial_rate_bps;
	s->prev_rtt_ps = 0;
	s->rtt_diff_ps = 0;
	s->last_update_ps = 0;
	s->hai_count = 0;
	s->patched = patched;
	s->acked_packets = 0;
	s->have_prev = 0;
	sk->sk_pacing_status = SK_PACING_NEEDED;
	apply(sk, s);
	log_event(sk, bpf_ktime_get_ns(), EV_INIT, patched, -1, 0, s->rate_bps, 0, 0);
}

/* Patched TIMELY's decrease weight w(g) in Q16: 0 at g ≤ −¼, 1 at g ≥ ¼, 2g + ½ between. */
static __always_inline __s64 decrease_weight_q16(__s64 g_q16)
{
	if (g_q16 <= -(__s64)(ONE / 4))
		return 0;
	if (g_q16 >= (__s64)(ONE / 4))
		return ONE;
	return 2 * g_q16 + ONE / 2;
}

/* `rate·(1 − f)` for a factor f in Q16 (0 once f ≥ 1). */
static __always_inline __u64 cut(__u64 rate, __s64 f_q16)
{
	if (f_q16 <= 0)
		return rate;
	if (f_q16 >= (__s64)ONE)
		return 0;
	return rate - mul_div(rate, f_q16, ONE);
}

static __always_inline void completion(struct sock *sk, struct timely *s, __u64 rtt_us, __u64 acked)
{
	__u64 now = now_ps();
	__u64 raw_rtt = rtt_us * 1000000;
	__u64 rtt = raw_rtt > seg_ser_ps ? raw_rtt - seg_ser_ps : 0;
	/* The gradient filter: raw difference, EWMA, normalised by min_rtt (Algorithm 1 l. 1–4). */
	__s64 raw = s->have_prev ? (__s64)(rtt - s->prev_rtt_ps) : 0;
	s->prev_rtt_ps = rtt;
	s->rtt_diff_ps = sdiv_round((__s64)(ONE - alpha_q16) * s->rtt_diff_ps + (__s64)alpha_q16 * raw, ONE);
	__s64 g_q16 = sdiv_round(s->rtt_diff_ps * (__s64)ONE, min_rtt_ps);
	/* df = min((now − last) / min_rtt, 1) (§5). */
	__u64 df = ONE;
	if (s->have_prev) {
		__u64 since = now > s->last_update_ps ? now - s->last_update_ps : 0;
		df = since >= min_rtt_ps ? ONE : mul_div(since, ONE, min_rtt_ps);
	}
	s->last_update_ps = now;
	s->have_prev = 1;
	__u64 df_inc = update_scaling == 2 ? ONE : df;
	__u64 df_high = df_inc;
	__u64 df_grad = update_scaling == 0 ? df : ONE;
	__u64 old = s->rate_bps, new;

	if (!s->patched) {
		int gradient_increases = zero_gradient ? s->rtt_diff_ps < 0 : s->rtt_diff_ps <= 0;
		int counts = hai_counter == 0 ? s->rtt_diff_ps < 0
			   : hai_counter == 1 ? raw < 0
			   : rtt < t_low_ps || (rtt <= t_high_ps && gradient_increases);
		s->hai_count = counts ? s->hai_count + 1 : 0;
		int hai = s->hai_count >= hai_threshold;
		if (rtt < t_low_ps) {
			__u64 n = hai && hai_counter == 2 ? hai_factor_q16 : ONE;
			new = old + mul_div(mul_div(delta_bps, n, ONE), df_inc, ONE);
		} else if (rtt > t_high_ps) {
			new = cut(old, mul_div(mul_div(beta_q16, rtt - t_high_ps, rtt), df_high, ONE));
		} else if (gradient_increases) {
			__u64 n = hai ? hai_factor_q16 : ONE;
			new = old + mul_div(mul_div(delta_bps, n, ONE), df_inc, ONE);
		} else {
			/* β·g·df, with g > 0 here. */
			new = cut(old, mul_div(mul_div(beta_q16, g_q16, ONE), df_grad, ONE));
		}
		if (decrease_floor && new < old / 2)
			new = old / 2;
	} else {
		if (rtt < t_low_ps) {
			new = old + mul_div(delta_bps, df_inc, ONE);
		} else if (rtt > t_high_ps) {
			new = cut(old, mul_div(mul_div(beta_q16, rtt - t_high_ps, rtt), df_inc, ONE));
		} else {
			/* δ·(1 − w)·df − rate·β·w·(rtt − rtt_ref)/rtt_ref·df. */
			__s64 w = decrease_weight_q16(g_q16);
			__s64 up = mul_div(mul_div(delta_bps, ONE - w, ONE), df_inc, ONE);
			__s64 err_q16 = sdiv_round(((__s64)rtt - (__s64)rtt_ref_ps) * (__s64)ONE, rtt_ref_ps);
			__s64 f = sdiv_round(sdiv_round((__s64)beta_q16 * w, ONE) * err_q16, ONE);
			f = sdiv_round(f * (__s64)(update_scaling == 0 ? df : ONE), ONE);
			__s64 r = (__s64)old + up - (f >= 0 ? (__s64)mul_div(old, f, ONE) : -(__s64)mul_div(old, -f, ONE));
			new = r > 0 ? r : 0;
		}
	}
	if (new > max_rate_bps)
		new = max_rate_bps;
	if (new < min_rate_bps)
		new = min_rate_bps;
	s->rate_bps = new;
	apply(sk, s);
	log_event(sk, now / 1000, EV_ACK, s->hai_count < 0xffff ? s->hai_count : 0xffff, rtt_us, acked, new, s->rtt_diff_ps, 0);
}

SEC("struct_ops/timely_init")
void BPF_PROG(timely_init, struct sock *sk)
{
	start(sk, 0);
}

SEC("struct_ops/ptimely_init")
void BPF_PROG(ptimely_init, struct sock *sk)
{
	start(sk, 1);
}

SEC("struct_ops/timely_acked")
void BPF_PROG(timely_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct timely *s = inet_csk_ca(sk);
	s->acked_packets += sample->pkts_acked;
	if (sample->rtt_us <= 0)
		return;
	if (s->acked_packets < tso_segs) {
		/* An RTT sample within a segment: logged, not a completion. */
		log_event(sk, bpf_ktime_get_ns(), EV_RTT, 0, sample->rtt_us, (__u64)sample->pkts_acked * tcp_sk(sk)->mss_cache, s->rate_bps, s->rtt_diff_ps, 0);
		return;
	}
	__u64 acked = (__u64)s->acked_packets * tcp_sk(sk)->mss_cache;
	s->acked_packets = 0;
	completion(sk, s, sample->rtt_us, acked);
}

/* The rate and the window are the controller's alone: nothing of the kernel's own growth or
 * reduction. */
#include "own_window.h"

/* A completion is one segment: the kernel builds TSO bursts of at least this many packets. */
SEC("struct_ops/timely_min_tso_segs")
__u32 BPF_PROG(timely_min_tso_segs, struct sock *sk)
{
	return tso_segs;
}

SEC(".struct_ops")
struct tcp_congestion_ops rttlab_timely = {
	.init = (void *)timely_init,
	.pkts_acked = (void *)timely_acked,
	.cong_control = (void *)own_cong_control,
	.ssthresh = (void *)own_ssthresh,
	.undo_cwnd = (void *)own_undo_cwnd,
	.min_tso_segs = (void *)timely_min_tso_segs,
	.name = "rttlab_timely",
};

SEC(".struct_ops")
struct tcp_congestion_ops rttlab_ptimely = {
	.init = (void *)ptimely_init,
	.pkts_acked = (void *)timely_acked,
	.cong_control = (void *)own_cong_control,
	.ssthresh = (void *)own_ssthresh,
	.undo_cwnd = (void *)own_undo_cwnd,
	.min_tso_segs = (void *)timely_min_tso_segs,
	.name = "rttlab_ptimely",
};
