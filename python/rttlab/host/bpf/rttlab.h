/* rttlab's congestion controllers as Linux TCP congestion control (BPF struct_ops): what every
 * controller shares. The algorithms are those of crates/cc, in fixed point (BPF has no floating
 * point); docs/host.md states each rule's fixed-point form and its error bound.
 *
 * Parameters are read-only globals (`const volatile`) that the loader (host/loader.c) sets by
 * name before the object is loaded. Every decision goes to the ring buffer `events` as one
 * `struct rttlab_event`, which the replay (rttlab.host.replay) feeds through crates/cc. */
#ifndef RTTLAB_H
#define RTTLAB_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

/* Fixed-point scale of weights and factors: Q16. */
#define Q 16
#define ONE (1ULL << Q)

/* Values the kernel headers define as macros (BTF has no macros). */
#define TCP_CONG_NEEDS_ECN 0x2
#define TCP_ECN_DEMAND_CWR 4

/* What one logged record holds (56 bytes, little endian). Its one definition is FIELDS in
 * rttlab/host/logs.py: this struct, its comments and the kinds below are checked against it
 * (tests/test_host_schema.py), and so are the Python decoder and the Rust replay. */
struct rttlab_event {
	__u64 t_ns;	/* when, ns: bpf_ktime_get_ns() as it was logged (CLOCK_MONOTONIC) */
	__u32 port;	/* the connection: its local port, and its remote port << 16 (the marker: the ifindex) */
	__u16 kind;	/* EV_* */
	__u16 flags;	/* TIMELY's HAI count (at EV_INIT: 1 for Patched TIMELY), Swift's retransmit count, DCTCP's CE-marked packets; the marker: 1 marked, 2 no room (tbf drops it) */
	__s64 rtt_us;	/* the RTT sample, µs (-1: none) */
	__u64 acked;	/* what the ACK acknowledges: bytes (TIMELY), packets (Swift, DCTCP); the marker: the packet's bytes */
	__u64 value;	/* the decision: TIMELY's rate in bit/s, Swift's fabric window in packets·2^32, snd_cwnd in packets (DCTCP, the observer); the marker: the queue's bytes */
	__s64 aux;	/* more state: TIMELY's gradient EWMA (ps), Swift's smoothed RTT (ps), DCTCP's α·2^16 */
	__u64 aux2;	/* more state: Swift's last decrease (ps), DCTCP's CE-marked packets */
};
_Static_assert(sizeof(struct rttlab_event) == 56, "struct rttlab_event is 56 bytes, as logs.FIELDS says");

/* What a record is: a connection's start, a decision on an ACK, a loss (fast recovery), a
 * retransmission timeout, an RTT sample alone. */
enum { EV_INIT = 0, EV_ACK = 1, EV_LOSS = 2, EV_TIMEOUT = 3, EV_RTT = 4 };

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

/* Events the ring buffer had no room for (the reader was too slow): reported with the run. */
__u64 lost_events = 0;

static __always_inline void log_event(struct sock *sk, __u64 t_ns, __u16 kind, __u16 flags, __s64 rtt_us, __u64 acked, __u64 value, __s64 aux, __u64 aux2)
{
	struct rttlab_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost_events, 1);
		return;
	}
	e->t_ns = t_ns;
	e->port = sk->__sk_common.skc_num | (__u32)bpf_ntohs(sk->__sk_common.skc_dport) << 16;
	e->kind = kind;
	e->flags = flags;
	e->rtt_us = rtt_us;
	e->acked = acked;
	e->value = value;
	e->aux = aux;
	e->aux2 = aux2;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* `a·b/c` rounded to nearest, for non-negative operands whose product fits in 64 bits. */
static __always_inline __u64 mul_div(__u64 a, __u64 b, __u64 c)
{
	return (a * b + c / 2) / c;
}

/* Signed division rounded to nearest (BPF's signed division rounds toward zero; clang lowers
 * it only with -mcpu=v4, so it is done on magnitudes). */
static __always_inline __s64 sdiv_round(__s64 a, __u64 c)
{
	__u64 m = a < 0 ? -a : a;
	__s64 q = (m + c / 2) / c;
	return a < 0 ? -q : q;
}

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

#endif
