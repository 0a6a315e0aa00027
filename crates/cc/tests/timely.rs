//! TIMELY and Patched TIMELY driven by hand-made RTT sequences; every expected rate is
//! computed by hand from Algorithm 1 (TIMELY §4.3), §5, and algorithms.md §1–§2.

use rttlab_cc::patched_timely::decrease_weight;
use rttlab_cc::timely::{DecreaseFloor, HaiCounter, UpdateScaling, ZeroGradient};
use rttlab_cc::{Completion, PatchedTimely, PatchedTimelyParams, Rate, RateController, Time, Timely, TimelyParams};

const G: f64 = 1e9;
const M: f64 = 1e6;

/// A controller fed (time µs, RTT µs) completions.
struct Drive<C: RateController> {
    cc: C,
    sending_rate: Option<Rate>,
}

impl<C: RateController> Drive<C> {
    fn at(&mut self, t_us: f64, rtt_us: f64) -> f64 {
        let c = Completion {
            now: Time((t_us * 1e6) as u64),
            rtt: Time((rtt_us * 1e6) as u64),
            acked_bytes: 16_000,
            sending_rate: self.sending_rate,
            ..Completion::default()
        };
        self.cc.on_completion(&c);
        self.cc.rate().bps() as f64
    }
}

fn timely(p: TimelyParams) -> Drive<Timely> {
    Drive { cc: Timely::new(p, Rate::from_gbps(10)), sending_rate: None }
}

fn at5g() -> TimelyParams {
    TimelyParams { initial_rate: Some(Rate::from_gbps(5)), ..Default::default() }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1.0, "{a} != {b}"); // within 1 bit/s
}

#[test]
fn defaults_are_the_papers() {
    let p = TimelyParams::default();
    assert_eq!((p.beta, p.delta, p.t_low, p.t_high), (0.8, Rate::from_mbps(10), Time::from_us(50), Time::from_us(500)));
    assert_eq!((p.hai_threshold, p.hai_factor), (5, 5.0));
    assert_eq!(Timely::new(p, Rate::from_gbps(10)).rate(), Rate::from_gbps(10));
}

#[test]
fn below_t_low_adds_delta() {
    let mut d = timely(at5g());
    close(d.at(100.0, 20.0), 5.0 * G + 10.0 * M);
    close(d.at(200.0, 49.9), 5.0 * G + 20.0 * M);
}

#[test]
fn above_t_high_cuts_by_the_instantaneous_rtt() {
    let mut d = timely(at5g());
    // 1 − 0.8·(1 − 500/1000) = 0.6
    close(d.at(100.0, 1000.0), 3.0 * G);
    // 1 − 0.8·(1 − 500/625) = 0.84
    close(d.at(200.0, 625.0), 3.0 * G * 0.84);
}

#[test]
fn positive_gradient_cuts_by_beta_g() {
    let mut d = timely(at5g());
    // First sample: no previous RTT, difference 0, g = 0 → increase.
    close(d.at(100.0, 100.0), 5.01 * G);
    // diff 20 µs; EWMA 0.02·20 = 0.4 µs; g = 0.4/20 = 0.02; × (1 − 0.8·0.02)
    close(d.at(200.0, 120.0), 5.01 * G * (1.0 - 0.8 * 0.02));
}

#[test]
fn negative_gradient_adds_delta() {
    let mut d = timely(at5g());
    d.at(100.0, 120.0);
    close(d.at(200.0, 100.0), 5.02 * G);
}

#[test]
fn hai_switches_on_at_the_fifth_negative_gradient_and_off_again() {
    let mut d = timely(TimelyParams { alpha: 1.0, ..at5g() });
    let mut r = 5.0 * G;
    // (RTT µs, what the update does, HAI on after it). With α = 1 the gradient is the raw
    // difference over 20 µs; completions 100 µs apart so df = 1.
    // (RTT µs, the update, HAI on after it)
    type Step = (f64, fn(f64) -> f64, bool);
    let steps: [Step; 9] = [
        (200.0, |r| r + 10.0 * M, false),          // first sample: g = 0 → +δ, count stays 0
        (190.0, |r| r + 10.0 * M, false),          // count 1
        (180.0, |r| r + 10.0 * M, false),          // 2
        (170.0, |r| r + 10.0 * M, false),          // 3
        (160.0, |r| r + 10.0 * M, false),          // 4
        (150.0, |r| r + 50.0 * M, true),           // 5th negative gradient: HAI, +5δ
        (140.0, |r| r + 50.0 * M, true),           // 6th
        (150.0, |r| r * (1.0 - 0.8 * 0.5), false), // rise: g = 10/20, count resets
        (140.0, |r| r + 10.0 * M, false),          // count 1 again: +δ
    ];
    for (i, (rtt, update, hai)) in steps.into_iter().enumerate() {
        r = update(r);
        close(d.at(100.0 * (i + 1) as f64, rtt), r);
        assert_eq!(d.cc.hai_active(), hai, "step {i}");
    }
}

#[test]
fn hai_counter_options() {
    // Raw difference: a small fall after a big rise keeps the EWMA positive but counts.
    let seq = [(100.0, 100.0), (200.0, 200.0), (300.0, 190.0)];
    let mut paper = timely(TimelyParams { hai_threshold: 1, ..at5g() });
    let mut raw = timely(TimelyParams { hai_threshold: 1, hai_counter: HaiCounter::RawDiff, ..at5g() });
    for (t, rtt) in seq {
        paper.at(t, rtt);
        raw.at(t, rtt);
    }
    assert!(!paper.cc.hai_active() && raw.cc.hai_active());
    // Any increase: T_low increases count too.
    let mut any = timely(TimelyParams { hai_threshold: 2, hai_counter: HaiCounter::AnyIncrease, ..at5g() });
    any.at(100.0, 10.0);
    any.at(200.0, 10.0);
    assert!(any.cc.hai_active());
    // ... and, as in HPCC's ns-3, HAI then applies below T_low too: +5δ. The paper's counter
    // never turns HAI on below T_low, where the increment stays δ.
    let r = any.cc.rate().bps() as f64;
    close(any.at(300.0, 10.0), r + 50.0 * M);
    let mut paper = timely(TimelyParams { hai_threshold: 2, ..at5g() });
    for t in [100.0, 200.0] {
        paper.at(t, 10.0);
    }
    let r = paper.cc.rate().bps() as f64;
    close(paper.at(300.0, 10.0), r + 10.0 * M);
}

#[test]
fn update_scaling_weights_updates_within_one_min_rtt() {
    let mut d = timely(at5g());
    d.at(100.0, 10.0); // +δ
    close(d.at(105.0, 10.0), 5.01 * G + 0.25 * 10.0 * M); // 5 µs of a 20 µs minRTT
                                                          // Gradient decrease at 5 µs spacing, paper form: × (1 − 0.25·β·g).
    let (mut all, mut snip, mut none) = (
        timely(at5g()),
        timely(TimelyParams { update_scaling: UpdateScaling::Snippet, ..at5g() }),
        timely(TimelyParams { update_scaling: UpdateScaling::None, ..at5g() }),
    );
    for d in [&mut all, &mut snip, &mut none] {
        d.at(100.0, 100.0);
    }
    let g = 0.02 * 20.0 / 20.0;
    close(all.at(105.0, 120.0), 5.01 * G * (1.0 - 0.25 * 0.8 * g));
    close(snip.at(105.0, 120.0), 5.01 * G * (1.0 - 0.8 * g));
    close(none.at(105.0, 120.0), 5.01 * G * (1.0 - 0.8 * g));
    close(none.at(106.0, 10.0), 5.01 * G * (1.0 - 0.8 * g) + 10.0 * M);
}

#[test]
fn application_limited_rule_at_80_percent() {
    let mut d = timely(at5g());
    d.sending_rate = Some(Rate::from_gbps(4)); // exactly 80 % of 5 Gbps: not more than 80 %
    close(d.at(100.0, 10.0), 5.0 * G);
    d.sending_rate = Some(Rate(4_000_000_001));
    close(d.at(200.0, 10.0), 5.01 * G);
    // Decreases are never held back.
    d.sending_rate = Some(Rate::from_gbps(1));
    close(d.at(300.0, 1000.0), 5.01 * G * 0.6);
}

#[test]
fn a_restart_returns_to_the_initial_rate_with_a_fresh_filter() {
    let mut d = timely(at5g());
    d.at(100.0, 10.0);
    d.at(200.0, 1000.0); // above T_high: a cut
    assert!(d.cc.rate() < Rate::from_gbps(5));
    d.cc.restart();
    assert_eq!(d.cc.rate(), Rate::from_gbps(5));
    // A fresh filter: the first sample after the restart sees no gradient (an increase by δ).
    close(d.at(10_000.0, 30.0), 5.01 * G);
}

#[test]
fn caps_and_floors() {
    let mut d = timely(TimelyParams::default()); // starts at the 10 Gbps line rate
    close(d.at(100.0, 10.0), 10.0 * G);
    let mut d = timely(TimelyParams { max_rate: Some(Rate::from_gbps(4)), ..Default::default() });
    close(d.at(100.0, 10.0), 4.0 * G);
    // Algorithm 1 as written: a gradient of +2 would make the rate negative; the floor holds
    // it at min_rate.
    let mut d = timely(TimelyParams { alpha: 1.0, min_rate: Rate::from_mbps(50), decrease_floor: DecreaseFloor::None, ..at5g() });
    d.at(100.0, 100.0);
    close(d.at(200.0, 140.0), 50.0 * M);
    // The default, the authors' code: never more than halves in one update.
    let mut d = timely(TimelyParams { alpha: 1.0, ..at5g() });
    close(d.at(100.0, 100.0), 5.01 * G);
    close(d.at(200.0, 140.0), 2.505 * G);
    let mut d = timely(at5g());
    close(d.at(100.0, 100_000.0), 2.5 * G);
}

#[test]
fn zero_gradient_options() {
    let mut inc = timely(at5g());
    let mut hold = timely(TimelyParams { zero_gradient: ZeroGradient::Hold, ..at5g() });
    close(inc.at(100.0, 100.0), 5.01 * G);
    close(hold.at(100.0, 100.0), 5.0 * G);
}

#[test]
fn equal_thresholds_make_the_queue_size_controller() {
    let target = Time::from_us(50);
    let mut d = timely(TimelyParams { t_low: target, t_high: target, ..at5g() });
    close(d.at(100.0, 40.0), 5.01 * G);
    close(d.at(200.0, 60.0), 5.01 * G * (1.0 - 0.8 * (1.0 - 50.0 / 60.0)));
}

#[test]
fn patched_weight_function() {
    assert_eq!(decrease_weight(-0.3), 0.0);
    assert_eq!(decrease_weight(-0.25), 0.0);
    assert_eq!(decrease_weight(0.0), 0.5);
    assert!((decrease_weight(0.1) - 0.7).abs() < 1e-12);
    assert_eq!(decrease_weight(0.25), 1.0);
}

#[test]
fn patched_update_by_hand() {
    let p = PatchedTimelyParams { initial_rate: Some(Rate::from_gbps(5)), ..Default::default() };
    let mut d = Drive { cc: PatchedTimely::new(p, Rate::from_gbps(10)), sending_rate: None };
    // First sample, RTT 75 µs: g = 0, w = ½, error = (75 − 50)/50 = ½.
    close(d.at(100.0, 75.0), 5.0 * G + 10.0 * M * 0.5 - 5.0 * G * 0.008 * 0.5 * 0.5);
    let r1 = 5.0 * G + 5.0 * M - 10.0 * M;
    // RTT 77 µs: diff 2 µs, EWMA 0.875·2 = 1.75 µs, g = 0.0875, w = 0.675, error 0.54.
    let w = 2.0 * 0.0875 + 0.5;
    close(d.at(200.0, 77.0), r1 + 10.0 * M * (1.0 - w) - r1 * 0.008 * w * 0.54);
    // At the reference RTT with a falling RTT the decrease vanishes: only δ(1 − w).
    let mut d = Drive {
        cc: PatchedTimely::new(PatchedTimelyParams { initial_rate: Some(Rate::from_gbps(5)), ..Default::default() }, Rate::from_gbps(10)),
        sending_rate: None,
    };
    d.at(100.0, 60.0);
    close(d.at(200.0, 50.0), 5.0 * G + 10.0 * M * 0.5 - 5.0 * G * 0.008 * 0.5 * 0.2 + 10.0 * M);
}
