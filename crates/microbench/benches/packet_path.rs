//! The per-packet path, whole: the time to move one data packet from its sender through the
//! fabric to its receiver and back as an ACK, measured on short runs and reported per data
//! packet. Two paths: the message transport through one switch (TIMELY's testbed, PFC), and
//! five switches of a fat-tree (the first 200 µs of the `fat-incast-100g` benchmark).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rttlab_sim::{Network, Scenario};

const STAR: &str = r#"
name = "two-hosts"
duration = "1ms"
[topology]
kind = "star"
hosts = 2
link_rate = "100Gbps"
link_delay = "1us"
[nic]
mtu = "1064B"
[[flows]]
src = 1
dst = 0
"#;

fn path(c: &mut Criterion) {
    let mut g = c.benchmark_group("packet_path");
    let incast = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fat-incast-100g.toml")).expect("shipped scenario");
    for (name, toml, duration) in [("star_1_switch", STAR, "1ms"), ("fat_tree_5_switches", incast.as_str(), "200us")] {
        let mut s = Scenario::from_toml(toml).expect("valid scenario");
        s.duration = duration.parse().expect("duration");
        let mut probe = Network::new(&s).expect("network");
        probe.run();
        g.throughput(Throughput::Elements(probe.data_packets_sent()));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut net = Network::new(&s).expect("network");
                net.run();
                net.events_processed()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, path);
criterion_main!(benches);
