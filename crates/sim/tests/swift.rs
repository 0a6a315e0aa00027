//! The host model (NIC Rx queue and processing), Swift's delay decomposition and its pacing below
//! one packet, against hand-computed cases.

use crate::common::{run_net, scenario, window_pair as pair};
use rttlab_cc::Time;
use rttlab_sim::Network;

/// One 1000 B packet and its ACK through hosts that take 300 ns per packet plus 1000 B at
/// 10 Gbps (800 ns): the receiver delivers it 1.1 µs after it lands, the ACK leaves then, and the
/// sender's stack takes 300 ns more for the ACK. The RTT is the unloaded one plus 1.4 µs.
#[test]
fn host_processing_adds_its_time_to_delivery_and_rtt() {
    let net = run_net(&pair(
        r#"
        [cc]
        algorithm = "swift"
        [host]
        rx_packet_time = "300ns"
        rx_copy_rate = "10Gbps"
        [[flows]]
        src = 1
        dst = 0
        size = "1000B"
        "#,
    ));
    let data = 2 * (1064 * 800 + 1_000_000);
    let ack = 2 * (64 * 800 + 1_000_000);
    let f = &net.flows()[0];
    assert_eq!(f.stats.finish, Some(Time(data + 1_100_000)));
    assert_eq!(f.stats.rtt_sum, (data + 1_100_000 + ack + 300_000) as u128);
    assert_eq!(net.hosts().iter().map(|h| h.rx_drops).sum::<u64>(), 0);
}

/// 64 B writes from 8 flows: a host that takes 500 ns a packet processes 2 M packets/s,
/// 1.024 Gbps of payload, far below the 10 Gbps link (9.8 M packets/s of 128 B). Swift's
/// endpoint window keeps the host busy without overflowing its Rx queue, and is the limit.
#[test]
fn small_writes_saturate_the_host_before_the_link() {
    let net = run_net(&pair(
        r#"
        [cc]
        algorithm = "swift"
        [host]
        rx_packet_time = "500ns"
        [[flows]]
        src = 1
        dst = 0
        connections = 8
        write = "64B"
        "#,
    ));
    let s = net.summary();
    assert!((s.goodput_gbps / 1.024 - 1.0).abs() < 0.01, "goodput {} Gbps", s.goodput_gbps);
    assert_eq!(s.host_drops, 0);
    for f in net.flows() {
        let m = f.cc_metrics();
        let (fcwnd, ecwnd) = (m.fcwnd_pkts.expect("Swift"), m.ecwnd_pkts.expect("Swift"));
        assert!(ecwnd < fcwnd, "endpoint-limited: ecwnd {ecwnd} fcwnd {fcwnd}");
    }
}

/// A controller that ignores the host (DCTCP) overruns a 100-packet Rx queue: drops at the
/// host, recovered by retransmission, and every byte accounted for.
#[test]
fn a_full_rx_queue_drops_and_bytes_are_conserved() {
    let net = run_net(&pair(
        r#"
        delayed_ack = false
        [cc]
        algorithm = "dctcp"
        [host]
        rx_packet_time = "500ns"
        rx_queue_packets = 100
        [[flows]]
        src = 1
        dst = 0
        size = "500KB"
        write = "64B"
        "#,
    ));
    let s = net.summary();
    assert!(s.host_drops > 0);
    assert!(s.retransmits > 0);
    assert_eq!(s.bytes_delivered, 500_000, "the flow completes");
    assert_eq!(s.bytes_sent, s.bytes_delivered + s.bytes_duplicate + s.bytes_dropped + s.bytes_in_flight);
}

/// One Swift connection with its window pinned at one packet, and `nic` added to `[nic]`.
fn one_in_flight(nic: &str) -> Network {
    let flow = r#"
        [cc]
        algorithm = "swift"
        min_cwnd = 1.0
        max_cwnd = 1.0
        [[flows]]
        src = 1
        dst = 0
        "#;
    run_net(&pair(flow).replace("[nic]", &format!("[nic]\n{nic}")))
}

/// `nic.rtt_noise` reaches the window transport's samples. With one packet in flight (Swift's
/// window pinned at 1) every sample is the unloaded 6.5024 µs (below) without noise; with 10 µs
/// of noise each lies in [6.5024, 16.5024] µs and they average 11.5 µs (standard error 0.1 µs
/// for about 870 samples), while the packets keep their timing (one per ACK).
#[test]
fn rtt_noise_is_added_to_window_transport_samples() {
    let quiet = one_in_flight("rtt_noise = \"0us\"");
    let f = &quiet.flows()[0].stats;
    assert_eq!(f.rtt_sum, f.rtt_samples as u128 * 6_502_400);
    let noisy = one_in_flight("rtt_noise = \"10us\"");
    let n = &noisy.flows()[0].stats;
    let mean_us = n.rtt_sum as f64 / n.rtt_samples as f64 / 1e6;
    assert!((mean_us - 11.5024).abs() < 0.5, "mean {mean_us} µs");
    let s = noisy.summary();
    let (lo, hi) = (s.rtt_min_us.unwrap(), s.rtt_max_us.unwrap());
    assert!(lo >= 6.5 && hi <= 16.6, "{lo} – {hi} µs");
    assert_eq!(noisy.flows()[0].stats.delivered_bytes, quiet.flows()[0].stats.delivered_bytes, "timing unchanged");
}

/// `nic.timestamps = "software"` reaches the window transport's samples: with one packet in
/// flight each is the unloaded 6.5024 µs plus a draw of the idle host's measured delay, so they
/// average 6.5024 µs plus that distribution's mean (linear between its shipped quantiles),
/// within 1 µs for about 870 samples, and none lies below the unloaded RTT.
#[test]
fn software_timestamps_add_the_measured_delay_to_window_transport_samples() {
    let net = one_in_flight("timestamps = \"software\"");
    let idle: Vec<f64> = include_str!("../data/software-timestamps.csv")
        .lines()
        .filter_map(|l| l.strip_prefix("idle,"))
        .map(|l| l.split(',').nth(1).unwrap().parse::<f64>().unwrap() / 1e3)
        .collect();
    let expected_us = 6.5024 + idle.windows(2).map(|w| (w[0] + w[1]) / 2.0).sum::<f64>() / (idle.len() - 1) as f64;
    let f = &net.flows()[0].stats;
    let mean_us = f.rtt_sum as f64 / f.rtt_samples as f64 / 1e6;
    assert!(f.rtt_samples > 500 && (mean_us - expected_us).abs() < 1.0, "mean {mean_us} µs, expected {expected_us}");
    assert!(net.summary().rtt_min_us.unwrap() >= 6.5);
}

/// A window fixed at a quarter packet sends one packet every 4 RTTs (Swift Algorithm 1 lines
/// 29–32). Unloaded RTT: 2 × (1.2 µs + 1 µs) for the 1500 B packet plus 2 × (51.2 ns + 1 µs)
/// for the ACK = 6.5024 µs, so a packet leaves every 26.0096 µs: 385 in 10 ms (the last at
/// 9987.7 µs), all acknowledged.
#[test]
fn a_window_below_one_packet_is_paced_at_rtt_over_cwnd() {
    let net = run_net(&pair(
        r#"
        [cc]
        algorithm = "swift"
        min_cwnd = 0.25
        max_cwnd = 0.25
        initial_cwnd = 0.25
        [[flows]]
        src = 1
        dst = 0
        "#,
    ));
    let f = &net.flows()[0];
    assert_eq!(f.stats.rtt_samples, 385);
    assert_eq!(f.stats.rtt_sum, 385 * 6_502_400);
    assert_eq!(f.stats.delivered_bytes, 385 * 1436);
}

/// Swift on the window transport acknowledges every packet (§3.6): it is the default, and
/// asking for delayed ACKs is an error naming the field. The profile fills in the rest.
#[test]
fn swift_scenarios_default_to_immediate_acks_and_record_their_profile() {
    let s = scenario(&pair("[cc]\nalgorithm = \"swift\"\nprofile = \"htsim\"\n[[flows]]\nsrc = 1\ndst = 0"));
    let r = s.resolved();
    assert_eq!(r["transport"]["delayed_ack"], false);
    assert_eq!(r["cc"]["profile"], "htsim");
    assert_eq!(r["cc"]["base_target"], "20us");
    assert_eq!(r["cc"]["retx_reset_threshold"], 5);
    let e = rttlab_sim::Scenario::from_toml(&pair("delayed_ack = true\n[cc]\nalgorithm = \"swift\"\n[[flows]]\nsrc = 1\ndst = 0")).unwrap_err();
    assert!(e.to_string().starts_with("transport.delayed_ack = true"), "{e}");
    let e = rttlab_sim::Scenario::from_toml(&pair("[cc]\nalgorithm = \"swift\"\nprofile = \"pony\"\n[[flows]]\nsrc = 1\ndst = 0")).unwrap_err();
    assert!(e.to_string().contains("cc.profile"), "{e}");
}

/// An incast with the host model replays identically.
#[test]
fn swift_with_the_host_model_is_deterministic() {
    let toml = pair(
        r#"
        [cc]
        algorithm = "swift"
        [host]
        rx_packet_time = "200ns"
        [[flows]]
        src = 1
        dst = 0
        connections = 20
        start_jitter = "20us"
        "#,
    );
    let a = run_net(&toml).summary();
    let b = run_net(&toml).summary();
    assert_eq!(a, b);
}
