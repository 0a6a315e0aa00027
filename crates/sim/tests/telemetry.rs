//! In-band telemetry (`switch.int`) and HPCC in the network: record sizes hop by hop, echoes,
//! and HPCC's steady state on an incast against its target utilisation.

use crate::common::{cell, run_net, scenario};
use rttlab_sim::Network;

/// One 10-packet flow from host 0 to host 2 across a chain of 3 switches, 10 Gbps, 1000 B
/// payloads with 64 B headers and 64 B ACKs, each packet acknowledged (1000 B segments).
fn chain(cc: &str) -> String {
    format!(
        r#"
        duration = "1ms"
        until = "flows_done"
        [topology]
        kind = "chain"
        switches = 3
        hosts_per_switch = 1
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch]
        pfc = false
        [nic]
        mtu = "1064B"
        header = "64B"
        ack = "64B"
        segment = "1000B"
        [cc]
        {cc}
        [[flows]]
        src = 0
        dst = 2
        size = "10000B"
        "#
    )
}

/// Bytes per packet port `port` sent in class `class`.
fn packet_bytes(net: &Network, port: &str, class: &str) -> f64 {
    let keys = [("port", port), ("class", class)];
    cell(net, "ports", &keys, "tx_bytes") / cell(net, "ports", &keys, "tx_packets")
}

#[test]
fn each_switch_adds_its_record_and_the_receiver_echoes_them() {
    // Data (class 1): 1064 B + the 2 B INT header at the NIC, + 8 B per switch crossed.
    // ACKs (class 0): 64 B + the echo (2 + 3 × 8 B); with a queue signal they collect the
    // reverse path's records as well, + 8 B per switch.
    let net = run_net(&chain("algorithm = \"timely\"\nsignal = \"max\""));
    let data: Vec<f64> = ["h0-s0", "s0-s1", "s1-s2", "s2-h2"].iter().map(|p| packet_bytes(&net, p, "1")).collect();
    assert_eq!(data, [1066.0, 1074.0, 1082.0, 1090.0]);
    let acks: Vec<f64> = ["h2-s2", "s2-s1", "s1-s0", "s0-h0"].iter().map(|p| packet_bytes(&net, p, "0")).collect();
    assert_eq!(acks, [90.0, 98.0, 106.0, 114.0]);
    // HPCC reads the forward records only: its ACKs carry the echo and collect nothing.
    let net = run_net(&chain("algorithm = \"hpcc\""));
    let acks: Vec<f64> = ["h2-s2", "s2-s1", "s1-s0", "s0-h0"].iter().map(|p| packet_bytes(&net, p, "0")).collect();
    assert_eq!(acks, [90.0; 4]);
    // Off (TIMELY on the RTT): packets keep their sizes.
    let net = run_net(&chain("algorithm = \"timely\""));
    assert_eq!((packet_bytes(&net, "s2-h2", "1"), packet_bytes(&net, "s0-h0", "0")), (1064.0, 64.0));
    // A record limit of 2: the third switch adds nothing.
    let net = run_net(&chain("algorithm = \"hpcc\"").replace("pfc = false", "pfc = false\nint_max_hops = 2"));
    assert_eq!((packet_bytes(&net, "s1-s2", "1"), packet_bytes(&net, "s2-h2", "1")), (1082.0, 1082.0));
}

#[test]
fn a_controller_that_reads_telemetry_cannot_run_without_it() {
    for cc in ["algorithm = \"hpcc\"", "algorithm = \"patched_timely\"\nsignal = \"oracle\""] {
        let toml = chain(cc).replace("pfc = false", "pfc = false\nint = false");
        let e = rttlab_sim::Scenario::from_toml(&toml).unwrap_err().to_string();
        assert!(e.starts_with("switch.int = false:") && e.contains("in-band telemetry"), "{e}");
    }
    let e = rttlab_sim::Scenario::from_toml(&chain("algorithm = \"timely\"\nsignal = \"ind\"\nsignal_threshold = \"0us\"")).unwrap_err().to_string();
    assert!(e.starts_with("cc.signal_threshold = 0"), "{e}");
    // HPCC turns telemetry on and acknowledges every packet (1000 B of payload), unless told.
    let s = scenario(&chain("algorithm = \"hpcc\"").replace("segment = \"1000B\"", ""));
    let r = s.resolved();
    assert_eq!((r["switch"]["int"].as_bool(), r["nic"]["segment"].as_str()), (Some(true), Some("1KB")));
}

/// Eight senders into one receiver on a 100 Gbps star with PFC, HPCC with its defaults, for
/// 3 ms; the flows start 20 us apart, so the first round trips' bursts are small.
#[test]
fn hpcc_holds_the_bottleneck_near_eta_with_a_small_queue_and_no_pauses() {
    let net = run_net(
        r#"
        duration = "3ms"
        warmup = "1ms"
        [topology]
        kind = "star"
        hosts = 9
        link_rate = "100Gbps"
        link_delay = "1us"
        [nic]
        mtu = "1064B"
        [cc]
        algorithm = "hpcc"
        [measure]
        queue_ports = ["s0-h0"]
        [[flows]]
        src = "1-8"
        dst = 0
        start_step = "20us"
        "#,
    );
    let keys = [("port", "s0-h0"), ("class", "1")];
    let util = cell(&net, "ports", &keys, "utilization");
    // η = 0.95 of the wire; HPCC's utilisation counts every byte on the wire.
    assert!((0.93..=0.97).contains(&util), "utilisation {util}");
    assert_eq!(net.counters().pauses, 0, "PFC pauses");
    let p99 = cell(&net, "ports", &keys, "queue_p99_kb");
    assert!(p99 < 10.0, "queue p99 {p99} KB");
}
