//! The differential test's reference: the decisions a kernel controller logged (rttlab.host,
//! `bpf/*.bpf.c`, one connection's records in order) replayed one at a time through
//! `rttlab_cc`'s controller of the same algorithm, each from the kernel's own state before it
//! (the previous record), with the same inputs. Each decision's difference is then the kernel's
//! fixed-point arithmetic alone, whatever the decisions before it; `bound` states how far that
//! arithmetic may take it (docs/host.md, "Fixed point"), and `exempt` marks the decisions
//! whose branch turned on a value within the arithmetic's error of a threshold, where the two
//! may rightly take different branches.
//!
//! The parameters must be those the kernel ran with (the scenario's, rounded as the program
//! holds them), so that only the arithmetic differs.

use rttlab_cc::dctcp::update_alpha;
use rttlab_cc::swift::{GuardRtt, SwiftState};
use rttlab_cc::timely::{GradientFilter, RateState};
use rttlab_cc::{AckEvent, Completion, Loss, PatchedTimely, Rate, RateController, Swift, Time, Timely, WindowController};
use rttlab_cc::{DctcpParams, PatchedTimelyParams, SwiftParams, TimelyParams};
use rttlab_sim::scenario::CcConfig;

/// `struct rttlab_event`'s kinds.
const INIT: u16 = 0;
const ACK: u16 = 1;
const LOSS: u16 = 2;
const TIMEOUT: u16 = 3;
const RTT: u16 = 4;

/// One connection's records, field by field (`struct rttlab_event`).
pub struct Records<'a> {
    pub t_ns: &'a [u64],
    pub kind: &'a [u16],
    pub flags: &'a [u16],
    pub rtt_us: &'a [i64],
    pub acked: &'a [u64],
    pub value: &'a [u64],
    pub aux: &'a [i64],
    pub aux2: &'a [u64],
}

/// What the kernel decided and what the reference decides from the same state, in the
/// reference's units (TIMELY: rate in bit/s; Swift: fabric window in packets; DCTCP: α); NaN
/// for a record that decides nothing (a connection's start, an RTT sample alone).
#[derive(Default)]
pub struct Replayed {
    pub kernel: Vec<f64>,
    pub reference: Vec<f64>,
    pub bound: Vec<f64>,
    pub exempt: Vec<bool>,
}

impl Replayed {
    fn push(&mut self, kernel: f64, reference: f64, bound: f64, exempt: bool) {
        self.kernel.push(kernel);
        self.reference.push(reference);
        self.bound.push(bound);
        self.exempt.push(exempt);
    }

    fn none(&mut self) {
        self.push(f64::NAN, f64::NAN, f64::NAN, true);
    }
}

/// 2^-n.
fn ulp(n: i32) -> f64 {
    (2.0f64).powi(-n)
}

/// The TIMELY programs' RTT: the kernel's sample less the segment's serialization.
fn timely_rtt(rtt_us: i64, seg_ser_ps: u64) -> Time {
    Time((rtt_us.max(0) as u64 * 1_000_000).saturating_sub(seg_ser_ps))
}

/// Replays `r` under `cc`; `line_rate` is the sender's, `packet_bytes` its MSS, `seg_ser_ps`
/// the TIMELY programs' serialization correction. An algorithm without a kernel program is
/// an error naming it.
pub fn replay(cc: &CcConfig, line_rate: Rate, packet_bytes: u64, seg_ser_ps: u64, r: &Records) -> Result<Replayed, String> {
    // The algorithms with a kernel program, by their parameters' type.
    let native = match cc {
        CcConfig::Native(c) => Some(c),
        CcConfig::Python(_) => None,
    };
    let timely = native.and_then(|c| c.params::<TimelyParams>());
    let patched = native.and_then(|c| c.params::<PatchedTimelyParams>());
    let swift = native.and_then(|c| c.params::<SwiftParams>());
    let dctcp = native.and_then(|c| c.params::<DctcpParams>());
    if timely.is_none() && patched.is_none() && swift.is_none() && dctcp.is_none() {
        return Err(format!("cc.algorithm = {}: no kernel program to replay (timely, patched_timely, swift, dctcp)", cc.name()));
    }
    let mut out = Replayed::default();
    let n = r.t_ns.len();
    // The record holding the state before the next decision.
    let mut prev: Option<usize> = None;
    let mut last_rtt = Time::ZERO;
    for i in 0..n {
        let now = Time(r.t_ns[i] * 1000);
        let decides = matches!(r.kind[i], ACK | LOSS | TIMEOUT);
        let Some(p) = prev.filter(|_| decides) else {
            out.none();
            if r.kind[i] != RTT {
                prev = Some(i);
            }
            continue;
        };
        if timely.is_some() || patched.is_some() {
            let had = r.kind[p] == ACK;
            let st = RateState {
                rate_bps: r.value[p] as f64,
                filter: GradientFilter::resume(had.then(|| timely_rtt(r.rtt_us[p], seg_ser_ps)), if had { r.aux[p] as f64 } else { 0.0 }),
                hai_count: if had { r.flags[p] as u32 } else { 0 },
                last_update: had.then(|| Time(r.t_ns[p] * 1000)),
            };
            let rtt = timely_rtt(r.rtt_us[i], seg_ser_ps);
            let c = Completion { now, rtt, acked_bytes: r.acked[i], sending_rate: None, snd_una: 0, snd_nxt: 0, int: &[] };
            let old = st.rate_bps;
            let (rate, rtt_diff, slack) = match (timely, patched) {
                (Some(params), _) => {
                    let mut t = Timely::resume(params.clone(), line_rate, st);
                    t.on_completion(&c);
                    let st = t.state();
                    let g = st.filter.rtt_diff_ps() / params.min_rtt.ps() as f64;
                    // Q16 weights and factors, each rounded once or twice: a few units of
                    // 2^-16 of the old rate, the gradient's share scaled by it, and of the
                    // (HAI-multiplied) increment.
                    (st.rate_bps, st.filter.rtt_diff_ps(), old * (ulp(14) + g.abs() * ulp(16)) + ulp(16) * params.hai_factor * params.delta.bps() as f64)
                }
                (None, Some(params)) => {
                    let mut t = PatchedTimely::resume(params.clone(), line_rate, st);
                    t.on_completion(&c);
                    let st = t.state();
                    let rtt_ref = params.rtt_ref.unwrap_or(params.t_low).ps() as f64;
                    let err = (rtt.ps() as f64 - rtt_ref) / rtt_ref;
                    (st.rate_bps, st.filter.rtt_diff_ps(), old * (ulp(14) + err.abs() * ulp(15)) + ulp(15) * params.delta.bps() as f64)
                }
                (None, None) => unreachable!("matched above"),
            };
            // The gradient's sign decides the branch: within a picosecond of zero the
            // kernel's rounding may rightly take the other.
            out.push(r.value[i] as f64, rate, slack + 4.0, rtt_diff.abs() <= 1.0);
        } else if let Some(params) = swift {
            let after_start = r.kind[p] == INIT;
            let st = SwiftState {
                fcwnd: r.value[p] as f64 / 2f64.powi(32),
                t_last_decrease: Time(if after_start { 0 } else { r.aux2[p] }),
                srtt_ps: if after_start { 0.0 } else { r.aux[p] as f64 },
                last_rtt,
                retransmit_cnt: if matches!(r.kind[p], LOSS | TIMEOUT) { r.flags[p] as u32 } else { 0 },
            };
            let mut s = Swift::resume(params.clone(), packet_bytes, st.clone());
            let mut exempt = false;
            let mut increment = 0.0;
            match r.kind[i] {
                ACK => {
                    let rtt = (r.rtt_us[i] > 0).then(|| Time(r.rtt_us[i] as u64 * 1_000_000));
                    if let Some(rtt) = rtt {
                        // The branch: the RTT against the target (the kernel's within 2 ps),
                        // and the guard against the smoothed RTT (within 1 ps).
                        let target = s.target(1);
                        exempt = rtt.ps().abs_diff(target.ps()) <= 2;
                        if params.guard_rtt == GuardRtt::Smoothed {
                            let srtt = params.rtt_smoothing * st.srtt_ps + (1.0 - params.rtt_smoothing) * rtt.ps() as f64;
                            exempt |= ((now.saturating_sub(st.t_last_decrease)).ps() as f64 - srtt).abs() <= 1.0;
                        }
                        last_rtt = rtt;
                        increment = params.ai * r.acked[i].max(1) as f64;
                    }
                    let ack = AckEvent {
                        now,
                        acked_bytes: r.acked[i] * packet_bytes,
                        ece: false,
                        rtt,
                        snd_una: 0,
                        snd_nxt: 0,
                        in_recovery: false,
                        cwnd_limited: true,
                        endpoint_delay: Time::ZERO,
                        hops: 1,
                    };
                    s.on_ack(&ack);
                }
                kind => s.on_loss(if kind == LOSS { Loss::FastRetransmit } else { Loss::Timeout }, 0, now),
            }
            let kernel = r.value[i] as f64 / 2f64.powi(32);
            out.push(kernel, s.state().fcwnd, ulp(14) * (st.fcwnd + increment) + ulp(30), exempt);
        } else if let Some(params) = dctcp {
            let kernel = r.aux[i] as f64 / 65536.0;
            if r.kind[i] == ACK {
                let alpha = update_alpha(r.aux[p] as f64 / 65536.0, params.g, r.acked[i], r.aux2[i]);
                // Two products, each rounded to the nearest 2^-16.
                out.push(kernel, alpha, ulp(15), false);
            } else {
                out.none();
            }
        }
        prev = Some(i);
    }
    Ok(out)
}
