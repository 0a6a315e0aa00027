//! The window transport and DCTCP against hand-computed cases and DCTCP's analysis.

use crate::common::{run_net, window_pair};
use rttlab_cc::Time;

/// One 1000 B packet from h1 to h0 over two 10 Gbps, 1 µs hops, and its ACK back. The kernel
/// RTT (RFC 7323) is ACK arrival minus the packet's send time, serialization included.
/// With delayed ACKs the lone packet waits `delayed_ack_timeout` for its ACK.
#[test]
fn one_packet_rtt_by_hand_with_and_without_delayed_ack() {
    let toml = |delayed: bool| {
        window_pair(&format!(
            r#"
            delayed_ack = {delayed}
            delayed_ack_timeout = "40us"
            [cc]
            algorithm = "dctcp"
            [[flows]]
            src = 1
            dst = 0
            size = "1000B"
            "#
        ))
    };
    let data = 2 * (1064 * 800 + 1_000_000); // 1064 B at 10 Gbps is 851 200 ps, per hop
    let ack = 2 * (64 * 800 + 1_000_000);
    for (delayed, hold) in [(false, 0), (true, 40_000_000)] {
        let net = run_net(&toml(delayed));
        let f = &net.flows()[0];
        assert_eq!(f.stats.finish, Some(Time(data)));
        assert_eq!(f.stats.rtt_samples, 1);
        assert_eq!(f.stats.rtt_sum, (data + hold + ack) as u128, "delayed_ack = {delayed}");
        assert_eq!(f.stats.retransmits, 0);
    }
}

/// DCTCP's analysis (Alizadeh et al. §3.3; shared reference algorithms.md §9.4) for N long
/// flows on one 10 Gbps bottleneck with K = 65 packets > C·RTT/7: full throughput, the queue
/// oscillates around K with its maximum near K + N, and the marked fraction is of the order of
/// √(2/W*), W* = (C·RTT + K)/N. Marking at enqueue as in the paper's model.
///
/// The analysis assumes α constant over a sawtooth; with g = 1/16 it decays between marking
/// episodes, so the first cut is too small to end the episode and a second cut follows a
/// window later. Measured, the marked fraction sits near √(1/W*) (two cuts per cycle halve the
/// cycle), hence the band from √(1/W*) to √(2/W*).
#[test]
fn dctcp_queue_and_alpha_follow_the_analysis() {
    for n in [2u32, 4] {
        let net = run_net(&format!(
            r#"
            duration = "60ms"
            warmup = "20ms"
            [topology]
            kind = "star"
            hosts = {hosts}
            link_rate = "10Gbps"
            link_delay = "10us"
            [switch]
            pfc = false
            [switch.ecn]
            k = "97500B"
            mark_at = "enqueue"
            [transport]
            kind = "window"
            delayed_ack = false
            [cc]
            algorithm = "dctcp"
            [[flows]]
            src = "1-{n}"
            dst = 0
            [measure]
            queue_interval = "100ns"
            "#,
            hosts = n + 1
        ));
        let s = net.summary();
        let pkt = 1500.0;
        let k = 65.0;
        // Unloaded RTT: 1500 B and 64 B each over two 10 Gbps hops, four 10 µs propagations.
        let base_rtt = 2.0 * (1.2e-6 + 0.0512e-6) + 40e-6;
        let bdp = 10e9 * base_rtt / 8.0 / pkt;
        assert!(k > bdp / 7.0);
        let w_star = (bdp + k) / n as f64;
        let amplitude = 0.5 * (2.0 * n as f64 * (bdp + k)).sqrt();
        assert!(s.throughput_gbps > 9.99, "N={n}: {}", s.throughput_gbps);
        let q_max = s.queue_max_kb.unwrap() * 1e3 / pkt;
        let q_avg = s.queue_avg_kb.unwrap() * 1e3 / pkt;
        assert!(q_max >= k && q_max <= k + n as f64 + 3.0, "N={n}: max {q_max} vs K + N = {}", k + n as f64);
        assert!((q_avg - k).abs() <= amplitude, "N={n}: avg {q_avg} vs K {k} ± {amplitude}");
        let packets = s.throughput_gbps * 1e9 * s.measured_s / 8.0 / pkt;
        let marked = s.ecn_marks as f64 / packets;
        let (lo, hi) = ((1.0 / w_star).sqrt(), (2.0 / w_star).sqrt());
        assert!(marked > 0.85 * lo && marked < 1.1 * hi, "N={n}: marked {marked}, √(1/W*) {lo}, √(2/W*) {hi}");
        assert_eq!((s.drops, s.retransmits), (0, 0));
    }
}

/// 40 sized DCTCP-less (Reno) connections into a 100 KB tail-drop buffer: packets are lost and
/// recovered by fast retransmit and timeouts; every byte is delivered exactly once to the
/// application, and the payload put on the wire is accounted for as delivered, delivered
/// again (spurious retransmissions), dropped, or still in flight. Losses and timers replay
/// identically.
#[test]
fn drop_tail_losses_are_recovered_and_bytes_conserved() {
    let toml = r#"
        duration = "400ms"
        [topology]
        kind = "star"
        hosts = 11
        link_rate = "10Gbps"
        link_delay = "1us"
        [[topology.host_links]]
        host = 0
        rate = "20Gbps"
        [switch]
        buffer = "100KB"
        pfc = false
        [transport]
        kind = "window"
        [cc]
        algorithm = "reno"
        [[flows]]
        src = "1-10"
        dst = 0
        connections = 4
        size = "1MB"
        start_jitter = "20us"
        "#;
    let net = run_net(toml);
    let s = net.summary();
    assert_eq!(run_net(toml).summary(), s, "same scenario and seed, same result");
    assert!(s.drops > 100, "the buffer must overflow: {} drops", s.drops);
    assert!(s.retransmits >= s.drops / 2, "{} retransmits for {} drops", s.retransmits, s.drops);
    assert_eq!(s.flows_finished, 40);
    for f in net.flows() {
        assert_eq!(f.stats.delivered_bytes, 1_000_000);
    }
    assert_eq!(s.bytes_sent, s.bytes_delivered + s.bytes_duplicate + s.bytes_dropped + s.bytes_in_flight);
}

/// With 40 DCTCP connections on a 20 Gbps bottleneck and K = 80 KB, W* = (C·RTT + K)/N is
/// below DCTCP's 2-packet floor: every window sits at 2 packets, so the queue holds the 80
/// packets in flight less the pipe's bandwidth-delay product, every packet is marked, and
/// nothing is lost. Computed by hand: packets in flight = 40 · 2 = 80 (1500 B each on the
/// wire); the unloaded RTT is about 5 µs, ≈ 8 packets at 20 Gbps; so the queue is ≈ 72 packets
/// ≈ 108 KB, RTT ≈ 48 µs. The preset's server on one 20 Gbps link, not its two bonded ports
/// (whose unequal shares of the connections leave some windows above the floor).
#[test]
fn dctcp_incast_below_the_window_floor() {
    let preset = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/timely-testbed-dctcp.toml")).unwrap();
    let toml = preset
        .replace("duration = \"250ms\"", "duration = \"30ms\"")
        .replace("warmup = \"50ms\"", "warmup = \"10ms\"")
        .replace("rate = \"10Gbps\"\nports = 2", "rate = \"20Gbps\"");
    assert!(!toml.contains("ports = 2"), "the preset's bond is written as this test expects");
    let net = run_net(&toml);
    let s = net.summary();
    for f in net.flows() {
        assert_eq!(f.cc_metrics().cwnd_bytes, Some(2 * 1436));
    }
    let q = s.queue_avg_kb.unwrap();
    assert!((100.0..=110.0).contains(&q), "queue {q} KB");
    let rtt = s.rtt_avg_us.unwrap();
    assert!((44.0..=52.0).contains(&rtt), "RTT {rtt} µs");
    assert!(s.throughput_gbps > 19.9);
    assert_eq!(s.drops, 0);
}

/// TCP Vegas (Brakmo & Peterson; algorithms.md §8) on `scenarios/vegas-dumbbell.toml`: two flows
/// into one 10 Gbps link. Each keeps between α = 1 and β = 3 packets queued, so the bottleneck
/// queue settles between 2 and 6 packets (1500 B each on the wire) with the link full and the
/// two flows at equal rates.
#[test]
fn vegas_keeps_alpha_to_beta_packets_queued_per_flow() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/vegas-dumbbell.toml")).expect("preset");
    let net = run_net(&text);
    let s = net.summary();
    let queue_pkts = s.queue_avg_kb.expect("bottleneck queue sampled") * 1e3 / 1500.0;
    assert!((2.0..=6.0).contains(&queue_pkts), "queue {queue_pkts:.2} packets");
    assert!(s.throughput_gbps > 9.5, "{} Gbps", s.throughput_gbps);
    assert!(s.jain > 0.99, "Jain {}", s.jain);
    assert_eq!(s.drops, 0);
}
