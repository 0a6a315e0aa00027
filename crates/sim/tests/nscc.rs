//! NSCC (`cc.algorithm = "nscc"`) on the window transport: two senders into one 10 Gbps port
//! share it fully and fairly, and no window passes 1.5 times its BDP.

mod common;

use common::run_net;

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
