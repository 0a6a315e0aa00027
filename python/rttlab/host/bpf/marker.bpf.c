/* The switch's ECN marking at the testbed's bottleneck (docs/host.md): the kernel has no RED
 * here, and a tc program runs before the qdisc, where the queue cannot be read. So the marker
 * keeps the queue itself: a virtual copy of the egress `tbf`, drained at its rate and bounded
 * by its limit, and marks CE (`bpf_skb_ecn_set_ce`) on an ECN-capable packet that finds more
 * than `k_bytes` in it (step marking, `[switch.ecn] k`, as DCTCP's switches). The queue it
 * saw goes to the ring buffer with every packet, for the queue over time. */
#include "rttlab.h"

const volatile __u64 rate_bps = 1000000000;
const volatile __u64 limit_bytes = 1 << 20;
const volatile __u64 k_bytes = 1ULL << 62;

/* The virtual queue, under a lock: packets reach the port from every core. */
struct vqueue {
	struct bpf_spin_lock lock;
	__u64 bytes;
	__u64 last_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vqueue);
} vqueue SEC(".maps");

/* Packets seen, marked, and those the virtual queue had no room for (tbf drops them), a burst
 * counted as its packets. */
__u64 packets = 0;
__u64 marks = 0;
__u64 overflows = 0;

#define TC_ACT_OK 0

SEC("tc")
int mark(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct vqueue *q = bpf_map_lookup_elem(&vqueue, &zero);
	if (!q)
		return TC_ACT_OK;
	__u64 now = bpf_ktime_get_ns();
	__u16 flags = 0;
	__u64 len = skb->len, queue;
	bpf_spin_lock(&q->lock);
	__u64 gap = q->last_ns && now > q->last_ns ? now - q->last_ns : 0;
	/* (A gap over a second empties any queue the testbed has; the product would overflow.) */
	__u64 drained = gap > 1000000000ULL ? ~0ULL : mul_div(gap, rate_bps, 8000000000ULL);
	q->last_ns = now;
	q->bytes = q->bytes > drained ? q->bytes - drained : 0;
	if (q->bytes + len > limit_bytes) {
		flags = 2;
	} else {
		flags = q->bytes > k_bytes;
		q->bytes += len;
	}
	queue = q->bytes;
	bpf_spin_unlock(&q->lock);
	/* A TSO/GSO burst counts as the packets it carries, marked or not together. */
	__u64 segs = skb->gso_segs ? skb->gso_segs : 1;
	__sync_fetch_and_add(&packets, segs);
	if (flags == 2)
		__sync_fetch_and_add(&overflows, segs);
	else if (flags == 1 && bpf_skb_ecn_set_ce(skb))
		__sync_fetch_and_add(&marks, segs);
	else
		flags = 0;
	struct rttlab_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost_events, 1);
		return TC_ACT_OK;
	}
	e->t_ns = now;
	e->port = skb->ifindex;
	e->kind = EV_ACK;
	e->flags = flags;
	e->rtt_us = -1;
	e->acked = skb->len;
	e->value = queue;
	e->aux = 0;
	e->aux2 = 0;
	bpf_ringbuf_submit(e, 0);
	return TC_ACT_OK;
}
