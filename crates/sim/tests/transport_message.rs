//! The message transport's state machine without a network: when segments may go (TIMELY §3.3
//! pacing, the outstanding cap, start/stop, application-limited and on-demand sources), the
//! receiving NIC's ACK with its ECN echo, the completion's RTT sample (§3.1), and go-back-N
//! (IBA vol. 1 §9.7): PSNs, NAKs, duplicates, rewinds and the local ACK timeout, by hand and
//! over a random lossy channel.

use rttlab_cc::{Completion, LineRate, Rate, RateController, Time};
use rttlab_sim::core::engine::{rng_stream, Stream};
use rttlab_sim::transport::feedback::SampleFilter;
use rttlab_sim::transport::message::{completion_rtt, psn_before, App, Arrival, HostWait, MessageRx, MessageTx, Unacked};

const G10: Rate = Rate(10_000_000_000);
const SEG: u64 = 16_000;
const CAP: u64 = u64::MAX;
/// Payload per packet: a 16 000 B segment is 16 packets.
const PPP: u32 = 1000;

fn us(x: u64) -> Time {
    Time::from_us(x)
}

fn conn(size: Option<u64>) -> MessageTx {
    MessageTx::new(Box::new(LineRate(G10)), size, None, false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), false))
}

/// Counting what the host holds back from time 0, on a 10 Gbps link.
fn wait() -> HostWait {
    HostWait::new(Time::ZERO, G10)
}

fn rng() -> rttlab_sim::core::engine::Rng {
    rng_stream(1, Stream::Flow(0, 0))
}

#[test]
fn the_first_segment_goes_at_once_and_the_next_after_its_serialization_at_the_rate() {
    let (mut m, mut r) = (conn(None), rng());
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time::ZERO));
    assert_eq!(m.release(Time::ZERO, SEG, PPP), Unacked { first_psn: 0, end_psn: 16, bytes: 16_000, t_send: Time::ZERO, released_before: 0, rate: G10 });
    // 16 000 B at 10 Gbps: 12.8 µs.
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time(12_800_000)));
    // Asked later than that, it may go at once.
    assert_eq!(m.release_time(us(20), SEG, CAP, &mut r), Some(us(20)));
}

#[test]
fn the_outstanding_cap_holds_the_sender_until_a_completion() {
    let (mut m, mut r) = (conn(None), rng());
    for _ in 0..2 {
        m.release(Time::ZERO, SEG, PPP);
    }
    assert_eq!(m.release_time(us(30), SEG, 2 * SEG, &mut r), None, "32 000 B outstanding: at the cap");
    assert_eq!(m.pop_acked(16).map(|u| u.bytes), Some(16_000), "an ACK of PSNs 0..16 completes the first segment");
    assert_eq!(m.pop_acked(16), None);
    assert!(!m.done());
    assert_eq!(m.release_time(us(40), SEG, 2 * SEG, &mut r), Some(us(40)));
}

#[test]
fn a_sized_flow_ends_with_a_short_segment_and_is_done_when_all_is_acknowledged() {
    let (mut m, mut r) = (conn(Some(40_000)), rng());
    let mut sizes = Vec::new();
    while let Some(t) = m.release_time(Time::ZERO, SEG, CAP, &mut r) {
        sizes.push(m.release(t, SEG, PPP).bytes);
    }
    assert_eq!(sizes, vec![16_000, 16_000, 8_000]);
    assert_eq!(m.pop_acked(40).map(|u| u.end_psn), Some(16), "one cumulative ACK completes all three, oldest first");
    assert!(!m.done());
    assert_eq!(m.pop_acked(40).map(|u| u.end_psn), Some(32));
    assert_eq!(m.pop_acked(40).map(|u| u.end_psn), Some(40));
    assert!(m.done(), "everything acknowledged");
}

#[test]
fn start_and_stop_bound_the_release_times() {
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, false, (us(5), us(10)), wait(), (SampleFilter::default(), false));
    let mut r = rng();
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(us(5)));
    m.release(us(5), SEG, PPP);
    assert_eq!(m.release_time(us(5), SEG, CAP, &mut r), None, "the next would go at 17.8 µs, after the stop");
}

#[test]
fn an_application_limited_source_sends_its_messages_as_they_arrive() {
    let app = App { rate: Rate(1_000_000_000), message: 1000, poisson: false, next_message: Time::ZERO };
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, Some(app), false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), false));
    let mut r = rng();
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time::ZERO));
    assert_eq!(m.release(Time::ZERO, SEG, PPP).bytes, 1000, "one message is there");
    // The next 1000 B message arrives after 8 µs at 1 Gbps (later than the 0.8 µs pacing gap).
    assert_eq!(m.release_time(us(1), SEG, CAP, &mut r), Some(us(8)));
    // By 20 µs two more have arrived (at 8 and 16 µs): they go as one segment.
    assert_eq!(m.release_time(us(20), SEG, CAP, &mut r), Some(us(20)));
    assert_eq!(m.release(us(20), SEG, PPP).bytes, 2000);
}

#[test]
fn an_on_demand_connection_sends_only_what_is_offered() {
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, true, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), false));
    let mut r = rng();
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), None);
    m.offer(Time::ZERO, 20_000);
    let mut sizes = Vec::new();
    while let Some(t) = m.release_time(Time::ZERO, SEG, CAP, &mut r) {
        sizes.push(m.release(t, SEG, PPP).bytes);
    }
    assert_eq!(sizes, vec![16_000, 4_000]);
}

#[test]
fn the_host_counts_the_wait_for_the_rate_and_the_bytes_it_holds() {
    // 1 Gbps on a 10 Gbps link; 32 000 B offered at once go as two 16 000 B segments.
    let mut m = MessageTx::new(Box::new(LineRate(Rate(1_000_000_000))), None, None, true, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), false));
    let mut r = rng();
    m.offer(Time::ZERO, 32_000);
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time::ZERO));
    m.release(Time::ZERO, SEG, PPP);
    // The second may go at once but for the rate: 16 000 B at 1 Gbps is 128 µs.
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(us(128)));
    assert_eq!(m.release_time(us(128), SEG, CAP, &mut r), Some(us(128)), "asked again when its time comes");
    m.release(us(128), SEG, PPP);
    assert_eq!((m.wait.segments, m.wait.below_line_rate, m.wait.rate_wait), (2, 2, us(128)));
    // 16 000 B waited from 0 to 128 µs: over 256 µs, 8000 B on average.
    assert_eq!(m.host_queue_avg_bytes(us(256)), Some(8000.0));

    // An application's messages count from their arrival, though taken in later: 1000 B at
    // 8 and 16 µs taken in at 20 µs wait 12 + 4 µs, 800 B on average over 20 µs; at line rate
    // nothing waits for the rate.
    let app = App { rate: Rate(1_000_000_000), message: 1000, poisson: false, next_message: Time::ZERO };
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, Some(app), false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), false));
    m.release_time(Time::ZERO, SEG, CAP, &mut r);
    m.release(Time::ZERO, SEG, PPP);
    assert_eq!(m.release_time(us(20), SEG, CAP, &mut r), Some(us(20)));
    m.release(us(20), SEG, PPP);
    assert_eq!(m.host_queue_avg_bytes(us(20)), Some(800.0));
    assert_eq!((m.wait.segments, m.wait.below_line_rate, m.wait.rate_wait), (2, 0, Time::ZERO));
    // A backlogged connection has no application queue to speak of.
    assert_eq!(conn(None).host_queue_avg_bytes(us(20)), None);
}

#[test]
fn the_receiver_acknowledges_on_the_last_packet_echoing_any_ce_mark_of_the_segment() {
    let mut r = MessageRx::default();
    assert_eq!(r.on_data(0, false, false), Arrival::Deliver { ack: None });
    assert_eq!(r.on_data(1, true, false), Arrival::Deliver { ack: None });
    assert_eq!(r.on_data(2, false, true), Arrival::Deliver { ack: Some((3, true)) }, "a mark on any packet of the segment");
    assert_eq!(r.on_data(3, false, true), Arrival::Deliver { ack: Some((4, false)) }, "the next segment starts clean");
}

#[test]
fn the_completion_rtt_leaves_out_the_segments_serialization() {
    // 64 KB at 10 Gbps: 52.4288 µs of a 60 µs completion is serialization (TIMELY §3.1).
    assert_eq!(completion_rtt(us(100), us(40), 65_536, G10), Time(7_571_200));
    // With NIC pacing at 5 Gbps the pacer's serialization is left out instead (§5).
    assert_eq!(completion_rtt(us(200), us(40), 65_536, Rate(5_000_000_000)), Time(55_142_400));
    assert_eq!(completion_rtt(us(41), us(40), 65_536, G10), Time::ZERO, "never negative");
}

#[test]
fn the_controller_gets_every_completion_with_the_rate_the_connection_sent_at() {
    struct Seen(std::sync::Arc<std::sync::Mutex<Vec<Completion<'static>>>>);
    impl RateController for Seen {
        fn on_completion(&mut self, c: &Completion) {
            assert!(c.int.is_empty());
            self.0.lock().unwrap().push(Completion { int: &[], ..*c });
        }
        fn rate(&self) -> Rate {
            G10
        }
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let app = App { rate: Rate(2_000_000_000), message: 4000, poisson: false, next_message: Time::ZERO };
    let mut m = MessageTx::new(Box::new(Seen(seen.clone())), None, Some(app), false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), false));
    m.release_time(Time::ZERO, SEG, CAP, &mut rng());
    let first = m.release(Time::ZERO, SEG, PPP);
    // The next message arrives at 16 us (4000 B at 2 Gbps) and is released then.
    assert_eq!(m.release_time(us(16), SEG, CAP, &mut rng()), Some(us(16)));
    m.release(us(16), SEG, PPP);
    // The first segment completes at 20 us: 8000 B handed to the NIC in 20 us, 3.2 Gbps.
    m.on_completion(us(20), us(3), false, &first, &[]);
    // 4000 B acknowledged of 8000 sent.
    let expect = Completion { now: us(20), rtt: us(3), acked_bytes: 4000, sending_rate: Some(Rate(3_200_000_000)), snd_una: 4000, snd_nxt: 8000, int: &[] };
    assert_eq!(*seen.lock().unwrap(), vec![expect]);
}

#[test]
fn the_receiver_naks_the_first_packet_beyond_a_gap_once_and_reacknowledges_duplicates() {
    let mut r = MessageRx::default();
    assert_eq!(r.on_data(0, false, false), Arrival::Deliver { ack: None });
    // PSN 1 is lost.
    assert_eq!(r.on_data(2, true, false), Arrival::Nak(1), "a PSN sequence error names the PSN expected");
    assert_eq!(r.on_data(3, false, true), Arrival::Discard, "one NAK per gap");
    // The sender went back to 1.
    assert_eq!(r.on_data(1, false, false), Arrival::Deliver { ack: None });
    assert_eq!(r.on_data(2, false, false), Arrival::Deliver { ack: None });
    assert_eq!(r.on_data(3, false, true), Arrival::Deliver { ack: Some((4, false)) }, "the discarded copy's CE mark does not count");
    assert_eq!(r.on_data(3, false, true), Arrival::Duplicate { ack: Some(4) }, "a copy of a segment's last packet is acknowledged again");
    assert_eq!(r.on_data(2, false, false), Arrival::Duplicate { ack: None });
    assert_eq!(r.on_data(6, false, false), Arrival::Nak(4), "a new gap is NAKed again");
}

#[test]
fn a_nak_completes_what_precedes_it_and_sends_the_nic_back_to_its_psn() {
    let mut m = conn(None);
    m.release(us(0), SEG, PPP);
    m.release(us(1), SEG, PPP);
    m.release(us(2), SEG, PPP);
    // The NIC has sent PSNs 0..=20; the receiver lost 18.
    for psn in 0..=20 {
        m.on_transmit(us(3), psn, us(100));
    }
    assert!(!m.stale(18));
    let done: Vec<_> = std::iter::from_fn(|| m.pop_acked(18)).map(|u| u.first_psn).collect();
    assert_eq!(done, vec![0], "PSNs 0..16 are the first segment, complete; 16..32 is not");
    assert!(m.must_rewind(18, true));
    let again: Vec<_> = m.rewind(18).map(|u| (u.first_psn, u.end_psn, u.t_send)).collect();
    assert_eq!(again, vec![(16, 32, us(1)), (32, 48, us(2))], "everything unacknowledged goes again, keeping its first send time");
    assert!(m.on_transmit(us(4), 18, us(100)).0, "PSN 18 had been on the wire: a retransmission");
    assert!(!m.on_transmit(us(4), 21, us(100)).0, "PSN 21 had not");
    assert!(m.stale(15), "an answer about PSNs already acknowledged asks for nothing");
}

#[test]
fn an_ack_ahead_of_the_nic_after_a_timeout_sends_it_forward_not_back() {
    let mut m = conn(None);
    m.release(us(0), SEG, PPP);
    m.release(us(0), SEG, PPP);
    for psn in 0..32 {
        m.on_transmit(us(1), psn, us(100));
    }
    // A timeout went back to PSN 0; the NIC has sent 0 and 1 again when the delayed ACK of
    // the first segment arrives.
    assert_eq!(m.una_psn(), Some(0));
    m.rewind(0).count();
    m.on_transmit(us(2), 0, us(100));
    m.on_transmit(us(2), 1, us(100));
    while m.pop_acked(16).is_some() {}
    assert!(m.must_rewind(16, false), "the NIC is at PSN 2, behind what the receiver has");
    assert!(!m.must_rewind(2, false));
}

#[test]
fn the_local_ack_timeout_runs_while_packets_are_unacknowledged_on_the_wire() {
    let mut m = conn(None);
    let rto = us(100);
    m.release(us(0), SEG, PPP);
    assert_eq!(m.restart_rto(us(0), rto), None, "released but not on the wire: no timer");
    assert_eq!(m.on_transmit(us(1), 0, rto).1, Some(us(101)), "the first packet on the wire starts it");
    assert_eq!(m.on_transmit(us(2), 1, rto).1, None, "running: not restarted by a send");
    for psn in 2..16 {
        m.on_transmit(us(3), psn, rto);
    }
    m.release(us(4), SEG, PPP);
    m.on_transmit(us(5), 16, rto);
    while m.pop_acked(16).is_some() {}
    assert_eq!(m.restart_rto(us(50), rto), None, "an ACK moves the deadline later without a new event");
    assert_eq!(m.rto_fire(us(101)), Err(us(150)), "the first event finds the deadline moved: re-arm");
    assert_eq!(m.rto_fire(us(150)), Ok(true), "nothing acknowledged for 100 µs: expired");
    assert_eq!(m.una_psn(), Some(16), "where the timeout goes back to");
    while m.pop_acked(32).is_some() {}
    assert_eq!(m.una_psn(), None);
    assert_eq!(m.restart_rto(us(200), rto), None, "everything acknowledged: stopped");
}

#[test]
fn psns_wrap_in_serial_number_order() {
    assert!(psn_before(u32::MAX, 0));
    assert!(!psn_before(0, u32::MAX));
    assert!(psn_before(5, 6) && !psn_before(6, 6));
}

/// Go-back-N over a channel that drops, delays and duplicates at random (proptest): whatever
/// the channel does, the receiver delivers only in order and never more than was sent; the
/// sender never completes a segment before all of it arrived; and once the channel turns
/// clean, the flow finishes with exactly its size delivered. The network is this test's: a
/// queue of packets each way, taken in order (a path is FIFO) or dropped.
mod lossy_channel {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[derive(Clone, Debug)]
    enum Op {
        /// The NIC sends its next packet.
        Send,
        /// The head packet towards the receiver arrives, or is lost.
        Data { lose: bool },
        /// The head answer towards the sender arrives, or is lost.
        Answer { lose: bool },
        /// The local ACK timeout expires.
        Timeout,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => Just(Op::Send),
            3 => any::<bool>().prop_map(|l| Op::Data { lose: l }),
            2 => any::<bool>().prop_map(|l| Op::Answer { lose: l }),
            1 => Just(Op::Timeout),
        ]
    }

    /// The NIC's queue of this one flow: (PSN, last of its segment) still to send.
    struct Harness {
        m: MessageTx,
        r: MessageRx,
        nic: VecDeque<(u32, bool)>,
        to_rx: VecDeque<(u32, bool)>,
        to_tx: VecDeque<(u32, bool)>,
        delivered: u64,
        completed: u64,
        sent: u64,
    }

    impl Harness {
        fn queue(&mut self, from: u32, segments: &[Unacked]) {
            self.nic.clear();
            for u in segments {
                let start = if psn_before(u.first_psn, from) { from } else { u.first_psn };
                let mut p = start;
                while psn_before(p, u.end_psn) {
                    self.nic.push_back((p, p.wrapping_add(1) == u.end_psn));
                    p = p.wrapping_add(1);
                }
            }
        }

        fn rewind(&mut self, psn: u32) {
            let segs: Vec<Unacked> = self.m.rewind(psn).copied().collect();
            self.queue(psn, &segs);
        }

        fn step(&mut self, op: &Op, size: u64) -> Result<(), TestCaseError> {
            let now = Time::ZERO;
            match *op {
                Op::Send => {
                    if self.nic.is_empty() {
                        if let Some(t) = self.m.release_time(now, SEG, 4 * SEG, &mut rng()) {
                            let u = self.m.release(t, SEG, PPP);
                            self.queue(u.first_psn, &[u]);
                        }
                    }
                    if let Some((psn, last)) = self.nic.pop_front() {
                        self.m.on_transmit(now, psn, us(1));
                        self.sent += 1;
                        self.to_rx.push_back((psn, last));
                    }
                }
                Op::Data { lose } => {
                    let Some((psn, last)) = self.to_rx.pop_front() else { return Ok(()) };
                    if lose {
                        return Ok(());
                    }
                    match self.r.on_data(psn, false, last) {
                        Arrival::Deliver { ack } => {
                            self.delivered += 1;
                            prop_assert_eq!(psn as u64 + 1, self.delivered, "delivered out of order");
                            if let Some((a, _)) = ack {
                                self.to_tx.push_back((a, false));
                            }
                        }
                        Arrival::Duplicate { ack } => self.to_tx.extend(ack.map(|a| (a, false))),
                        Arrival::Nak(e) => self.to_tx.push_back((e, true)),
                        Arrival::Discard => {}
                        Arrival::Placed { .. } | Arrival::Trimmed { .. } => prop_assert!(false, "go-back-N placed a packet out of order"),
                    }
                }
                Op::Answer { lose } => {
                    let Some((psn, nak)) = self.to_tx.pop_front() else { return Ok(()) };
                    if lose || self.m.stale(psn) {
                        return Ok(());
                    }
                    while let Some(u) = self.m.pop_acked(psn) {
                        prop_assert!(
                            !psn_before(self.delivered as u32, u.end_psn),
                            "segment ending at {} completed with {} packets delivered",
                            u.end_psn,
                            self.delivered
                        );
                        self.completed += u.bytes as u64;
                    }
                    if self.m.must_rewind(psn, nak) {
                        self.rewind(psn);
                    }
                }
                Op::Timeout => {
                    if let Some(una) = self.m.una_psn() {
                        self.rewind(una);
                    }
                }
            }
            prop_assert!(self.delivered * PPP as u64 <= size.div_ceil(PPP as u64) * PPP as u64);
            prop_assert!(self.completed <= size);
            Ok(())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]
        #[test]
        fn any_loss_is_recovered_in_order(size in 1u64..100_000, ops in prop::collection::vec(op(), 0..600)) {
            let mut h = Harness { m: conn(Some(size)), r: MessageRx::default(), nic: VecDeque::new(), to_rx: VecDeque::new(), to_tx: VecDeque::new(), delivered: 0, completed: 0, sent: 0 };
            for op in &ops {
                h.step(op, size)?;
            }
            // A clean channel from here: the timeout repairs whatever was lost last.
            for _ in 0..100_000 {
                if h.m.done() {
                    break;
                }
                if h.nic.is_empty() && h.to_rx.is_empty() && h.to_tx.is_empty() && h.m.release_time(Time::ZERO, SEG, 4 * SEG, &mut rng()).is_none() {
                    h.step(&Op::Timeout, size)?;
                }
                for op in [Op::Send, Op::Data { lose: false }, Op::Answer { lose: false }] {
                    h.step(&op, size)?;
                }
            }
            prop_assert!(h.m.done(), "not done after the channel turned clean");
            prop_assert_eq!(h.completed, size);
            prop_assert_eq!(h.delivered, size.div_ceil(PPP as u64));
        }
    }
}

/// A NAK reports the placed PSNs before its own in a bitmap, so a sender whose earlier NAKs
/// come late (sprayed) or not at all resends only what is missing.
#[test]
fn a_nak_bitmap_covers_the_naks_that_come_late() {
    let mut r = MessageRx::new(true);
    assert_eq!(r.on_data(0, false, false), Arrival::Deliver { ack: None });
    assert_eq!(r.on_data(2, false, false), Arrival::Placed { nak: 1, psn: 2, below: 0 });
    assert_eq!(r.on_data(3, false, false), Arrival::Placed { nak: 1, psn: 3, below: 0b1 });
    // PSN 4 is late too; 5 reports 3 and 2 (bits 1 and 2), not 4 (bit 0).
    assert_eq!(r.on_data(5, false, false), Arrival::Placed { nak: 1, psn: 5, below: 0b110 });
    assert_eq!(r.on_data(40, false, false), Arrival::Placed { nak: 1, psn: 40, below: 0 }, "2, 3 and 5 lie beyond the 32 bits");
    // The sender hears only the NAK of 5: it resends 1, the one missing with three reported
    // beyond it, and not 2, whose NAK it has not had.
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), true));
    m.release(us(0), SEG, PPP);
    for psn in 0..16 {
        m.on_transmit(us(1), psn, us(100));
    }
    assert_eq!(m.selective_ack(1, Some((5, 0b110))), vec![1]);
    // Without the bitmap, 2 would have been taken for lost too.
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), true));
    m.release(us(0), SEG, PPP);
    for psn in 0..16 {
        m.on_transmit(us(1), psn, us(100));
    }
    assert_eq!(m.selective_ack(1, Some((5, 0))), vec![1, 2]);
}

#[test]
fn a_trimmed_packet_is_naked_at_once_and_resent_once() {
    // Selective repeat: the receiver names the trimmed PSN in its NAK of the expected one.
    let mut r = MessageRx::new(true);
    assert_eq!(r.on_data(0, false, false), Arrival::Deliver { ack: None });
    assert_eq!(r.on_trimmed(1, false), Arrival::Trimmed { nak: 1, psn: 1 });
    assert_eq!(r.on_data(2, false, false), Arrival::Placed { nak: 1, psn: 2, below: 0 });
    assert_eq!(r.on_trimmed(3, true), Arrival::Trimmed { nak: 1, psn: 3 }, "beyond the gap, the trimmed one is named");
    assert_eq!(r.on_trimmed(2, false), Arrival::Duplicate { ack: None }, "a trimmed copy of a placed packet");
    // Go-back-N: a NAK of the expected PSN, once per gap, unless the expected one is trimmed.
    let mut r = MessageRx::default();
    assert_eq!(r.on_trimmed(0, false), Arrival::Nak(0));
    assert_eq!(r.on_trimmed(1, false), Arrival::Discard);
    assert_eq!(r.on_trimmed(0, false), Arrival::Nak(0), "the resend of the expected packet, trimmed again");
    // The selective sender resends a trimmed packet at once, and not again at the reordering
    // allowance's count; an acknowledged one not at all.
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, false, (Time::ZERO, Time::MAX), wait(), (SampleFilter::default(), true));
    m.release(us(0), SEG, PPP);
    for psn in 0..16 {
        m.on_transmit(us(1), psn, us(100));
    }
    assert!(m.on_trimmed(1, 1));
    for placed in 2..8 {
        assert_eq!(m.selective_ack(1, Some((placed, 0))), Vec::<u32>::new(), "PSN 1 was resent on its trim");
    }
    assert!(!m.on_trimmed(1, 0), "acknowledged");
    assert!(!m.on_trimmed(1, 5), "placed");
}
