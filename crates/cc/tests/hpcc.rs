//! HPCC (algorithms.md §6.2) on hand-made INT sequences, one 10 Gbps hop and T = 12.8 us, so
//! that `B·T` = 16 000 B: 125 units of the 128 B tx counter, 200 of the 80 B queue counter.

use rttlab_cc::hpcc::HpccParams;
use rttlab_cc::{Completion, Hpcc, IntHop, Rate, RateController, Time};

const BT: f64 = 16_000.0;

fn t() -> Time {
    Time::from_ns(12_800)
}

fn hop(ts_ns: u64, tx_bytes: u64, queue_bytes: u64) -> IntHop {
    IntHop::encode(Time::from_ns(ts_ns), tx_bytes, queue_bytes, Rate::from_gbps(10))
}

/// Feeds one ACK echoing `h`, acknowledging through `una` with `nxt` sent.
fn ack(cc: &mut Hpcc, h: IntHop, una: u64, nxt: u64) -> f64 {
    cc.on_completion(&Completion { snd_una: una, snd_nxt: nxt, int: &[h], ..Completion::default() });
    cc.window().unwrap() as f64
}

fn hpcc(p: HpccParams) -> Hpcc {
    Hpcc::new(p, Rate::from_gbps(10), t())
}

#[test]
fn utilization_from_queue_and_tx_rate_then_multiplicative_step() {
    let mut cc = hpcc(HpccParams::default());
    assert_eq!(cc.window(), Some(16_000), "W_init = line rate × T");
    // The first ACK only stores the records.
    assert_eq!(ack(&mut cc, hop(0, 0, 1_600), 1_000, 20_000), 16_000.0);
    assert_eq!(cc.utilization(), 1.0);
    // One T later the hop sent 16 000 B (txRate/B = 1) and held 1 600 B throughout
    // (q/(B·T) = 0.1): u = 1.1, and τ = T gives it full weight.
    let w = ack(&mut cc, hop(12_800, 16_000, 1_600), 21_000, 40_000);
    assert!((cc.utilization() - 1.1).abs() < 1e-12);
    // U ≥ η: W = W_c·η/U + W_AI, W_AI = 50 Mbps × 12.8 us = 80 B.
    let expect = BT * 0.95 / 1.1 + 80.0;
    assert!((w - expect).abs() < 1.0, "{w} vs {expect}");
    assert_eq!(cc.rate(), Rate((w.floor() * 8.0 / 12.8e-6) as u64).max(cc.rate()).min(Rate(((w + 1.0) * 8.0 / 12.8e-6) as u64)));
}

#[test]
fn half_interval_smooths_and_queue_takes_the_smaller_reading() {
    let mut cc = hpcc(HpccParams::default());
    ack(&mut cc, hop(0, 0, 3_200), 1, 2);
    // τ = T/2, the hop sent 3 840 B of the 8 000 it could and the queue is min(3 200, 1 600) =
    // 1 600 B: u = 0.1 + 0.48, U = ½·1 + ½·0.58 = 0.79.
    ack(&mut cc, hop(6_400, 3_840, 1_600), 1, 2);
    assert!((cc.utilization() - 0.79).abs() < 1e-12, "{}", cc.utilization());
}

#[test]
fn additive_stages_then_a_forced_multiplicative_step() {
    let mut cc = hpcc(HpccParams { max_stage: 2, ..HpccParams::default() });
    // Start below the cap: one multiplicative step at U = 2 (a full queue and the line rate).
    ack(&mut cc, hop(0, 0, 16_000), 0, 10);
    let w1 = ack(&mut cc, hop(12_800, 16_000, 16_000), 20, 30);
    assert!((w1 - (BT * 0.95 / 2.0 + 80.0)).abs() < 1.0, "{w1}");
    // Now U = 0.48 at τ = T (7 680 B sent per T, no queue): additive twice (stages 1, 2),
    // then multiplicative.
    let w2 = ack(&mut cc, hop(25_600, 23_680, 0), 40, 50);
    let w3 = ack(&mut cc, hop(38_400, 31_360, 0), 60, 70);
    assert!((w2 - (w1 + 80.0)).abs() < 1e-6 && (w3 - (w2 + 80.0)).abs() < 1e-6, "{w1} {w2} {w3}");
    let w4 = ack(&mut cc, hop(51_200, 39_040, 0), 80, 90);
    assert!((w4 - (w3 * 0.95 / 0.48 + 80.0)).abs() < 1.0, "{w4}");
}

#[test]
fn fast_react_applies_each_ack_but_commits_once_per_rtt() {
    let mut cc = hpcc(HpccParams::default());
    ack(&mut cc, hop(0, 0, 16_000), 0, 1_000);
    // U = 2 committed: W_c = 16 000·0.95/2 + 80 = 7 680.
    let wc = ack(&mut cc, hop(12_800, 16_000, 16_000), 1_500, 3_000);
    assert!((wc - 7_680.0).abs() < 1.0);
    // An ACK of data sent before that commit (una ≤ 3 000): applies W from W_c, no commit.
    let w = ack(&mut cc, hop(25_600, 32_000, 16_000), 2_000, 3_000);
    // U = 2 again (u = 1 + 1): W = 7 680·0.95/2 + 80 = 3 728, not yet the reference.
    assert!((w - (wc * 0.95 / 2.0 + 80.0)).abs() < 1.0, "{w}");
    // The next one, also uncommitted, starts again from W_c, not from the applied W.
    let w = ack(&mut cc, hop(38_400, 48_000, 16_000), 2_500, 3_000);
    assert!((w - (wc * 0.95 / 2.0 + 80.0)).abs() < 1.0, "{w}");
    // Without fast react the uncommitted ACK changes nothing.
    let mut slow = hpcc(HpccParams { fast_react: false, ..HpccParams::default() });
    ack(&mut slow, hop(0, 0, 16_000), 0, 1_000);
    let wc = ack(&mut slow, hop(12_800, 16_000, 16_000), 1_500, 3_000);
    assert_eq!(ack(&mut slow, hop(25_600, 32_000, 16_000), 2_000, 3_000), wc);
}

#[test]
fn counter_wrap_gives_the_same_utilization() {
    let run = |ts0: u64, tx0: u64| {
        let mut cc = hpcc(HpccParams::default());
        ack(&mut cc, hop(ts0, tx0, 800), 0, 10);
        ack(&mut cc, hop(ts0 + 6_400, tx0 + 6_400, 800), 20, 30);
        cc.utilization()
    };
    let plain = run(0, 0);
    // Both counters wrap between the two records: 2^24 ns, 2^20 × 128 B.
    let wrapped = run((1 << 24) - 3_200, (1 << 27) - 3_200);
    assert!((plain - wrapped).abs() < 1e-12, "{plain} vs {wrapped}");
    // 6 400 B of 8 000 and 800 B queued: u = 0.8 + 0.05, τ = T/2: U = ½ + ½·0.85 = 0.925.
    assert!((plain - 0.925).abs() < 1e-12, "{plain}");
}

#[test]
fn a_new_path_restarts_the_records() {
    let mut cc = hpcc(HpccParams::default());
    ack(&mut cc, hop(0, 0, 0), 0, 10);
    let two = [hop(12_800, 16_000, 16_000), hop(12_800, 0, 0)];
    cc.on_completion(&Completion { snd_una: 20, snd_nxt: 30, int: &two, ..Completion::default() });
    assert_eq!((cc.utilization(), cc.window()), (1.0, Some(16_000)));
}
