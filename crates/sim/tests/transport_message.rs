//! The message transport's state machine without a network: when segments may go (TIMELY §3.3
//! pacing, the outstanding cap, start/stop, application-limited and on-demand sources), the
//! receiving NIC's ACK with its ECN echo, and the completion's RTT sample (§3.1).

use rttlab_cc::{Completion, LineRate, Rate, RateController, Time};
use rttlab_sim::engine::{rng_stream, Stream};
use rttlab_sim::transport::message::{completion_rtt, App, MessageTx};
use std::cell::RefCell;
use std::rc::Rc;

const G10: Rate = Rate(10_000_000_000);
const SEG: u64 = 16_000;
const CAP: u64 = u64::MAX;

fn us(x: u64) -> Time {
    Time::from_us(x)
}

fn conn(size: Option<u64>) -> MessageTx {
    MessageTx::new(Box::new(LineRate(G10)), size, None, false, Time::ZERO, Time::MAX)
}

fn rng() -> rttlab_sim::engine::Rng {
    rng_stream(1, Stream::Flow(0))
}

#[test]
fn the_first_segment_goes_at_once_and_the_next_after_its_serialization_at_the_rate() {
    let (mut m, mut r) = (conn(None), rng());
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time::ZERO));
    assert_eq!(m.release(Time::ZERO, SEG), SEG);
    // 16 000 B at 10 Gbps: 12.8 µs.
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time(12_800_000)));
    // Asked later than that, it may go at once.
    assert_eq!(m.release_time(us(20), SEG, CAP, &mut r), Some(us(20)));
}

#[test]
fn the_outstanding_cap_holds_the_sender_until_a_completion() {
    let (mut m, mut r) = (conn(None), rng());
    for _ in 0..2 {
        m.release(Time::ZERO, SEG);
    }
    assert_eq!(m.release_time(us(30), SEG, 2 * SEG, &mut r), None, "32 000 B outstanding: at the cap");
    assert!(!m.on_completion(us(40), us(5), SEG));
    assert_eq!(m.release_time(us(40), SEG, 2 * SEG, &mut r), Some(us(40)));
}

#[test]
fn a_sized_flow_ends_with_a_short_segment_and_is_done_when_all_is_acknowledged() {
    let (mut m, mut r) = (conn(Some(40_000)), rng());
    let mut sizes = Vec::new();
    while let Some(t) = m.release_time(Time::ZERO, SEG, CAP, &mut r) {
        sizes.push(m.release(t, SEG));
    }
    assert_eq!(sizes, vec![16_000, 16_000, 8_000]);
    assert!(!m.on_completion(us(10), us(1), 16_000));
    assert!(!m.on_completion(us(11), us(1), 16_000));
    assert!(m.on_completion(us(12), us(1), 8_000), "everything acknowledged");
}

#[test]
fn start_and_stop_bound_the_release_times() {
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, false, us(5), us(10));
    let mut r = rng();
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(us(5)));
    m.release(us(5), SEG);
    assert_eq!(m.release_time(us(5), SEG, CAP, &mut r), None, "the next would go at 17.8 µs, after the stop");
}

#[test]
fn an_application_limited_source_sends_its_messages_as_they_arrive() {
    let app = App { rate: Rate(1_000_000_000), message: 1000, poisson: false, next_message: Time::ZERO };
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, Some(app), false, Time::ZERO, Time::MAX);
    let mut r = rng();
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), Some(Time::ZERO));
    assert_eq!(m.release(Time::ZERO, SEG), 1000, "one message is there");
    // The next 1000 B message arrives after 8 µs at 1 Gbps (later than the 0.8 µs pacing gap).
    assert_eq!(m.release_time(us(1), SEG, CAP, &mut r), Some(us(8)));
    // By 20 µs two more have arrived (at 8 and 16 µs): they go as one segment.
    assert_eq!(m.release_time(us(20), SEG, CAP, &mut r), Some(us(20)));
    assert_eq!(m.release(us(20), SEG), 2000);
}

#[test]
fn an_on_demand_connection_sends_only_what_is_offered() {
    let mut m = MessageTx::new(Box::new(LineRate(G10)), None, None, true, Time::ZERO, Time::MAX);
    let mut r = rng();
    assert_eq!(m.release_time(Time::ZERO, SEG, CAP, &mut r), None);
    m.offer(20_000);
    let mut sizes = Vec::new();
    while let Some(t) = m.release_time(Time::ZERO, SEG, CAP, &mut r) {
        sizes.push(m.release(t, SEG));
    }
    assert_eq!(sizes, vec![16_000, 4_000]);
}

#[test]
fn the_receiver_acknowledges_on_the_last_packet_echoing_any_ce_mark_of_the_segment() {
    let mut m = conn(None);
    assert_eq!(m.on_data(false, false), None);
    assert_eq!(m.on_data(true, false), None);
    assert_eq!(m.on_data(false, true), Some(true), "a mark on any packet of the segment");
    assert_eq!(m.on_data(false, true), Some(false), "the next segment starts clean");
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
fn the_controller_gets_every_completion_with_the_application_rate() {
    struct Seen(Rc<RefCell<Vec<Completion>>>);
    impl RateController for Seen {
        fn on_completion(&mut self, c: &Completion) {
            self.0.borrow_mut().push(*c);
        }
        fn rate(&self) -> Rate {
            G10
        }
    }
    let seen = Rc::new(RefCell::new(Vec::new()));
    let app = App { rate: Rate(2_000_000_000), message: 4000, poisson: false, next_message: Time::ZERO };
    let mut m = MessageTx::new(Box::new(Seen(seen.clone())), None, Some(app), false, Time::ZERO, Time::MAX);
    m.release_time(Time::ZERO, SEG, CAP, &mut rng());
    m.release(Time::ZERO, SEG);
    m.on_completion(us(9), us(3), 4000);
    assert_eq!(*seen.borrow(), vec![Completion { now: us(9), rtt: us(3), acked_bytes: 4000, app_rate: Some(Rate(2_000_000_000)) }]);
}
