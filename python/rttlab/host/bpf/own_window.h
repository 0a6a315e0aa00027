/* For a controller that sets the window (and the pacing rate) itself on every ACK, from its own
 * state (`cong_control`): the kernel's loss response leaves the window as it is. Included by
 * the controllers that do (TIMELY, Swift), each of which defines `apply(sk, state)`. */
#ifndef RTTLAB_OWN_WINDOW_H
#define RTTLAB_OWN_WINDOW_H

SEC("struct_ops/own_cong_control")
void BPF_PROG(own_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	apply(sk, inet_csk_ca(sk));
}

SEC("struct_ops/own_ssthresh")
__u32 BPF_PROG(own_ssthresh, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

SEC("struct_ops/own_undo_cwnd")
__u32 BPF_PROG(own_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

#endif
