//! The window transport's state machine driven by hand-made packet sequences, without a
//! network: what it sends, which timers it arms, what it acknowledges, each checked against
//! the RFC rule it implements (transport/window.rs module doc).

use rttlab_cc::{AckEvent, Loss, Rate, Reno, RenoParams, Time, WindowController};
use rttlab_sim::core::engine::Timer;
use rttlab_sim::scenario::{UetConfig, UetCongestion, WindowConfig};
use rttlab_sim::transport::credit::{Credit, PullPacer, Sink, Sinks};
use rttlab_sim::transport::feedback::SampleFilter;
use rttlab_sim::transport::onoff::OnOff;
use rttlab_sim::transport::window::{AckHdr, Action, DataHdr, WindowRx, WindowTx};

const MSS: u32 = 1000;

fn us(x: u64) -> Time {
    Time::from_us(x)
}

/// A controller with a fixed window and an optional pacing gap, to test the transport alone.
struct Fixed {
    cwnd: u64,
    pace: Option<Time>,
}

impl WindowController for Fixed {
    fn on_ack(&mut self, _: &AckEvent) {}
    fn on_loss(&mut self, _: Loss, _: u64, _: Time) {}
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn pacing_delay(&self) -> Option<Time> {
        self.pace
    }
}

fn reno(size: Option<u64>, cfg: WindowConfig) -> WindowTx {
    WindowTx::new(Box::new(Reno::new(RenoParams::default(), MSS as u64)), cfg, MSS, size, (Time::ZERO, Time::MAX), None, (SampleFilter::default(), false))
}

fn fixed(packets: u64, pace: Option<Time>) -> WindowTx {
    WindowTx::new(
        Box::new(Fixed { cwnd: packets * MSS as u64, pace }),
        WindowConfig::default(),
        MSS,
        None,
        (Time::ZERO, Time::MAX),
        None,
        (SampleFilter::default(), false),
    )
}

/// The data packets among `out`: `(seq, retransmit)`.
fn sent(out: &[Action]) -> Vec<(u32, bool)> {
    out.iter().filter_map(|a| if let Action::Data { seq, retransmit, .. } = a { Some((*seq, *retransmit)) } else { None }).collect()
}

fn acks(out: &[Action]) -> Vec<AckHdr> {
    out.iter().filter_map(|a| if let Action::Ack(h) = a { Some(*h) } else { None }).collect()
}

fn ack(n: u32, sack: [u32; 2], ts: Time) -> AckHdr {
    AckHdr { ack: n, sack, ece: false, ts, hops: 1, remote_queuing_ns: 0, subflow: 0 }
}

fn data(seq: u32, ce: bool, ts: Time) -> DataHdr {
    DataHdr { seq, payload: MSS, wire: MSS + 64, ce, ts, hops: 1, ack_now: false, pull_target: 0 }
}

/// Feeds an ACK with no RTT noise.
fn on_ack(w: &mut WindowTx, now: Time, a: AckHdr) -> Vec<Action> {
    let mut out = Vec::new();
    w.on_ack(now, &a, Time::ZERO, |r| r, &mut out);
    out
}

fn poll(w: &mut WindowTx, now: Time) -> Vec<Action> {
    let mut out = Vec::new();
    w.poll_transmit(now, &mut out);
    out
}

fn timer(w: &mut WindowTx, now: Time, t: Timer) -> Vec<Action> {
    let mut out = Vec::new();
    w.on_timer(now, t, &mut out);
    out
}

fn deliver(r: &mut WindowRx, now: Time, d: DataHdr) -> Vec<Action> {
    let mut out = Vec::new();
    r.on_data(now, &d, Time::ZERO, &mut out);
    out
}

fn delayed_ack_timer(r: &mut WindowRx, now: Time) -> Vec<Action> {
    let mut out = Vec::new();
    r.on_timer(now, &mut out);
    out
}

#[test]
fn the_first_window_is_the_initial_window_with_the_rto_armed_before_it() {
    let mut w = reno(None, WindowConfig::default());
    let out = poll(&mut w, Time::ZERO);
    // RFC 6298 §5.1: the timer starts with the first packet, at min_rto before any sample.
    assert_eq!(out[0], Action::Timer { timer: Timer::Rto, at: us(1000) });
    assert_eq!(sent(&out), (0..10).map(|s| (s, false)).collect::<Vec<_>>());
    assert_eq!(out[1], Action::Data { seq: 0, payload: MSS, retransmit: false, ack_now: false, pull_target: 0, subflow: 0 });
    assert!(poll(&mut w, us(1)).is_empty(), "the window is full");
}

#[test]
fn a_cumulative_ack_samples_the_rtt_and_slow_start_opens_the_window() {
    let mut w = reno(None, WindowConfig::default());
    poll(&mut w, Time::ZERO);
    let out = on_ack(&mut w, us(10), ack(2, [0, 0], Time::ZERO));
    // RFC 7323: the sample is now − TSecr; the RTO stays at min_rto (1 ms > 10 + 4·5 µs), and
    // the restarted deadline (1.01 ms) is later than the queued event, so no new event.
    assert_eq!(out[0], Action::RttSample(us(10)));
    // RFC 3465: 2 MSS acknowledged grow the window by 2 MSS: 12 packets, 8 in flight.
    assert_eq!(w.cwnd(), 12 * MSS as u64);
    assert_eq!(sent(&out), vec![(10, false), (11, false), (12, false), (13, false)]);
}

#[test]
fn three_sacked_packets_above_a_hole_make_it_lost_and_it_is_resent_once_pipe_is_below_cwnd() {
    let mut w = reno(None, WindowConfig::default());
    poll(&mut w, Time::ZERO);
    // Packet 0 is lost; 1, 2, 3 arrive: each duplicate ACK SACKs one more. RFC 6675: a SACKed
    // packet leaves the pipe, so the first two let one new packet each out (10, 11).
    for (hi, new) in [(2, 10), (3, 11)] {
        let out = on_ack(&mut w, us(10), ack(0, [1, hi], Time::ZERO));
        assert_eq!(sent(&out), vec![(new, false)]);
        assert_eq!(w.cwnd(), 10 * MSS as u64, "no loss before dupthresh");
    }
    let out = on_ack(&mut w, us(12), ack(0, [1, 4], Time::ZERO));
    // IsLost: 3 SACKed above 0. Reno halves FlightSize (12 packets): cwnd 6 packets. Pipe:
    // 12 sent − 3 SACKed − 1 lost = 8 ≥ 6, so nothing is sent.
    assert_eq!(w.cwnd(), 6 * MSS as u64);
    assert!(sent(&out).is_empty());
    for hi in [5, 6] {
        assert!(sent(&on_ack(&mut w, us(13), ack(0, [1, hi], Time::ZERO))).is_empty(), "pipe {} ≥ 6", 12 - hi - 1);
    }
    let out = on_ack(&mut w, us(14), ack(0, [1, 7], Time::ZERO));
    assert_eq!(sent(&out), vec![(0, true)], "pipe 5 < 6: the hole goes first");
    // Duplicate ACKs take no RTT sample (nothing new is acknowledged).
    assert!(!out.iter().any(|a| matches!(a, Action::RttSample(_))));
}

#[test]
fn fast_recovery_holds_the_window_until_everything_sent_before_it_is_acknowledged() {
    let mut w = reno(None, WindowConfig::default());
    poll(&mut w, Time::ZERO);
    for hi in 2..=7 {
        on_ack(&mut w, us(10), ack(0, [1, hi], Time::ZERO));
    }
    let cwnd = w.cwnd();
    // The retransmission arrives: 0..10 are acknowledged, recovery (to 12, what was sent when
    // the loss was found) goes on: no growth.
    on_ack(&mut w, us(30), ack(10, [0, 0], us(14)));
    assert_eq!(w.cwnd(), cwnd);
    // Everything up to 12 acknowledged: recovery is over and the window grows again.
    on_ack(&mut w, us(31), ack(12, [0, 0], us(14)));
    assert!(w.cwnd() > cwnd);
}

#[test]
fn a_timeout_restarts_from_one_packet_with_the_first_hole_and_backs_off() {
    let mut w = reno(None, WindowConfig::default());
    poll(&mut w, Time::ZERO);
    let out = timer(&mut w, us(1000), Timer::Rto);
    // RFC 6298 §5.5–5.6: RTO doubled to 2 ms, restarted with the retransmission of the first
    // hole; RFC 5681: cwnd one MSS.
    assert_eq!(
        out,
        vec![
            Action::TimedOut,
            Action::Timer { timer: Timer::Rto, at: us(3000) },
            Action::Data { seq: 0, payload: MSS, retransmit: true, ack_now: false, pull_target: 0, subflow: 0 }
        ]
    );
    assert_eq!(w.cwnd(), MSS as u64);
    // A second expiry doubles again: 4 ms.
    let out = timer(&mut w, us(3000), Timer::Rto);
    assert_eq!(out[..2], [Action::TimedOut, Action::Timer { timer: Timer::Rto, at: us(7000) }]);
    // RFC 6298 §5.7: a new sample ends the backoff: the deadline is min_rto after the ACK,
    // earlier than the queued event (7 ms), so a new event is queued.
    let out = on_ack(&mut w, us(3010), ack(1, [0, 0], us(3000)));
    assert_eq!(out[..2], [Action::Timer { timer: Timer::Rto, at: us(4010) }, Action::RttSample(us(10))]);
    assert!(timer(&mut w, us(7000), Timer::Rto).is_empty(), "the superseded event");
}

#[test]
fn a_restarted_rto_moves_without_an_event_and_a_stale_event_does_nothing() {
    let mut w = fixed(4, None);
    poll(&mut w, Time::ZERO);
    // An ACK at 0.5 ms (a 10 µs sample: RTO min_rto) restarts the timer for 1.5 ms: later
    // than the event queued at 1 ms.
    assert!(!on_ack(&mut w, us(500), ack(1, [0, 0], us(490))).iter().any(|a| matches!(a, Action::Timer { .. })));
    // The event at 1 ms finds the deadline later and re-arms for it.
    assert_eq!(timer(&mut w, us(1000), Timer::Rto), vec![Action::Timer { timer: Timer::Rto, at: us(1500) }]);
    assert!(timer(&mut w, us(1200), Timer::Rto).is_empty(), "not the queued event");
}

#[test]
fn the_last_ack_stops_the_timer_and_reports_done_and_a_sized_flows_last_packet_is_short() {
    let mut w = reno(Some(2500), WindowConfig::default());
    let out = poll(&mut w, Time::ZERO);
    let payloads: Vec<u32> = out.iter().filter_map(|a| if let Action::Data { payload, .. } = a { Some(*payload) } else { None }).collect();
    assert_eq!(payloads, vec![1000, 1000, 500]);
    let out = on_ack(&mut w, us(10), ack(3, [0, 0], Time::ZERO));
    assert_eq!(out, vec![Action::RttSample(us(10)), Action::Done]);
    assert!(timer(&mut w, us(1000), Timer::Rto).is_empty(), "stopped");
}

/// A connection carrying messages sends nothing until one is offered; each message starts a
/// packet of its own (2500 B: 1000, 1000, 500; then 1000 B: one packet), the controller counts
/// each one's bytes, and the connection is never done: acknowledged whole, it waits for the
/// next message.
#[test]
fn messages_start_packets_of_their_own_and_the_connection_stays_open() {
    let mut w = fixed(10, None).carrying_messages();
    assert!(poll(&mut w, Time::ZERO).is_empty(), "no message yet");
    let mut out = Vec::new();
    assert_eq!(w.offer(Time::ZERO, 2500, &mut out), 3);
    assert_eq!(w.offer(Time::ZERO, 1000, &mut out), 4);
    let payloads: Vec<(u32, u32)> = out.iter().filter_map(|a| if let Action::Data { seq, payload, .. } = a { Some((*seq, *payload)) } else { None }).collect();
    assert_eq!(payloads, vec![(0, 1000), (1, 1000), (2, 500), (3, 1000)]);
    let out = on_ack(&mut w, us(10), ack(3, [0, 0], Time::ZERO));
    assert_eq!(w.una(), 3);
    assert!(!out.contains(&Action::Done));
    let out = on_ack(&mut w, us(11), ack(4, [0, 0], Time::ZERO));
    assert!(!out.contains(&Action::Done), "a connection carrying messages stays open: {out:?}");
    let mut out = Vec::new();
    assert_eq!(w.offer(us(20), 1500, &mut out), 6);
    assert_eq!(sent(&out), vec![(4, false), (5, false)]);
    let payloads: Vec<u32> = out.iter().filter_map(|a| if let Action::Data { payload, .. } = a { Some(*payload) } else { None }).collect();
    assert_eq!(payloads, vec![1000, 500]);
}

#[test]
fn tcp_small_queues_hold_the_sender_until_the_nic_sends() {
    let cfg = WindowConfig { tsq_limit: rttlab_cc::Bytes(3000), ..WindowConfig::default() };
    let mut w = reno(None, cfg);
    assert_eq!(sent(&poll(&mut w, Time::ZERO)).len(), 3, "3000 B may wait in the NIC");
    let mut out = Vec::new();
    w.on_transmitted(us(1), MSS, &mut out);
    assert_eq!(sent(&out), vec![(3, false)]);
}

#[test]
fn the_stop_time_ends_new_data_but_not_repair() {
    let mut w = WindowTx::new(
        Box::new(Fixed { cwnd: 4 * MSS as u64, pace: None }),
        WindowConfig::default(),
        MSS,
        None,
        (Time::ZERO, us(5)),
        None,
        (SampleFilter::default(), false),
    );
    assert_eq!(sent(&poll(&mut w, Time::ZERO)).len(), 4);
    assert!(sent(&on_ack(&mut w, us(10), ack(1, [0, 0], Time::ZERO))).is_empty(), "closed: nothing new");
    assert!(timer(&mut w, us(1000), Timer::Rto).len() == 1, "re-armed for 1.01 ms");
    assert_eq!(sent(&timer(&mut w, us(1010), Timer::Rto)), vec![(1, true), (2, true), (3, true)]);
    let mut late = WindowTx::new(
        Box::new(Fixed { cwnd: 4 * MSS as u64, pace: None }),
        WindowConfig::default(),
        MSS,
        None,
        (us(50), Time::MAX),
        None,
        (SampleFilter::default(), false),
    );
    assert!(poll(&mut late, us(10)).is_empty(), "not started");
    assert_eq!(sent(&timer(&mut late, us(50), Timer::Start)).len(), 4);
}

#[test]
fn a_pacing_controller_spaces_the_sends_by_its_gap() {
    let mut w = fixed(10, Some(us(5)));
    let out = poll(&mut w, Time::ZERO);
    assert_eq!(
        out,
        vec![
            Action::Timer { timer: Timer::Rto, at: us(1000) },
            Action::Data { seq: 0, payload: MSS, retransmit: false, ack_now: false, pull_target: 0, subflow: 0 },
            Action::Timer { timer: Timer::Pace, at: us(5) }
        ]
    );
    let out = timer(&mut w, us(5), Timer::Pace);
    assert_eq!(
        out,
        vec![
            Action::Data { seq: 1, payload: MSS, retransmit: false, ack_now: false, pull_target: 0, subflow: 0 },
            Action::Timer { timer: Timer::Pace, at: us(10) }
        ]
    );
}

#[test]
fn an_application_rate_paces_new_data_and_the_window_still_governs() {
    // 1000 B packets, an application writing 1 Gbps (one packet per 8 us) during 20 us on,
    // 20 us off; a 2-packet window.
    let app = OnOff::new(Rate::from_gbps(1), us(20), us(20), Time::ZERO, u64::MAX);
    let mut w = WindowTx::new(
        Box::new(Fixed { cwnd: 2 * MSS as u64, pace: None }),
        WindowConfig::default(),
        MSS,
        None,
        (Time::ZERO, Time::MAX),
        Some(app),
        (SampleFilter::default(), false),
    );
    let out = poll(&mut w, Time::ZERO);
    assert!(sent(&out).is_empty());
    assert!(out.contains(&Action::Timer { timer: Timer::App, at: us(8) }), "{out:?}");
    assert_eq!(sent(&timer(&mut w, us(8), Timer::App)), vec![(0, false)]);
    let out = timer(&mut w, us(16), Timer::App);
    assert_eq!(sent(&out), vec![(1, false)]);
    // The window (2 packets) is full at 24 us although packet 2 is written by then ...
    assert!(sent(&poll(&mut w, us(24))).is_empty());
    // ... and when the ACK opens it at 30 us, the application is off: 2500 B were written in
    // its 20 us on, and the third packet's last byte comes 4 us into the next on period.
    let out = on_ack(&mut w, us(30), ack(2, [0, 0], us(8)));
    assert!(sent(&out).is_empty(), "{out:?}");
    assert!(out.contains(&Action::Timer { timer: Timer::App, at: us(44) }), "{out:?}");
    assert_eq!(sent(&timer(&mut w, us(44), Timer::App)), vec![(2, false)]);
}

#[test]
fn rtt_noise_is_drawn_once_per_sample_and_only_for_new_data() {
    let mut w = reno(None, WindowConfig::default());
    poll(&mut w, Time::ZERO);
    let mut out = Vec::new();
    w.on_ack(us(10), &ack(0, [1, 2], Time::ZERO), Time::ZERO, |_| panic!("a duplicate ACK takes no sample"), &mut out);
    let mut calls = 0;
    w.on_ack(
        us(12),
        &ack(1, [0, 0], Time::ZERO),
        Time::ZERO,
        |r| {
            calls += 1;
            r + us(7)
        },
        &mut out,
    );
    assert_eq!(calls, 1);
    assert!(out.contains(&Action::RttSample(us(19))));
}

#[test]
fn delayed_acks_cover_every_second_packet_and_echo_the_first_timestamp() {
    let mut r = WindowRx::new(&WindowConfig::default());
    let out = deliver(&mut r, us(100), data(0, false, us(1)));
    assert_eq!(out, vec![Action::Timer { timer: Timer::DelayedAck, at: us(1100) }, Action::Delivered { payload: MSS, wire: MSS + 64 }]);
    let out = deliver(&mut r, us(101), data(1, false, us(2)));
    // RFC 7323 §4.3: TS.Recent is the earliest unacknowledged packet's TSval.
    assert_eq!(acks(&out), vec![AckHdr { ack: 2, sack: [0, 0], ece: false, ts: us(1), hops: 1, remote_queuing_ns: 0, subflow: 0 }]);
    // The delayed-ACK timer, stopped by that ACK, sends nothing when its event comes.
    assert!(delayed_ack_timer(&mut r, us(1100)).is_empty());
}

#[test]
fn the_delayed_ack_timer_sends_a_held_ack() {
    let mut r = WindowRx::new(&WindowConfig::default());
    deliver(&mut r, us(100), data(0, false, us(1)));
    assert_eq!(acks(&delayed_ack_timer(&mut r, us(1100))), vec![ack(1, [0, 0], us(1))]);
}

#[test]
fn out_of_order_data_is_acknowledged_at_once_with_the_block_holding_it() {
    let cfg = WindowConfig { delayed_ack: false, ..WindowConfig::default() };
    let mut r = WindowRx::new(&cfg);
    deliver(&mut r, us(1), data(0, false, us(0)));
    let out = deliver(&mut r, us(2), data(2, false, us(1)));
    assert_eq!(acks(&out), vec![ack(1, [2, 3], us(1))]);
    assert_eq!(acks(&deliver(&mut r, us(3), data(3, false, us(2)))), vec![ack(1, [2, 4], us(2))], "RFC 2018: the block grows");
    assert_eq!(acks(&deliver(&mut r, us(4), data(5, false, us(3)))), vec![ack(1, [5, 6], us(3))], "a new block");
    // The hole is filled: the cumulative ACK jumps over the first block.
    assert_eq!(acks(&deliver(&mut r, us(5), data(1, false, us(4)))), vec![ack(4, [0, 0], us(4))]);
    assert_eq!(acks(&deliver(&mut r, us(6), data(4, false, us(5)))), vec![ack(6, [0, 0], us(5))]);
}

#[test]
fn a_duplicate_is_counted_not_delivered_and_acknowledged_at_once() {
    let mut r = WindowRx::new(&WindowConfig::default());
    deliver(&mut r, us(1), data(0, false, us(0)));
    deliver(&mut r, us(2), data(1, false, us(1)));
    let out = deliver(&mut r, us(3), data(0, false, us(2)));
    assert_eq!(out, vec![Action::Duplicate { payload: MSS }, Action::Ack(ack(2, [0, 0], us(2)))]);
}

#[test]
fn dctcp_ce_changes_acknowledge_what_was_held_with_the_old_ece() {
    let mut r = WindowRx::new(&WindowConfig::default());
    deliver(&mut r, us(1), data(0, false, us(0)));
    // DCTCP §3.1: packet 1 carries CE while packet 0 waits: ACK 0 now with ECE = 0, then, as
    // Linux's ICSK_ACK_NOW, packet 1 at once with ECE = 1.
    let out = deliver(&mut r, us(2), data(1, true, us(1)));
    assert_eq!(acks(&out), vec![ack(1, [0, 0], us(0)), AckHdr { ece: true, ..ack(2, [0, 0], us(1)) }]);
    // No change: packet 2 waits for a partner.
    assert!(acks(&deliver(&mut r, us(3), data(2, true, us(2)))).is_empty());
    // Back to no CE: the held CE packet goes with ECE = 1, packet 3 at once with ECE = 0.
    let out = deliver(&mut r, us(4), data(3, false, us(3)));
    assert_eq!(acks(&out), vec![AckHdr { ece: true, ..ack(3, [0, 0], us(2)) }, ack(4, [0, 0], us(3))]);
    // A change with nothing held is acknowledged at once too.
    assert_eq!(acks(&deliver(&mut r, us(5), data(4, true, us(4)))), vec![AckHdr { ece: true, ..ack(5, [0, 0], us(4)) }]);
}

#[test]
fn without_delayed_acks_every_packet_is_acknowledged_with_its_own_ce() {
    let cfg = WindowConfig { delayed_ack: false, ..WindowConfig::default() };
    let mut r = WindowRx::new(&cfg);
    for (seq, ce) in [(0, true), (1, false), (2, true)] {
        assert_eq!(acks(&deliver(&mut r, us(seq as u64 + 1), data(seq, ce, Time::ZERO))), vec![AckHdr { ece: ce, ..ack(seq + 1, [0, 0], Time::ZERO) }]);
    }
}

#[test]
fn acks_echo_the_hop_count_and_the_receivers_queuing() {
    let cfg = WindowConfig { delayed_ack: false, ..WindowConfig::default() };
    let mut r = WindowRx::new(&cfg);
    let mut out = Vec::new();
    r.on_data(us(10), &DataHdr { hops: 3, ..data(0, false, Time::ZERO) }, Time(2_500_000), &mut out);
    assert_eq!(acks(&out), vec![AckHdr { hops: 3, remote_queuing_ns: 2500, ..ack(1, [0, 0], Time::ZERO) }]);
}

#[test]
fn the_controller_sees_the_endpoint_delay_and_hops() {
    struct Seen(std::sync::Arc<std::sync::Mutex<(Time, u8)>>);
    impl WindowController for Seen {
        fn on_ack(&mut self, a: &AckEvent) {
            *self.0.lock().unwrap() = (a.endpoint_delay, a.hops);
        }
        fn on_loss(&mut self, _: Loss, _: u64, _: Time) {}
        fn cwnd(&self) -> u64 {
            4000
        }
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new((Time::ZERO, 0)));
    let mut w =
        WindowTx::new(Box::new(Seen(seen.clone())), WindowConfig::default(), MSS, None, (Time::ZERO, Time::MAX), None, (SampleFilter::default(), false));
    poll(&mut w, Time::ZERO);
    let mut out = Vec::new();
    // Swift §3.1: remote queuing (echoed, 2 µs) plus this ACK's own NIC-Rx wait (1 µs).
    w.on_ack(us(20), &AckHdr { hops: 4, remote_queuing_ns: 2000, ..ack(1, [0, 0], Time::ZERO) }, us(1), |r| r, &mut out);
    assert_eq!(*seen.lock().unwrap(), (us(3), 4));
}

/// Ultra Ethernet's configuration: a 4 KB SACK threshold (an ACK every four 1064 B packets,
/// the first and the fourth after it), a 100 µs timeout.
fn uet() -> WindowConfig {
    WindowConfig {
        delayed_ack: false,
        uet: Some(UetConfig { sack_threshold: rttlab_cc::Bytes(4096), rto: Some(us(100)), ..UetConfig::default() }),
        ..WindowConfig::default()
    }
}

/// A controller that records the acknowledged bytes it is given, for the UET sender's tests.
struct Counted(std::sync::Arc<std::sync::Mutex<Vec<u64>>>, u64);

impl WindowController for Counted {
    fn on_ack(&mut self, a: &AckEvent) {
        self.0.lock().unwrap().push(a.acked_bytes);
    }
    fn on_loss(&mut self, _: Loss, _: u64, _: Time) {}
    fn cwnd(&self) -> u64 {
        self.1
    }
}

#[test]
fn a_uet_receiver_acknowledges_the_first_packet_every_threshold_a_mark_and_a_request_at_once() {
    let mut r = WindowRx::new(&uet());
    let mut out = Vec::new();
    let mut feed = |r: &mut WindowRx, d: DataHdr| {
        out.clear();
        r.on_data(us(1), &d, Time::ZERO, &mut out);
        acks(&out).first().map(|a| (a.ack, a.bitmap(), a.ece))
    };
    // The first packet at once; then one per 4096 B received: 1064 B packets, the fourth.
    assert_eq!(feed(&mut r, data(0, false, us(0))), Some((1, (2, 0), false)));
    assert_eq!((1..=3).map(|s| feed(&mut r, data(s, false, us(0)))).collect::<Vec<_>>(), vec![None, None, None]);
    assert_eq!(feed(&mut r, data(4, false, us(0))), Some((5, (6, 0), false)), "4 × 1064 B ≥ 4096 B");
    // A mark at once, its bitmap from the marked packet itself, the mark echoed.
    assert_eq!(feed(&mut r, data(5, true, us(0))), Some((6, (5, 0), true)));
    // Out of order: 8 and 9 are placed; the request on 9 brings an ACK at once, bitmap from 9;
    // the next ACK (6 fills nothing: 7 is missing) reports 8 and 9 from base 7.
    assert_eq!(feed(&mut r, data(8, false, us(0))), None);
    assert_eq!(feed(&mut r, DataHdr { ack_now: true, ..data(9, false, us(0)) }), Some((6, (9, 0b1), false)));
    assert_eq!(feed(&mut r, data(6, false, us(0))), None);
    // 7 closes the gap: the request still owed brings an ACK (`_ack_request`).
    assert_eq!(feed(&mut r, data(7, false, us(0))), Some((10, (11, 0), false)));
    // A duplicate at once; a trimmed packet it has is acknowledged, one it lacks NACKed.
    assert_eq!(feed(&mut r, data(3, false, us(0))), Some((10, (11, 0), false)));
    out.clear();
    r.on_trimmed(12, (true, 0), us(7), &mut out);
    assert_eq!(out, vec![Action::Nack { seq: 12, last_hop: true, ts: us(7) }]);
    out.clear();
    r.on_trimmed(2, (false, 0), us(7), &mut out);
    assert_eq!(acks(&out).len(), 1);
    // TCP's receiver reads no trimmed headers.
    out.clear();
    WindowRx::new(&WindowConfig::default()).on_trimmed(0, (false, 0), us(7), &mut out);
    assert!(out.is_empty());
}

#[test]
fn a_uet_sender_counts_selective_acks_resends_on_a_nack_and_times_out_each_packet() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut w = WindowTx::new(
        Box::new(Counted(seen.clone(), 4 * MSS as u64)),
        uet(),
        MSS,
        Some(8 * MSS as u64),
        (Time::ZERO, Time::MAX),
        None,
        (SampleFilter::default(), false),
    );
    let mut out = Vec::new();
    w.on_timer(Time::ZERO, Timer::Start, &mut out);
    // Four packets fill the window; the fourth asks for an ACK at once.
    let asks: Vec<bool> = out.iter().filter_map(|a| if let Action::Data { ack_now, .. } = a { Some(*ack_now) } else { None }).collect();
    assert_eq!(asks, vec![false, false, false, true]);
    // Packet 0 trimmed: resent at once (the NACK took it out of flight), asking for an ACK.
    out.clear();
    w.on_nack(us(5), 0, &mut out);
    assert_eq!(out, vec![Action::Data { seq: 0, payload: MSS, retransmit: true, ack_now: true, pull_target: 0, subflow: 0 }]);
    // An ACK of nothing cumulative with 1..=3 in its bitmap: 3000 B newly acknowledged, an RTT
    // sample, and three new packets into the window.
    out.clear();
    w.on_ack(us(10), &AckHdr::uet(0, (1, 0b111), false, us(0), 1), Time::ZERO, |r| r, &mut out);
    assert_eq!(*seen.lock().unwrap(), vec![3000]);
    assert!(out.contains(&Action::RttSample(us(10))));
    assert_eq!(sent(&out), vec![(4, false), (5, false), (6, false)]);
    // The cumulative ACK of 0..4 counts only packet 0 anew.
    out.clear();
    w.on_ack(us(12), &AckHdr::uet(4, (5, 0), false, us(5), 1), Time::ZERO, |r| r, &mut out);
    assert_eq!(seen.lock().unwrap()[1], 1000);
    // The timer started with packet 0 at 0 and fires at 100 µs: everything since is
    // acknowledged or younger, and it waits for the earliest in flight, 4, 5 and 6 (sent at
    // 10 µs), which time out at 110 µs and are resent; 7 (sent at 12 µs) is next.
    out.clear();
    w.on_timer(us(100), Timer::Rto, &mut out);
    assert_eq!(out, vec![Action::Timer { timer: Timer::Rto, at: us(110) }]);
    out.clear();
    w.on_timer(us(110), Timer::Rto, &mut out);
    let timeouts = out.iter().filter(|a| **a == Action::TimedOut).count();
    assert_eq!((timeouts, sent(&out)), (3, vec![(4, true), (5, true), (6, true)]));
    assert!(out.contains(&Action::Timer { timer: Timer::Rto, at: us(112) }));
}

/// The window transport over a channel that drops, reorders and delays at random (proptest):
/// the receiver never counts more distinct bytes than the sender sent or the flow's size, every
/// timer the state machine arms can fire without harm, and once the channel turns clean the
/// connection always completes, delivering exactly its size and reporting `Done` — whatever the
/// loss and reordering before (so the SACK scoreboard and the timers stayed consistent).
mod channel_properties {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::Index;

    /// A packet on the channel: data towards the receiver, or an ACK towards the sender.
    #[derive(Clone, Copy, Debug)]
    enum InFlight {
        Data(DataHdr),
        Ack(AckHdr),
        /// Ultra Ethernet's NACK of a trimmed packet.
        Nack(u32),
        /// Receiver credits: a pull (cumulative quanta) towards the sender, a request to send
        /// (its pull target) towards the receiver.
        Pull(u64),
        Rts(u64),
    }

    /// The harness's one receiver, as a pull pacer reads it.
    struct OneSink<'a>(&'a mut WindowRx);
    impl Sinks for OneSink<'_> {
        fn sink(&mut self, _: u32, _: u32) -> Option<&mut Sink> {
            self.0.sink.as_mut()
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Deliver the packet at this position (reordering), or drop it.
        Deliver(Index),
        Drop(Index),
        /// A switch trims the packet at this position, if it is data: its headers go on.
        Trim(Index),
        /// Jump to the earliest pending timer and fire it.
        Fire,
        /// Let time pass.
        Wait(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<Index>().prop_map(Op::Deliver),
            1 => any::<Index>().prop_map(Op::Drop),
            1 => any::<Index>().prop_map(Op::Trim),
            1 => Just(Op::Fire),
            1 => any::<u16>().prop_map(Op::Wait),
        ]
    }

    struct Harness {
        w: WindowTx,
        r: WindowRx,
        now: Time,
        channel: Vec<InFlight>,
        timers: Vec<(Time, Timer)>,
        sent_bytes: u64,
        delivered: u64,
        done: bool,
        /// Receiver credits: the receiver's pacer and when it acts next.
        pacer: Option<PullPacer>,
        pacer_at: Option<Time>,
    }

    impl Harness {
        /// Carries out what the state machine asked for.
        fn apply(&mut self, out: Vec<Action>) {
            for a in out {
                match a {
                    Action::Data { seq, payload, ack_now, pull_target, .. } => {
                        self.sent_bytes += payload as u64;
                        self.channel.push(InFlight::Data(DataHdr { seq, payload, wire: payload + 64, ce: false, ts: self.now, hops: 1, ack_now, pull_target }));
                        let mut more = Vec::new();
                        self.w.on_transmitted(self.now, payload, &mut more);
                        self.apply(more);
                    }
                    Action::Ack(h) => self.channel.push(InFlight::Ack(h)),
                    Action::Nack { seq, .. } => self.channel.push(InFlight::Nack(seq)),
                    Action::Timer { timer, at } => self.timers.push((at, timer)),
                    Action::Delivered { payload, .. } => self.delivered += payload as u64,
                    Action::Done => self.done = true,
                    Action::RequestToSend { pull_target } => self.channel.push(InFlight::Rts(pull_target)),
                    Action::RequestPull => {
                        let pacer = self.pacer.as_mut().expect("credits");
                        if pacer.request(0, 0, self.r.sink.as_mut().expect("credits")) {
                            self.pacer_at = Some(self.now);
                        }
                    }
                    Action::RttSample(_) | Action::Duplicate { .. } | Action::TimedOut | Action::Acked(_) => {}
                }
            }
        }

        /// Moves the clock to `to`, firing every timer due on the way at its own time (as the
        /// event queue would).
        fn advance(&mut self, to: Time) {
            while self.timers.iter().any(|&(at, _)| at <= to) {
                self.fire();
            }
            self.now = self.now.max(to);
        }

        fn deliver(&mut self, i: usize) {
            self.advance(self.now + Time::from_ns(100));
            let mut out = Vec::new();
            match self.channel.remove(i) {
                InFlight::Data(d) => self.r.on_data(self.now, &d, Time::ZERO, &mut out),
                InFlight::Ack(a) => self.w.on_ack(self.now, &a, Time::ZERO, |r| r, &mut out),
                InFlight::Nack(seq) => self.w.on_nack(self.now, seq, &mut out),
                InFlight::Pull(pull) => self.w.on_pull(self.now, pull, &mut out),
                InFlight::Rts(target) => self.r.on_request_to_send(target, &mut out),
            }
            self.apply(out);
        }

        /// The data packet at `i`, if it is one, trimmed: its headers reach the receiver.
        fn trim(&mut self, i: usize) {
            let InFlight::Data(d) = self.channel[i] else { return };
            self.channel.remove(i);
            self.advance(self.now + Time::from_ns(100));
            let mut out = Vec::new();
            self.r.on_trimmed(d.seq, (false, d.pull_target), d.ts, &mut out);
            self.apply(out);
        }

        fn fire(&mut self) {
            let first = (0..self.timers.len()).min_by_key(|&k| self.timers[k].0);
            if let Some(at) = self.pacer_at.filter(|&at| first.is_none_or(|k| at <= self.timers[k].0)) {
                self.now = self.now.max(at);
                let pull = self.pacer.as_mut().expect("credits").serve(self.now, &mut OneSink(&mut self.r));
                self.pacer_at = pull.map(|p| p.next);
                self.channel.extend(pull.map(|p| InFlight::Pull(p.pull)));
                return;
            }
            let Some(k) = first else { return };
            let (at, timer) = self.timers.remove(k);
            self.now = self.now.max(at);
            let mut out = Vec::new();
            match timer {
                Timer::DelayedAck => self.r.on_timer(self.now, &mut out),
                _ => self.w.on_timer(self.now, timer, &mut out),
            }
            self.apply(out);
        }

        fn check(&self, size: u64) -> Result<(), TestCaseError> {
            prop_assert!(self.delivered <= self.sent_bytes, "delivered {} > sent {}", self.delivered, self.sent_bytes);
            prop_assert!(self.delivered <= size, "delivered {} > size {size}", self.delivered);
            Ok(())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]

        /// TCP, and Ultra Ethernet under NSCC's window, receiver credits and both (a credit
        /// window of three packets, so that pulls, their losses and requests to send matter).
        #[test]
        fn any_loss_and_reordering_is_repaired(packets in 1u64..60, delayed_ack in any::<bool>(), uet in 0..4usize, ops in prop::collection::vec(op(), 0..400)) {
            let size = packets * MSS as u64 - (packets % 3) * 100;
            // Ultra Ethernet: an ACK every other packet, a 100 µs timeout.
            let congestion = [UetCongestion::Nscc, UetCongestion::Rccc, UetCongestion::Both].get(uet.wrapping_sub(1)).copied();
            let uet = congestion.map(|congestion| UetConfig { sack_threshold: rttlab_cc::Bytes(2 * MSS as u64), rto: Some(us(100)), congestion, credit_window: None, oversubscription: None });
            let cfg = WindowConfig { delayed_ack: delayed_ack && uet.is_none(), uet, ..WindowConfig::default() };
            let credits = congestion.filter(|c| c.credits());
            let window = 3 * (MSS as u64 + 64);
            let mut w = reno(Some(size), cfg.clone());
            if let Some(c) = credits {
                w = w.with_credit(Credit::new(window, (MSS + 64, 64), us(10)), c.sender_window());
            }
            let pacer = credits.map(|_| PullPacer::new(Rate::from_gbps(10), window));
            let mut h = Harness { r: WindowRx::new(&cfg), w, now: Time::ZERO, channel: Vec::new(), timers: Vec::new(), sent_bytes: 0, delivered: 0, done: false, pacer, pacer_at: None };
            let mut out = Vec::new();
            h.w.on_timer(Time::ZERO, Timer::Start, &mut out);
            h.apply(out);
            for op in ops {
                match op {
                    Op::Deliver(i) if !h.channel.is_empty() => h.deliver(i.index(h.channel.len())),
                    Op::Drop(i) if !h.channel.is_empty() => {
                        h.channel.remove(i.index(h.channel.len()));
                    }
                    Op::Trim(i) if !h.channel.is_empty() => h.trim(i.index(h.channel.len())),
                    Op::Fire => h.fire(),
                    Op::Wait(ns) => h.advance(h.now + Time::from_ns(ns as u64)),
                    _ => {}
                }
                h.check(size)?;
            }
            // A clean channel from here on: in order, nothing lost; timers fire when idle.
            for _ in 0..100_000 {
                if h.done {
                    break;
                }
                if h.channel.is_empty() {
                    prop_assert!(!h.timers.is_empty() || h.pacer_at.is_some(), "stalled: nothing in flight and no timer armed (delivered {} of {size}, sent {})", h.delivered, h.sent_bytes);
                    h.fire();
                } else {
                    h.deliver(0);
                }
                h.check(size)?;
            }
            prop_assert!(h.done, "not done after the channel turned clean");
            prop_assert_eq!(h.delivered, size);
        }
    }
}

/// What a subflow's controller was told: an ACK's newly acknowledged bytes and RTT sample, or
/// a loss.
#[derive(Debug, PartialEq)]
enum Told {
    Ack(u64, Option<Time>),
    Loss(Loss),
}

/// A fixed window of `packets` that keeps what it is told in `log`.
struct Telling {
    packets: u64,
    log: std::sync::Arc<std::sync::Mutex<Vec<Told>>>,
}

impl WindowController for Telling {
    fn on_ack(&mut self, a: &AckEvent) {
        self.log.lock().unwrap().push(Told::Ack(a.acked_bytes, a.rtt));
    }
    fn on_loss(&mut self, loss: Loss, _: u64, _: Time) {
        self.log.lock().unwrap().push(Told::Loss(loss));
    }
    fn cwnd(&self) -> u64 {
        self.packets * MSS as u64
    }
}

/// `transport.subflows`: two subflows of two packets each send in turn; each ACK's RTT sample
/// goes to the subflow its path echoes, a loss to the subflow that sent the packet, and a
/// packet's bytes to the subflow that sent it when first acknowledged, SACKed (in order on its
/// own path) or cumulatively.
#[test]
fn subflows_take_their_own_packets_samples_and_losses() {
    let logs: [std::sync::Arc<std::sync::Mutex<Vec<Told>>>; 2] = Default::default();
    let cc = |i: usize| Box::new(Telling { packets: 2, log: logs[i].clone() });
    let cfg = WindowConfig { dupthresh: 3, ..WindowConfig::default() };
    let mut w = WindowTx::new(cc(0), cfg, MSS, None, (Time::ZERO, Time::MAX), None, (SampleFilter::default(), false))
        .with_subflows([cc(1) as Box<dyn WindowController>]);
    let on = |out: &[Action]| -> Vec<(u32, u8)> {
        out.iter().filter_map(|a| if let Action::Data { seq, subflow, .. } = a { Some((*seq, *subflow)) } else { None }).collect()
    };
    assert_eq!(on(&poll(&mut w, Time::ZERO)), vec![(0, 0), (1, 1), (2, 0), (3, 1)], "in turn, two packets each");
    let sub = |s: u16, a: AckHdr| AckHdr { subflow: s, ..a };
    // Packet 0 (subflow 0) acknowledged after 10 us: its window frees a packet, the next goes on it.
    assert_eq!(on(&on_ack(&mut w, us(10), sub(0, ack(1, [0, 0], Time::ZERO)))), vec![(4, 0)]);
    assert_eq!(on(&on_ack(&mut w, us(30), sub(1, ack(2, [0, 0], Time::ZERO)))), vec![(5, 1)]);
    assert_eq!(*logs[0].lock().unwrap(), vec![Told::Ack(1000, Some(us(10)))]);
    assert_eq!(*logs[1].lock().unwrap(), vec![Told::Ack(1000, Some(us(30)))]);
    // Packet 2 (subflow 0) lost: 3, 4 and 5 SACKed above it, each its subflow's sample and
    // freeing it a packet. Only subflow 0 takes the loss; the retransmission goes on the next
    // subflow in turn (1), then new data on the other.
    assert_eq!(on(&on_ack(&mut w, us(31), sub(1, ack(2, [3, 4], Time::ZERO)))), vec![(6, 1)]);
    assert_eq!(on(&on_ack(&mut w, us(32), sub(0, ack(2, [3, 5], us(10))))), vec![(7, 0)]);
    let out = on_ack(&mut w, us(33), sub(1, ack(2, [3, 6], us(30))));
    assert_eq!(sent(&out), vec![(2, true), (8, false)]);
    assert_eq!(on(&out), vec![(2, 1), (8, 0)]);
    assert_eq!(logs[0].lock().unwrap()[1..], [Told::Ack(1000, Some(us(22))), Told::Loss(Loss::FastRetransmit)]);
    assert_eq!(logs[1].lock().unwrap()[1..], [Told::Ack(1000, Some(us(31))), Told::Ack(1000, Some(us(3)))]);
    // The retransmission's ACK covers 2 to 5: subflow 1, which resent 2, takes its bytes and the
    // sample; 3 to 5 were acknowledged already, and subflow 0 is told nothing.
    on_ack(&mut w, us(50), sub(1, ack(6, [0, 0], us(33))));
    assert_eq!(logs[1].lock().unwrap().last(), Some(&Told::Ack(1000, Some(us(17)))));
    assert_eq!(logs[0].lock().unwrap().len(), 3);
}

/// With subflows on paths of different delays, a SACK block grows below as well as at its top:
/// packet 2 (subflow 0) arrives first, then packet 1 (subflow 1) extends its block down to 1.
/// The second ACK's news is below the block's top, found all the same: subflow 1 takes its
/// bytes and its sample.
#[test]
fn with_subflows_a_sack_block_that_grows_below_is_read_whole() {
    let logs: [std::sync::Arc<std::sync::Mutex<Vec<Told>>>; 2] = Default::default();
    let cc = |i: usize| Box::new(Telling { packets: 2, log: logs[i].clone() });
    let mut w = WindowTx::new(cc(0), WindowConfig::default(), MSS, None, (Time::ZERO, Time::MAX), None, (SampleFilter::default(), false))
        .with_subflows([cc(1) as Box<dyn WindowController>]);
    assert_eq!(sent(&poll(&mut w, Time::ZERO)).len(), 4);
    on_ack(&mut w, us(10), AckHdr { subflow: 0, ..ack(0, [2, 3], Time::ZERO) });
    on_ack(&mut w, us(30), AckHdr { subflow: 1, ..ack(0, [1, 3], Time::ZERO) });
    assert_eq!(*logs[0].lock().unwrap(), vec![Told::Ack(1000, Some(us(10)))]);
    assert_eq!(*logs[1].lock().unwrap(), vec![Told::Ack(1000, Some(us(30)))]);
}
