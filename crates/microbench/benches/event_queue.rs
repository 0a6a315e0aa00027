//! The event queue under the classic "hold" model: with `n` events pending, pop the earliest
//! and push one a random gap later, so the queue stays at `n`. A switch fabric keeps about two
//! events per busy link pending (a transmit completion and an arrival), so `n` from a few
//! hundred (a testbed) to tens of thousands (a loaded fat-tree) is the range that matters.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rttlab_cc::Time;
use rttlab_sim::core::engine::{EventKind, EventQueue};
use rttlab_sim::core::ids::{PktId, PortId};
use std::hint::black_box;

/// Gaps like a fabric's: serialization times of 1 KB at 100 Gbps (80 ns) up to link delays.
fn gap(x: &mut u64) -> Time {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    Time(80_000 + *x % 2_000_000)
}

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    for n in [256u32, 4096, 65_536] {
        let mut q = EventQueue::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..n {
            q.push(gap(&mut x), EventKind::Arrive { port: PortId(i), pkt: PktId(0) });
        }
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                let e = q.pop_until(Time::MAX).expect("n events pending");
                q.push(e.time + gap(&mut x), e.kind);
                black_box(e.time)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
