//! Ultra Ethernet's congestion control. NSCC (`cc.algorithm = "nscc"`) on the window transport:
//! two senders into one 10 Gbps port share it fully and fairly, and no window passes 1.5 times its
//! BDP. Receiver credits (`transport.congestion = "rccc"`): an incast is paced by the receiver's
//! pulls, its queue bounded by the speculative credit.

use crate::common::{cell, run_net};

#[test]
fn two_senders_share_a_port_fully_fairly_and_within_their_window_bound() {
    let net = run_net(
        r#"
        duration = "10ms"
        warmup = "2ms"
        [topology]
        kind = "star"
        hosts = 3
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        pfc = false
        [switch.ecn]
        kmin = "10KB"
        kmax = "40KB"
        pmax = 1.0
        [nic]
        mtu = "4160B"
        header = "64B"
        ack = "64B"
        [transport]
        kind = "window"
        [cc]
        algorithm = "nscc"
        [[flows]]
        src = "1-2"
        dst = 0
        "#,
    );
    let s = net.summary();
    assert!(s.goodput_gbps > 9.0, "the port is used: {} Gbps of 10 (less headers: 9.85)", s.goodput_gbps);
    assert!(s.jain > 0.99, "Jain {}", s.jain);
    // The unloaded RTT: a 4160 B packet's two serializations (3.328 µs each), a 64 B ACK's
    // two (51.2 ns each) and four link delays: 10.76 µs, whose BDP at 10 Gbps is 13 450 B.
    for f in net.flows() {
        let cwnd = f.cc_metrics().cwnd_bytes.expect("a window");
        assert!(cwnd <= 13_450 * 3 / 2, "cwnd {cwnd}");
    }
}

/// Receiver credits alone at 100 Gbps on a star, 1 µs links, 4150 B packets of 4086 B payload.
/// A pull grants 64 quanta (16 384 B) and holds the pacer 64 × 20 686 ps: credit flows at 16 384
/// B per 1.323904 µs, 99.003 Gbps. Each sender starts with a credit window of 1.5 BDP (the
/// unloaded RTT: two 4150 B serializations, 332 ns each, two 64 B ACKs', 5.12 ns each, and four
/// links, 4.67424 µs; 87 642 B).
fn credits_scenario(senders: &str, size: &str) -> String {
    format!(
        r#"
        duration = "5ms"
        until = "flows_done"
        [topology]
        kind = "star"
        hosts = 9
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        pfc = false
        queue_limit = "4MB"
        [nic]
        mtu = "4150B"
        header = "64B"
        ack = "64B"
        [transport]
        kind = "uet"
        congestion = "rccc"
        [cc]
        algorithm = "nscc"
        [[flows]]
        src = "{senders}"
        dst = 0
        size = "{size}"
        "#
    )
}

/// One sender of 20 MB: after its speculative credit it sends what the pulls grant, so its
/// 4895 packets (20 313 280 B on the wire) take 1641.3 µs at 99.003 Gbps where the line rate
/// would take 1625.1 µs.
#[test]
fn receiver_credits_pace_a_sender_at_the_pull_rate() {
    let s = run_net(&credits_scenario("1-1", "20MB")).summary();
    let last = s.measured_s * 1e6;
    assert!((1641.3..1646.0).contains(&last), "the last byte at {last} µs, by hand 1641.3 plus a round trip at most");
}

/// Eight senders of 2 MB: their speculative credits (701 136 B) reach the receiver's downlink
/// at once, and pulls at 99 % of its rate never drain the queue they leave, so the link is busy
/// from the first packet's arrival (1.332 µs) to the last, 16 250 880 B later (1300.07 µs),
/// and the last byte lands 1 µs after it leaves (1302.40 µs; the run ends at the next 1 µs
/// cell). The queue never holds more than the speculative credit; nothing is dropped.
#[test]
fn receiver_credits_bound_an_incasts_queue_by_the_speculative_credit() {
    let net = run_net(&credits_scenario("1-8", "2MB"));
    let s = net.summary();
    assert_eq!((s.drops, s.trims), (0, 0));
    assert!((s.measured_s * 1e6 - 1303.0).abs() < 1e-3, "ended at {} µs", s.measured_s * 1e6);
    let queue_max = cell(&net, "ports", &[("port", "s0-h0"), ("class", "1")], "queue_max_kb") * 1e3;
    assert!(queue_max <= 701_136.0, "the receiver's downlink held {queue_max} B, more than the speculative credit");
}
