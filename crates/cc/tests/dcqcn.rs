//! DCQCN's reaction point (algorithms.md §5.1–5.2) on hand-made CNP, timer and byte sequences:
//! each expected rate is written out from the rules, in Gbps.

use rttlab_cc::dcqcn::{DcqcnParams, Profile};
use rttlab_cc::{Bytes, Dcqcn, Rate, RateController, Time};

const G: f64 = 1.0 / 256.0;

fn us(t: u64) -> Time {
    Time::from_us(t)
}

fn gbps(cc: &Dcqcn) -> f64 {
    cc.rate().bps() as f64 / 1e9
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn paper_cut_then_fast_recovery_then_additive_increase() {
    let mut cc = Dcqcn::new(DcqcnParams::profile(Profile::Paper), Rate::from_gbps(40));
    assert_eq!(cc.next_change(), None, "at line rate nothing is due");
    // A CNP cuts at once with α = 1: R_C = 40·(1 − 1/2), R_T = 40; then α = (1 − g) + g = 1.
    cc.on_congestion_notification(us(0));
    assert!(close(gbps(&cc), 20.0));
    assert!(close(cc.alpha(), 1.0));
    // A second CNP 10 µs later: R_T = 20, R_C = 10.
    cc.on_congestion_notification(us(10));
    assert!(close(gbps(&cc), 10.0) && close(cc.target_rate().bps() as f64 / 1e9, 20.0));
    assert_eq!(cc.next_change(), Some(us(65)), "the increase timer restarts at the cut");
    // Timer expiries every 55 µs: four of fast recovery towards R_T = 20 ...
    for (t, rc) in [(65, 15.0), (120, 17.5), (175, 18.75), (230, 19.375)] {
        cc.advance(us(t));
        assert!(close(gbps(&cc), rc), "at {t} us: {} vs {rc}", gbps(&cc));
    }
    // ... then the fifth (T stage 5 ≥ F, byte stage 0 < F) is additive: R_T += 40 Mbps.
    cc.advance(us(285));
    assert!(close(cc.target_rate().bps() as f64 / 1e9, 20.04));
    assert!(close(gbps(&cc), (20.04 + 19.375) / 2.0));
    // α decayed once per τ′ = 55 µs since the last CNP (at 65, ..., 285 µs): five times.
    assert!((cc.alpha() - (1.0 - G).powi(5)).abs() < 1e-12);
}

#[test]
fn paper_byte_counter_and_hyper_increase() {
    let p = DcqcnParams { increase_timer: us(1_000_000), ..DcqcnParams::profile(Profile::Paper) };
    let mut cc = Dcqcn::new(p, Rate::from_gbps(40));
    cc.on_sent(us(0), 50_000_000);
    assert!(close(gbps(&cc), 40.0), "no byte counter before the first cut");
    cc.on_congestion_notification(us(1));
    cc.on_congestion_notification(us(2)); // R_T = 20, R_C = 10
                                          // Each 10 MB sent is a byte-counter expiry: four fast recoveries, then the fifth is
                                          // additive (byte stage 5, timer stage 0).
    cc.on_sent(us(3), 40_000_000);
    assert!(close(gbps(&cc), 19.375));
    cc.on_sent(us(4), 10_000_000);
    assert!(close(cc.target_rate().bps() as f64 / 1e9, 20.04));
    // Both stages at F: hyper increase, R_HAI·(min − F + 1) = 200 Mbps, with the timer's five
    // expiries brought in by a shorter timer on a fresh controller instead of waiting.
    let p = DcqcnParams { increase_timer: us(55), byte_counter: Bytes(10_000_000), ..DcqcnParams::profile(Profile::Paper) };
    let mut cc = Dcqcn::new(p, Rate::from_gbps(40));
    cc.on_congestion_notification(us(0));
    cc.on_congestion_notification(us(0)); // R_T = 20, R_C = 10, both stages 0
    cc.on_sent(us(1), 50_000_000); // byte stage 5: 4 FR then AI: R_T 20.04
    let rt = cc.target_rate().bps() as f64 / 1e9;
    assert!(close(rt, 20.04));
    cc.advance(us(55 * 4)); // timer stages 1..4: min stage < F: additive, four times
    let rt = cc.target_rate().bps() as f64 / 1e9;
    assert!(close(rt, 20.04 + 4.0 * 0.04), "{rt}");
    cc.advance(us(55 * 5)); // timer stage 5, byte stage 5: hyper, 200 Mbps·(5 − 5 + 1)
    assert!(close(cc.target_rate().bps() as f64 / 1e9, rt + 0.2));
    cc.on_sent(us(55 * 5), 10_000_000); // byte stage 6, timer 5: min is 5, still ×1
    assert!(close(cc.target_rate().bps() as f64 / 1e9, rt + 0.4));
    cc.advance(us(55 * 6)); // both 6: ×2
    assert!(close(cc.target_rate().bps() as f64 / 1e9, rt + 0.8));
}

#[test]
fn mellanox_alpha_timer_decrease_check_and_stages() {
    // 100 Gbps: R_AI = 5 Mbps·4 = 20 Mbps, R_HAI = 50 Mbps·4 = 200 Mbps.
    let mut cc = Dcqcn::new(DcqcnParams::profile(Profile::Mellanox), Rate::from_gbps(100));
    cc.on_congestion_notification(us(0));
    assert!(close(gbps(&cc), 100.0), "the first CNP does not cut: the next check does");
    assert!(close(cc.alpha(), 1.0));
    assert_eq!(cc.next_change(), Some(us(4)));
    // α ticks at 1..4 µs with no CNP since the first: (1 − g)^4; the check at 4 µs cuts with
    // it; R_T stays at line rate (no increase since the last cut).
    cc.advance(us(4));
    let a4 = (1.0 - G).powi(4);
    assert!((cc.alpha() - a4).abs() < 1e-12);
    let rc1 = 100.0 * (1.0 - a4 / 2.0);
    assert!(close(gbps(&cc), rc1) && close(cc.target_rate().bps() as f64 / 1e9, 100.0));
    // T = 300 µs after the cut: fast recovery (stage 0 < F = 1).
    assert_eq!(cc.next_change(), Some(us(304)));
    cc.advance(us(304));
    let rc2 = (100.0 + rc1) / 2.0;
    assert!(close(gbps(&cc), rc2));
    // A CNP at 310 µs: the tick at 311 µs takes it; the check at 312 µs cuts, and since the
    // rate rose since the last cut, R_T = R_C first.
    cc.on_congestion_notification(us(310));
    cc.advance(us(312));
    let a = (1.0 - G).powi(310); // ticks 1..310 µs: decay; 311 takes the CNP, 312 decays
    let a = (1.0 - G) * ((1.0 - G) * a + G);
    assert!((cc.alpha() - a).abs() < 1e-12, "{} vs {a}", cc.alpha());
    let rc3 = rc2 * (1.0 - a / 2.0);
    assert!(close(gbps(&cc), rc3) && close(cc.target_rate().bps() as f64 / 1e9, rc2));
    // Increases at 612 (fast recovery), 912 (additive, stage 1 = F), 1212 and 1512 (hyper,
    // a constant 200 Mbps).
    cc.advance(us(612));
    let rc4 = (rc2 + rc3) / 2.0;
    assert!(close(gbps(&cc), rc4));
    cc.advance(us(912));
    let (rt5, rc5) = (rc2 + 0.02, (rc2 + 0.02 + rc4) / 2.0);
    assert!(close(gbps(&cc), rc5));
    cc.advance(us(1512));
    let rt6 = rt5 + 0.2;
    let rc6 = (rt6 + rc5) / 2.0;
    let rt7 = rt6 + 0.2;
    assert!(close(gbps(&cc), (rt7 + rc6) / 2.0) && close(cc.target_rate().bps() as f64 / 1e9, rt7));
}

#[test]
fn floor_cap_and_idle_timers() {
    let p = DcqcnParams { min_rate: Rate::from_gbps(5), ..DcqcnParams::profile(Profile::Paper) };
    let mut cc = Dcqcn::new(p, Rate::from_gbps(10));
    for t in 0..10 {
        cc.on_congestion_notification(us(t));
    }
    assert!(close(gbps(&cc), 5.0), "never below min_rate");
    // A second of silence: the rate climbs back to, and stays at, line rate; nothing more due.
    cc.advance(Time::from_ms(1000));
    assert!(close(gbps(&cc), 10.0));
    assert_eq!(cc.next_change(), None);
    assert!(cc.alpha() < 1e-6, "α decayed for a second: {}", cc.alpha());
}

#[test]
fn profiles_differ_where_the_reference_says() {
    let (p, m) = (DcqcnParams::profile(Profile::Paper), DcqcnParams::profile(Profile::Mellanox));
    assert_eq!((p.alpha_timer, m.alpha_timer), (us(55), us(1)));
    assert_eq!((p.increase_timer, m.increase_timer), (us(55), us(300)));
    assert_eq!((p.fast_recovery, m.fast_recovery), (5, 1));
    assert_eq!((p.cnp_interval, m.cnp_interval), (us(50), Time::ZERO));
    assert_eq!((p.decrease_interval, m.decrease_interval), (Time::ZERO, us(4)));
    assert!(DcqcnParams { g: 0.0, ..p.clone() }.validate().is_err());
    assert!(DcqcnParams { increase_timer: Time::ZERO, ..p }.validate().is_err());
}
