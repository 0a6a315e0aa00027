//! Reno, DCTCP and FAST* on hand-made ACK and RTT sequences, against hand-computed values.

use rttlab_cc::{AckEvent, Completion, Dctcp, DctcpParams, Fast, FastParams, Loss, Rate, RateController, Reno, RenoParams, Time, WindowController};

const MSS: u64 = 1000;

fn ack(acked: u64, ece: bool, una: u64, nxt: u64) -> AckEvent {
    AckEvent {
        now: Time::ZERO,
        acked_bytes: acked,
        ece,
        rtt: None,
        snd_una: una,
        snd_nxt: nxt,
        in_recovery: false,
        cwnd_limited: true,
        endpoint_delay: Time::ZERO,
        hops: 0,
    }
}

#[test]
fn reno_slow_start_avoidance_and_losses() {
    let mut r = Reno::new(RenoParams::default(), MSS);
    assert_eq!(r.cwnd(), 10_000);
    // Slow start: +acked, at most 2 MSS per ACK (RFC 3465).
    r.on_ack(&ack(1000, false, 1000, 10_000));
    assert_eq!(r.cwnd(), 11_000);
    r.on_ack(&ack(5000, false, 6000, 11_000));
    assert_eq!(r.cwnd(), 13_000);
    // Not window-limited: no growth (RFC 7661).
    r.on_ack(&AckEvent { cwnd_limited: false, ..ack(1000, false, 7000, 13_000) });
    assert_eq!(r.cwnd(), 13_000);
    // Fast retransmit: ssthresh = cwnd = flight/2; then avoidance: MSS·acked/cwnd.
    r.on_loss(Loss::FastRetransmit, 12_000, Time::ZERO);
    assert_eq!(r.cwnd(), 6000);
    r.on_ack(&AckEvent { in_recovery: true, ..ack(1000, false, 8000, 13_000) });
    assert_eq!(r.cwnd(), 6000, "no growth in recovery");
    r.on_ack(&ack(3000, false, 11_000, 13_000));
    assert_eq!(r.cwnd(), 6500);
    // Timeout: one segment, ssthresh = max(flight/2, 2 MSS).
    r.on_loss(Loss::Timeout, 3000, Time::ZERO);
    assert_eq!((r.cwnd(), r.ssthresh), (1000, 2000.0));
}

#[test]
fn dctcp_halves_its_window_on_loss_whatever_is_in_flight() {
    // Linux dctcp_react_to_loss: ssthresh = max(cwnd/2, 2 MSS), with 20 MSS of window and 6 in
    // flight (Reno's RFC 5681 rule would take flight/2 = 3 MSS).
    let mut d = Dctcp::new(DctcpParams::default(), MSS);
    d.reno.cwnd = 20_000.0;
    d.on_loss(Loss::FastRetransmit, 6000, Time::ZERO);
    assert_eq!((d.cwnd(), d.reno.ssthresh), (10_000, 10_000.0));
    d.on_loss(Loss::Timeout, 6000, Time::ZERO);
    assert_eq!((d.cwnd(), d.reno.ssthresh), (1000, 5000.0));
    d.reno.cwnd = 3000.0;
    d.on_loss(Loss::FastRetransmit, 3000, Time::ZERO);
    assert_eq!(d.reno.ssthresh, 2000.0, "at least 2 MSS");
}

#[test]
fn dctcp_updates_alpha_once_per_window_and_cuts_once_per_window() {
    let mut d = Dctcp::new(DctcpParams::default(), MSS);
    assert_eq!(d.alpha, 1.0);
    // First ACK ends the initial (empty) window: F = 0 → α = 15/16; window now ends at 10 000.
    d.on_ack(&ack(1000, false, 1000, 10_000));
    assert_eq!(d.alpha, 15.0 / 16.0);
    assert_eq!(d.cwnd(), 11_000, "slow start");
    // Within the window: counted, no α update. First ECE cuts by α/2 = 15/32.
    d.on_ack(&ack(1000, true, 2000, 11_000));
    assert_eq!(d.alpha, 15.0 / 16.0);
    assert_eq!(d.cwnd(), (11_000.0 * (1.0 - 15.0 / 32.0)) as u64);
    let after_cut = d.cwnd();
    // More ECE in the same window (before snd_una reaches 11 000): no second cut, no growth.
    d.on_ack(&ack(1000, true, 3000, 11_000));
    d.on_ack(&ack(1000, false, 4000, 11_000));
    assert_eq!(d.cwnd(), after_cut);
    // The window ends at 10 000: F = 2000 marked of 9000 acked since the last update.
    d.on_ack(&ack(6000, false, 10_000, 12_000));
    let f = 2000.0 / 9000.0;
    assert!((d.alpha - (15.0 / 16.0 * 15.0 / 16.0 + f / 16.0)).abs() < 1e-12);
    // snd_una passed the cut's snd_nxt (11 000): a new ECE may cut again; floor 2 MSS.
    d.alpha = 1.0;
    d.reno.cwnd = 3000.0;
    d.on_ack(&ack(1000, true, 11_000, 12_000));
    assert_eq!(d.cwnd(), 2000);
}

fn completion(rtt_us: u64) -> Completion<'static> {
    Completion { now: Time::ZERO, rtt: Time::from_us(rtt_us), acked_bytes: 16_000, ..Completion::default() }
}

#[test]
fn fast_star_follows_the_fast_equation() {
    let p = FastParams { alpha: Rate::from_mbps(100), initial_rate: Some(Rate::from_gbps(1)), ..Default::default() };
    let mut f = Fast::new(p, Rate::from_gbps(10));
    // First sample sets baseRTT = 20 µs: R ← min(2R, R/2 + (R + α)/2) = R + α/2.
    f.on_completion(&completion(20));
    assert_eq!(f.rate(), Rate::from_mbps(1050));
    // RTT twice the base: R ← R/2 + (R/2 + α)/2 = 0.75 R + α/2.
    f.on_completion(&completion(40));
    assert_eq!(f.rate(), Rate(837_500_000));
    // Fixed point at RTT = 2·baseRTT: R = α / (1 − 1/2) = 200 Mbps.
    for _ in 0..200 {
        f.on_completion(&completion(40));
    }
    assert!((f.rate().bps() as f64 - 200e6).abs() < 1e3, "{}", f.rate());
    // Growth is at most doubling, and capped at the line rate.
    let mut g = Fast::new(FastParams { alpha: Rate::from_gbps(5), initial_rate: Some(Rate::from_mbps(100)), ..Default::default() }, Rate::from_gbps(10));
    g.on_completion(&completion(20));
    assert_eq!(g.rate(), Rate::from_mbps(200));
}

/// `metrics()` reports what each controller keeps, and `None` for the rest: Reno's window and
/// (once set) ssthresh, DCTCP's α besides, a rate controller's rate.
#[test]
fn metrics_report_each_controllers_state() {
    let mut r = Reno::new(RenoParams::default(), MSS);
    let m = r.metrics();
    assert_eq!((m.cwnd_bytes, m.ssthresh_bytes, m.dctcp_alpha, m.rate), (Some(10_000), None, None, None));
    r.on_loss(Loss::FastRetransmit, 12_000, Time::ZERO);
    assert_eq!((r.metrics().cwnd_bytes, r.metrics().ssthresh_bytes), (Some(6000), Some(6000)));
    let d = Dctcp::new(DctcpParams::default(), MSS);
    assert_eq!((d.metrics().dctcp_alpha, d.metrics().cwnd_bytes, d.metrics().fcwnd_pkts), (Some(1.0), Some(10_000), None));
    let f = Fast::new(FastParams::default(), Rate::from_gbps(10));
    assert_eq!((f.metrics().rate, f.metrics().cwnd_bytes), (Some(Rate::from_gbps(10)), None));
}
