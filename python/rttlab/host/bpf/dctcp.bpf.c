/* DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as TCP congestion control, after
 * crates/cc/src/dctcp.rs:
 * - once per window of data (when snd_una passes the snd_nxt of the last update),
 *   `α ← (1 − g)·α + g·F`, F the fraction of packets delivered in it that carried CE
 *   (the kernel's `delivered` and `delivered_ce` counters);
 * - on ECN-Echo the kernel enters CWR with `ssthresh = max(cwnd·(1 − α/2), min_cwnd)`; on loss
 *   `ssthresh = max(cwnd/2, 2)` (Linux's `dctcp_react_to_loss`); growth is Reno's (the kernel's
 *   own `tcp_reno_cong_avoid`).
 * - As a receiver it echoes CE exactly (RFC 8257 §3.2): an ACK goes out at once when the CE
 *   state of arriving packets changes while an ACK is delayed.
 * The window reductions run through the kernel's CWR and recovery (proportional rate
 * reduction over a round trip), where crates/cc cuts at once: docs/host.md.
 *
 * Fixed point: α in Q16 (docs/host.md, "Fixed point"). */
#include "rttlab.h"

const volatile __u64 g_q16 = 4096;           /* 1/16 */
const volatile __u64 initial_alpha_q16 = 1 << 16;
const volatile __u64 init_cwnd = 10;
const volatile __u64 min_cwnd = 2;

#define ICSK_ACK_TIMER 2

struct dctcp {
	__u64 alpha_q16;
	__u32 window_end;    /* snd_nxt at the last update of α */
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 ce_state;      /* receiver: the last packet carried CE */
	__u32 loss_cwnd;
};

static __always_inline void reset_window(struct tcp_sock *tp, struct dctcp *s)
{
	s->window_end = tp->snd_nxt;
	s->old_delivered = tp->delivered;
	s->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops/dctcp_init")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *s = inet_csk_ca(sk);
	s->alpha_q16 = initial_alpha_q16;
	s->prior_rcv_nxt = tp->rcv_nxt;
	s->ce_state = 0;
	s->loss_cwnd = 0;
	reset_window(tp, s);
	tp->snd_cwnd = init_cwnd;
	log_event(sk, bpf_ktime_get_ns(), EV_INIT, 0, -1, 0, tp->snd_cwnd, s->alpha_q16, 0);
}

/* α once per window of data. */
SEC("struct_ops/dctcp_in_ack_event")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *s = inet_csk_ca(sk);
	if ((__s32)(tp->snd_una - s->window_end) < 0)
		return;
	__u32 delivered = tp->delivered - s->old_delivered;
	__u32 ce = tp->delivered_ce - s->old_delivered_ce;
	if (delivered) {
		/* (1 − g)·α + g·ce/delivered, each product rounded to nearest. */
		s->alpha_q16 = mul_div(ONE - g_q16, s->alpha_q16, ONE) + mul_div(g_q16, (__u64)ce << Q, (__u64)delivered << Q);
		log_event(sk, bpf_ktime_get_ns(), EV_ACK, ce > 0xffff ? 0xffff : ce, -1, delivered, tp->snd_cwnd, s->alpha_q16, ce);
	}
	reset_window(tp, s);
}

/* Every RTT sample, with the window and α it found (EV_RTT), for the RTT distribution. */
SEC("struct_ops/dctcp_acked")
void BPF_PROG(dctcp_acked, struct sock *sk, const struct ack_sample *sample)
{
	if (sample->rtt_us > 0)
		log_event(sk, bpf_ktime_get_ns(), EV_RTT, 0, sample->rtt_us, sample->pkts_acked, tcp_sk(sk)->snd_cwnd, ((struct dctcp *)inet_csk_ca(sk))->alpha_q16, 0);
}

SEC("struct_ops/dctcp_ssthresh")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *s = inet_csk_ca(sk);
	__u64 cwnd = tp->snd_cwnd;
	s->loss_cwnd = cwnd;
	__u64 cut = cwnd - mul_div(cwnd, s->alpha_q16, 2 * ONE);
	return cut > min_cwnd ? cut : min_cwnd;
}

/* Loss: half the window (Linux's dctcp_react_to_loss), logged. */
SEC("struct_ops/dctcp_set_state")
void BPF_PROG(dctcp_set_state, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	if (new_state != TCP_CA_Recovery && new_state != TCP_CA_Loss)
		return;
	__u32 half = tp->snd_cwnd / 2;
	tp->snd_ssthresh = half > 2 ? half : 2;
	log_event(sk, bpf_ktime_get_ns(), new_state == TCP_CA_Loss ? EV_TIMEOUT : EV_LOSS, 0, -1, 0, tp->snd_cwnd, ((struct dctcp *)inet_csk_ca(sk))->alpha_q16, 0);
}

/* The receiver's exact CE echo (RFC 8257 §3.2, as Linux's dctcp_ece_ack_update): when the CE
 * state flips with an ACK pending, acknowledge what came before in the old state at once. */
static __always_inline void ce_state_is(struct sock *sk, __u32 ce)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *s = inet_csk_ca(sk);
	if (s->ce_state != ce) {
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER)
			bpf_tcp_send_ack(tp, s->prior_rcv_nxt);
		s->ce_state = ce;
	}
	s->prior_rcv_nxt = tp->rcv_nxt;
	if (ce)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

SEC("struct_ops/dctcp_cwnd_event")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_ECN_IS_CE)
		ce_state_is(sk, 1);
	else if (ev == CA_EVENT_ECN_NO_CE)
		ce_state_is(sk, 0);
}

SEC("struct_ops/dctcp_cong_avoid")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/dctcp_undo_cwnd")
__u32 BPF_PROG(dctcp_undo_cwnd, struct sock *sk)
{
	struct dctcp *s = inet_csk_ca(sk);
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;
	return cwnd > s->loss_cwnd ? cwnd : s->loss_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops rttlab_dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_in_ack_event,
	.pkts_acked = (void *)dctcp_acked,
	.ssthresh = (void *)dctcp_ssthresh,
	.set_state = (void *)dctcp_set_state,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_undo_cwnd,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "rttlab_dctcp",
};
