/* Swift (Kumar et al., SIGCOMM 2020, Algorithm 1, §3.4–3.5) as TCP congestion control:
 * crates/cc/src/swift.rs in fixed point. The fabric and endpoint windows are one window here,
 * on the kernel's per-ACK RTT (crates/cc's Swift with no endpoint delay: its endpoint window
 * stays at its maximum); below one packet the socket is paced at one packet per `srtt/cwnd`
 * (lines 29–32). Target scaling (§3.5) takes the path's switch count from `hops`.
 *
 * Fixed point (docs/host.md, "Fixed point"): the window in packets·2^32, times in ps, weights
 * and factors in Q16. */
#include "rttlab.h"

const volatile __u64 ai_q16 = 1 << 16;
const volatile __u64 beta_q16 = 52429;            /* 0.8 */
const volatile __u64 max_mdf_q16 = 1 << 15;       /* 0.5 */
const volatile __u64 base_target_ps = 25000000;
const volatile __u64 per_hop_ps = 1000000;
const volatile __u64 hops = 1;
const volatile __u64 topology_scaling = 1;
const volatile __u64 flow_scaling = 1;
const volatile __u64 fs_range_ps = 100000000;
/* Flow scaling's α (ps·packets^½) and −β' (ps): `clamp(α/√cwnd − fs_offset, 0, fs_range)`. */
const volatile __u64 fs_alpha_ps = 3170000;
const volatile __u64 fs_offset_ps = 198000;
const volatile __u64 min_cwnd_q32 = 4294967;      /* 0.001 */
const volatile __u64 max_cwnd_q32 = 256ULL << 32;
const volatile __u64 initial_cwnd_q32 = 1ULL << 32;
const volatile __u64 retx_reset_threshold = 3;
const volatile __u64 rtt_smoothing_q16 = 49152;   /* 0.75 */
const volatile __u64 guard_rtt = 0;               /* 0 the sample, 1 the smoothed RTT */

struct swift {
	__u64 cwnd_q32;
	__u64 t_last_decrease_ps;
	__u64 srtt_ps;        /* 0 before the first sample */
	__u64 last_rtt_ps;
	__u32 retransmit_cnt;
};

/* ⌊√x⌋ by Newton's iteration from above (no branch on the data: the verifier walks it once);
 * 40 steps reach it from 2^32 for any x < 2^64. */
static __always_inline __u64 isqrt(__u64 x)
{
	if (!x)
		return 0;
	__u64 r = 1ULL << 32;
	for (int i = 0; i < 40; i++)
		r = (r + x / r) / 2;
	return r * r > x ? r - 1 : r;
}

/* The fabric target (§3.5) for a window of `cwnd_q32`, in ps, as crates/cc's `target_delay`. */
static __always_inline __u64 target_ps(__u64 cwnd_q32)
{
	__u64 t = base_target_ps;
	if (topology_scaling)
		t += hops * per_hop_ps;
	if (flow_scaling) {
		/* √cwnd·2^24 = √(cwnd_q32·2^16); the window is below 2^46·2^-32 packets here. */
		__u64 root = isqrt(cwnd_q32 << 16);
		__u64 term = root ? mul_div(fs_alpha_ps, 1ULL << 24, root) : fs_range_ps + fs_offset_ps;
		term = term > fs_offset_ps ? term - fs_offset_ps : 0;
		t += term < fs_range_ps ? term : fs_range_ps;
	}
	return t;
}

static __always_inline __u64 guard(struct swift *s)
{
	return guard_rtt ? s->srtt_ps : s->last_rtt_ps;
}

/* Lines 25–28: clamp, and restart the guard if the window fell or sits at its minimum. */
static __always_inline void bound(struct swift *s, __u64 prev, __u64 now)
{
	if (s->cwnd_q32 < min_cwnd_q32)
		s->cwnd_q32 = min_cwnd_q32;
	if (s->cwnd_q32 > max_cwnd_q32)
		s->cwnd_q32 = max_cwnd_q32;
	if (s->cwnd_q32 < prev || s->cwnd_q32 <= min_cwnd_q32)
		s->t_last_decrease_ps = now;
}

static __always_inline void apply(struct sock *sk, struct swift *s)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 packets = s->cwnd_q32 >> 32;
	tp->snd_cwnd = packets ? packets : 1;
	if (packets || !s->srtt_ps) {
		sk->sk_pacing_rate = ~0UL;
	} else {
		/* One packet every srtt/cwnd: cwnd·mss/srtt bytes/s = cwnd_q32·mss·10^12/(2^32·srtt_ps),
		 * with 10^12/2^32 = 244140625/2^20. */
		__u64 bytes = s->cwnd_q32 * tp->mss_cache;
		sk->sk_pacing_rate = mul_div(bytes >> 10, 244140625, s->srtt_ps << 10);
	}
}

static __always_inline __u64 now_ps(void)
{
	return bpf_ktime_get_ns() * 1000;
}

SEC("struct_ops/swift_init")
void BPF_PROG(swift_init, struct sock *sk)
{
	struct swift *s = inet_csk_ca(sk);
	s->cwnd_q32 = initial_cwnd_q32;
	s->t_last_decrease_ps = 0;
	s->srtt_ps = 0;
	s->last_rtt_ps = 0;
	s->retransmit_cnt = 0;
	sk->sk_pacing_status = SK_PACING_NEEDED;
	apply(sk, s);
	log_event(sk, bpf_ktime_get_ns(), EV_INIT, 0, -1, 0, s->cwnd_q32, 0, 0);
}

/* Algorithm 1 lines 2–14 on one ACK with an RTT sample. */
SEC("struct_ops/swift_acked")
void BPF_PROG(swift_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct swift *s = inet_csk_ca(sk);
	if (sample->rtt_us <= 0) {
		/* Every ACK resets the count (line 2); logged when it was not zero already. */
		if (s->retransmit_cnt) {
			s->retransmit_cnt = 0;
			log_event(sk, bpf_ktime_get_ns(), EV_ACK, 0, -1, sample->pkts_acked, s->cwnd_q32, s->srtt_ps, s->t_last_decrease_ps);
		}
		return;
	}
	s->retransmit_cnt = 0;
	__u64 now = now_ps();
	__u64 rtt = (__u64)sample->rtt_us * 1000000;
	s->last_rtt_ps = rtt;
	s->srtt_ps = s->srtt_ps ? mul_div(rtt_smoothing_q16, s->srtt_ps, ONE) + mul_div(ONE - rtt_smoothing_q16, rtt, ONE) : rtt;
	__u64 num_acked = sample->pkts_acked ? sample->pkts_acked : 1;
	__u64 prev = s->cwnd_q32;
	__u64 target = target_ps(s->cwnd_q32);
	if (rtt < target) {
		if (s->cwnd_q32 >= 1ULL << 32)
			/* ai·n/cwnd = ai_q16·n·2^48/cwnd_q32, the divisor cut to 2^16 (≥ 2^16 here). */
			s->cwnd_q32 += ((ai_q16 * num_acked) << 32) / (s->cwnd_q32 >> 16);
		else
			s->cwnd_q32 += (ai_q16 * num_acked) << 16;
	} else if (now - s->t_last_decrease_ps >= guard(s)) {
		/* max(1 − β·(rtt − target)/rtt, 1 − max_mdf). */
		__u64 cut = mul_div(beta_q16, rtt - target, rtt);
		s->cwnd_q32 = mul_div(s->cwnd_q32, ONE - (cut > max_mdf_q16 ? max_mdf_q16 : cut), ONE);
	}
	bound(s, prev, now);
	apply(sk, s);
	log_event(sk, now / 1000, EV_ACK, 0, sample->rtt_us, num_acked, s->cwnd_q32, s->srtt_ps, s->t_last_decrease_ps);
}

/* Lines 15–24: a timeout counts towards the reset; fast recovery decreases by max_mdf. */
SEC("struct_ops/swift_set_state")
void BPF_PROG(swift_set_state, struct sock *sk, __u8 new_state)
{
	struct swift *s = inet_csk_ca(sk);
	if (new_state != TCP_CA_Loss && new_state != TCP_CA_Recovery)
		return;
	__u64 now = now_ps();
	__u64 prev = s->cwnd_q32;
	int reset = 0;
	if (new_state == TCP_CA_Loss) {
		s->retransmit_cnt++;
		reset = s->retransmit_cnt >= retx_reset_threshold;
	} else {
		s->retransmit_cnt = 0;
	}
	if (reset)
		s->cwnd_q32 = min_cwnd_q32;
	else if (now - s->t_last_decrease_ps >= guard(s))
		s->cwnd_q32 = mul_div(s->cwnd_q32, ONE - max_mdf_q16, ONE);
	bound(s, prev, now);
	apply(sk, s);
	log_event(sk, now / 1000, new_state == TCP_CA_Loss ? EV_TIMEOUT : EV_LOSS, s->retransmit_cnt, -1, 0, s->cwnd_q32, s->srtt_ps, s->t_last_decrease_ps);
}

/* The rate and the window are the controller's alone: nothing of the kernel's own growth or
 * reduction. */
#include "own_window.h"

SEC(".struct_ops")
struct tcp_congestion_ops rttlab_swift = {
	.init = (void *)swift_init,
	.pkts_acked = (void *)swift_acked,
	.set_state = (void *)swift_set_state,
	.cong_control = (void *)own_cong_control,
	.ssthresh = (void *)own_ssthresh,
	.undo_cwnd = (void *)own_undo_cwnd,
	.name = "rttlab_swift",
};
