//! TCP Vegas on hand-made RTT sequences (reference algorithms.md §8): the queued-packet estimate,
//! the baseRTT and per-round minimum filters, the once-per-RTT α/β decisions, slow-start exit at
//! γ, and Reno's behaviour where Vegas has too few samples or sees a loss.

use rttlab_cc::vegas::DiffDenominator;
use rttlab_cc::{AckEvent, Loss, Time, Vegas, VegasParams, WindowController};

const MSS: u64 = 1000;

fn us(x: u64) -> Time {
    Time::from_us(x)
}

fn ack(rtt: Option<Time>, snd_una: u64, snd_nxt: u64) -> AckEvent {
    AckEvent {
        now: Time::ZERO,
        acked_bytes: MSS,
        ece: false,
        rtt,
        snd_una,
        snd_nxt,
        in_recovery: false,
        cwnd_limited: true,
        endpoint_delay: Time::ZERO,
        hops: 0,
    }
}

/// An ACK when the window was not the limit (Reno would not grow on it).
fn idle(rtt: Option<Time>, snd_una: u64, snd_nxt: u64) -> AckEvent {
    AckEvent { cwnd_limited: false, ..ack(rtt, snd_una, snd_nxt) }
}

/// A Vegas of `packets` packets out of slow start, whose round ends at byte `end`.
fn in_avoidance(packets: u64) -> Vegas {
    let mut v = Vegas::new(VegasParams::default(), MSS);
    v.reno.cwnd = (packets * MSS) as f64;
    v.reno.ssthresh = 0.0;
    v
}

/// One round: samples `rtts` on ACKs within the round, then the ACK that ends it (no sample).
fn round(v: &mut Vegas, rtts: &[u64], start: u64) -> u64 {
    let end = start + 100 * MSS;
    // Sample ACKs and the opener don't let Reno grow; the closing ACK would (cwnd-limited).
    v.on_ack(&idle(None, start, end)); // opens the round: it ends when `end` is acknowledged
    for &r in rtts {
        v.on_ack(&idle(Some(us(r)), start + MSS, end));
    }
    v.on_ack(&ack(None, end, end + 100 * MSS));
    end + 100 * MSS
}

#[test]
fn diff_is_the_queued_packets_over_the_rtt_or_linuxs_base_rtt() {
    let mut v = in_avoidance(10);
    v.on_ack(&idle(Some(us(10)), 0, 0));
    // 10 packets, baseRTT 10 µs, RTT 15 µs: the paper 10·5/15 = 3.33; Linux 10·5/10 = 5.
    assert!((v.diff(us(15)) - 10.0 / 3.0).abs() < 1e-12);
    v.params.diff_denominator = DiffDenominator::BaseRtt;
    assert_eq!(v.diff(us(15)), 5.0);
}

#[test]
fn base_rtt_is_the_smallest_sample_and_a_round_acts_on_its_smallest() {
    let mut v = in_avoidance(10);
    // First round: baseRTT 10 µs; the round's minimum is 10: diff 0 < α → +1 packet.
    let next = round(&mut v, &[12, 10, 30], 0);
    assert_eq!(v.base_rtt, us(10));
    assert_eq!(v.cwnd(), 11 * MSS);
    // Second round: samples 40, 13, 50 (delayed ACKs inflate some): its RTT is 13 µs, diff =
    // 11·3/13 = 2.54, between α = 1 and β = 3: hold.
    round(&mut v, &[40, 13, 50], next);
    assert_eq!(v.cwnd(), 11 * MSS);
    assert_eq!(v.base_rtt, us(10));
}

#[test]
fn more_than_beta_queued_shrinks_the_window_by_one_packet_per_round() {
    let mut v = in_avoidance(10);
    let mut at = round(&mut v, &[10, 10, 10], 0); // baseRTT 10, +1 → 11
                                                  // RTT 20 µs: diff = 11·10/20 = 5.5 > 3 → 10 packets; then 10·10/20 = 5 → 9.
    at = round(&mut v, &[20, 20, 20], at);
    assert_eq!(v.cwnd(), 10 * MSS);
    round(&mut v, &[20, 20, 20], at);
    assert_eq!(v.cwnd(), 9 * MSS);
    assert_eq!(v.reno.ssthresh, 0.0, "ssthresh = min(ssthresh, cwnd − 1 packet)");
}

#[test]
fn slow_start_grows_per_ack_and_ends_at_gamma_with_the_window_the_path_holds() {
    let mut v = Vegas::new(VegasParams::default(), MSS);
    assert_eq!(v.cwnd(), 10 * MSS);
    let end = 100 * MSS;
    v.on_ack(&idle(None, 0, end));
    // Within a round every ACK grows the window as Reno's slow start (one MSS per MSS acked).
    for _ in 0..3 {
        v.on_ack(&ack(Some(us(10)), MSS, end));
    }
    assert_eq!(v.cwnd(), 13 * MSS);
    // The round's diff is 0 ≤ γ: slow start goes on.
    v.on_ack(&idle(None, end, 2 * end));
    for _ in 0..3 {
        v.on_ack(&ack(Some(us(20)), end + MSS, 2 * end));
    }
    assert_eq!(v.cwnd(), 16 * MSS);
    // RTT 20 µs: diff = 16·10/20 = 8 > γ. Linux: cwnd = min(cwnd, cwnd·baseRTT/rtt + 1) = 9
    // packets, ssthresh one below: slow start is over.
    v.on_ack(&idle(None, 2 * end, 3 * end));
    assert_eq!(v.cwnd(), 9 * MSS);
    assert_eq!(v.reno.ssthresh, (8 * MSS) as f64);
}

#[test]
fn a_round_with_fewer_than_three_samples_is_renos_and_a_loss_is_renos() {
    let mut v = in_avoidance(10);
    round(&mut v, &[10, 10], 0);
    // Reno's congestion avoidance for the round-ending ACK: + MSS·MSS/cwnd.
    assert!((v.reno.cwnd - (10.0 * MSS as f64 + MSS as f64 / 10.0)).abs() < 1e-9);
    v.on_loss(Loss::FastRetransmit, 10 * MSS, Time::ZERO);
    assert_eq!(v.cwnd(), 5 * MSS);
    v.on_loss(Loss::Timeout, 5 * MSS, Time::ZERO);
    assert_eq!(v.cwnd(), MSS);
}

#[test]
fn parameters_are_checked() {
    let bad = VegasParams { beta: 0.5, ..VegasParams::default() };
    assert_eq!(bad.validate().unwrap_err().field, "beta");
    assert_eq!(VegasParams { alpha: f64::NAN, ..VegasParams::default() }.validate().unwrap_err().field, "alpha");
    assert!(VegasParams::default().validate().is_ok());
}
