//! Packet trimming (`switch.trimming`): a full queue cuts a packet to its headers, which go on
//! ahead of the data, and the message transport's receiver NAKs the trimmed packet at once —
//! checked against a hand count on a 2-to-1 incast into a one-packet queue.

use crate::common::{cell, run_net};

/// Hosts 1 and 2 each send one segment of four 1000 B packets (936 B payload) at 10 Gbps into
/// host 0, whose link runs at 12.5 Gbps, through a switch whose egress queue holds one packet
/// beside the one it sends; 1 µs links but host 2's, 1.4 µs, so that no two events tie; no
/// controller. The switch trims as `trimming` says, the NICs recover by `recovery`.
fn incast(trimming: &str, recovery: &str) -> String {
    format!(
        r#"
        duration = "1ms"
        [topology]
        kind = "star"
        hosts = 3
        link_rate = "10Gbps"
        link_delay = "1us"
        host_links = [{{ host = 0, rate = "12.5Gbps" }}, {{ host = 2, delay = "1.4us" }}]
        [switch]
        pfc = false
        queue_limit = "1p"
        trimming = "{trimming}"
        trim_bytes = "64B"
        [nic]
        mtu = "1000B"
        header = "64B"
        ack = "64B"
        segment = "3744B"
        max_outstanding = "1TB"
        recovery = "{recovery}"
        [cc]
        algorithm = "none"
        [[flows]]
        src = "1-2"
        dst = 0
        size = "3744B"
        "#
    )
}

#[test]
fn a_two_to_one_incast_into_a_one_packet_queue_trims_two_packets_and_resends_each_once() {
    // Host 1's packet k reaches the switch at a_k = 1.8 + 0.8k µs, host 2's at b_k = a_k +
    // 0.4; the egress sends a packet in 0.64 µs and a header in 40.96 ns (ns below):
    //   1800 a0 out (to 2440) | 2200 b0 waits | 2440 b0 out (to 3080) | 2600 a1 waits
    //   3000 b1: queue full, trimmed | 3080 b1's header out, then a1 (3120.96 to 3760.96)
    //   3400 a2 waits | 3760.96 a2 out (to 4400.96) | 3800 b2 waits | 4200 a3: trimmed
    //   4400.96 a3's header, then b2 (4441.92 to 5081.92) | 4600 b3 waits, out at 5081.92.
    // Two trims, one per sender. Each header reaches host 0 1 µs after it leaves, whose NAK
    // (40.96 ns, 1 µs, then 51.2 ns and the sender's link) brings the resend back to the
    // switch at 8813.12 (b1) and 9334.08 (a3), into an idle port: each resent once.
    let net = run_net(&incast("arriving", "selective_repeat"));
    let s = net.summary();
    assert_eq!((s.trims, s.retransmits, s.timeouts, s.drops, s.spurious_retransmits), (2, 2, 0, 0, 0));
    assert_eq!(cell(&net, "ports", &[("port", "s0-h0"), ("class", "1")], "trims"), 2.0);
    for f in ["0", "1"] {
        assert_eq!(cell(&net, "flows", &[("flow", f)], "trims"), 1.0);
        assert_eq!(cell(&net, "flows", &[("flow", f)], "retransmits"), 1.0);
    }
    assert_eq!(s.flows_finished, 2);
    // The trimmed payload counts as dropped; everything sent was delivered or trimmed.
    assert_eq!(s.bytes_dropped, 2 * 936);
    assert_eq!(s.bytes_delivered, 2 * 3744);
    // Host 2's last packet is its resend of b1: NAKed at 5161.92 at the switch, at host 2 at
    // 6613.12, resent (0.8 µs, 1.4 µs) to the switch at 8813.12 and out at 9453.12, at host 0
    // 1 µs later: 10.45312 µs.
    assert_eq!(cell(&net, "flows", &[("flow", "1")], "finish_us"), 10.45312);
}

#[test]
fn either_trims_as_many_go_back_n_recovers_from_the_nak_and_without_trimming_a_timeout_does() {
    // Each arrival at a full queue trims one packet, the arriving one or the last queued: the
    // same two trims, of packets the coin picks.
    let either = run_net(&incast("either", "selective_repeat")).summary();
    assert_eq!((either.trims, either.retransmits, either.timeouts, either.flows_finished), (2, 2, 0, 2));
    // Go-back-N: the NAK sends the NIC back to the trimmed packet at once, no timeout.
    let gbn = run_net(&incast("arriving", "go_back_n")).summary();
    assert!(gbn.trims >= 2 && gbn.timeouts == 0 && gbn.flows_finished == 2, "{gbn:?}");
    // Without trimming the same two packets are dropped, and only the local ACK timeout
    // (100 µs here) finds them.
    let off = incast("off", "selective_repeat").replace("recovery =", "retransmit_timeout = \"100us\"\nrecovery =");
    let off = run_net(&off).summary();
    assert_eq!((off.trims, off.drops, off.timeouts, off.flows_finished), (0, 2, 2, 2));
}

#[test]
fn ultra_ethernet_nacks_every_trimmed_packet_and_resends_each_once() {
    // The same incast on Ultra Ethernet's transport with NSCC: each trimmed packet's headers
    // are NACKed and the packet resent once; nothing times out.
    let toml = incast("either", "selective_repeat")
        .replace("segment = \"3744B\"\n", "")
        .replace("max_outstanding = \"1TB\"\n", "")
        .replace("recovery = \"selective_repeat\"\n", "")
        .replace("[cc]\n        algorithm = \"none\"", "[transport]\nkind = \"uet\"\n[cc]\nalgorithm = \"nscc\"");
    let net = run_net(&toml);
    let s = net.summary();
    assert!(s.trims > 0, "{s:?}");
    assert_eq!((s.naks, s.retransmits, s.timeouts, s.drops), (s.trims, s.trims, 0, 0));
    assert_eq!((s.flows_finished, s.bytes_delivered), (2, 2 * 3744));
}
