/* The RTT and window of a connection under one of Linux's own controllers (`cc.algorithm =
 * "linux"`: reno, cubic, bbr), which log nothing themselves: at every segment a connection to
 * the testbed's receiving port takes in (the `tcp_probe` tracepoint, before the segment is
 * processed), its smoothed RTT and window go to the ring buffer as an RTT record. */
#include "rttlab.h"

/* The receivers' port: only the senders' connections are observed. */
const volatile __u64 port = 5001;

SEC("tp_btf/tcp_probe")
int BPF_PROG(observe, struct sock *sk, const struct sk_buff *skb)
{
	if (bpf_ntohs(sk->__sk_common.skc_dport) != port)
		return 0;
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	__u32 srtt_us = tp->srtt_us >> 3;
	if (srtt_us)
		log_event(sk, bpf_ktime_get_ns(), EV_RTT, 0, srtt_us, 0, tp->snd_cwnd, 0, 0);
	return 0;
}
