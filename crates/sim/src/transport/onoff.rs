//! An application that paces a window-transport connection: it writes at a constant `rate`
//! during on periods and nothing during off periods, as ns-3's OnOffApplication does with
//! constant on and off times (no off time: a constant-rate source; no application at all: a
//! bulk sender, ns-3's BulkSendApplication). Writes go into a socket send buffer of
//! `send_buffer` bytes, counting data sent and not yet acknowledged; a write that does not fit
//! is refused and counted (the OnOffApplication drops it). The window still governs what is sent.
//!
//! The state is a few numbers: what the application has offered by time `t` is a closed form,
//! and refusals are settled whenever the sender asks how much it may send.

use rttlab_cc::{Rate, Time};

const PS_BITS_PER_BYTE: u128 = 8 * rttlab_cc::units::PS_PER_S as u128;

#[derive(Clone, Debug)]
pub struct OnOff {
    rate: Rate,
    on: Time,
    /// `Time::ZERO`: always on.
    off: Time,
    /// The first on period starts here (the connection's start).
    pub start: Time,
    send_buffer: u64,
    /// Bytes offered and refused so far.
    pub refused: u64,
}

impl OnOff {
    pub fn new(rate: Rate, on: Time, off: Time, start: Time, send_buffer: u64) -> OnOff {
        OnOff { rate, on, off, start, send_buffer, refused: 0 }
    }

    /// On time in `[start, t]`, in picoseconds.
    fn on_time(&self, t: Time) -> u64 {
        let d = t.ps().saturating_sub(self.start.ps());
        if self.off == Time::ZERO {
            return d;
        }
        let period = self.on.ps() + self.off.ps();
        d / period * self.on.ps() + (d % period).min(self.on.ps())
    }

    /// Bytes the application has offered by `t`: whole bytes of `rate × on time`.
    fn offered(&self, t: Time) -> u64 {
        (self.on_time(t) as u128 * self.rate.bps() as u128 / PS_BITS_PER_BYTE) as u64
    }

    /// Bytes written into the socket by `now`, when the first `acked` bytes are acknowledged:
    /// what was offered less what was refused, at most `acked + send_buffer`; any excess is
    /// refused now.
    pub fn written(&mut self, now: Time, acked: u64) -> u64 {
        let wanted = self.offered(now) - self.refused;
        let room = acked.saturating_add(self.send_buffer);
        if wanted > room {
            self.refused += wanted - room;
        }
        wanted.min(room)
    }

    /// The first time by which `bytes` bytes are written (if none is refused meanwhile).
    pub fn when_written(&self, bytes: u64) -> Time {
        let target = (bytes + self.refused) as u128;
        let on_ps = (target * PS_BITS_PER_BYTE).div_ceil(self.rate.bps() as u128) as u64;
        if self.off == Time::ZERO {
            return Time(self.start.ps().saturating_add(on_ps));
        }
        let (periods, rest) = (on_ps / self.on.ps(), on_ps % self.on.ps());
        let period = self.on.ps() + self.off.ps();
        let at = match (periods, rest) {
            (0, _) => rest,
            (p, 0) => (p - 1) * period + self.on.ps(),
            (p, r) => p * period + r,
        };
        Time(self.start.ps().saturating_add(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate() {
        // 1 Gbps is 125 bytes per microsecond.
        let mut a = OnOff::new(Rate::from_gbps(1), Time::ZERO, Time::ZERO, Time::from_us(10), u64::MAX);
        assert_eq!(a.written(Time::from_us(10), 0), 0);
        assert_eq!(a.written(Time::from_us(18), 0), 1000);
        assert_eq!(a.when_written(1000), Time::from_us(18));
        assert_eq!(a.when_written(1), Time(Time::from_us(10).ps() + 8000));
    }

    #[test]
    fn on_off_periods() {
        // On 10 us, off 30 us: 1250 bytes per 40 us period.
        let a = OnOff::new(Rate::from_gbps(1), Time::from_us(10), Time::from_us(30), Time::ZERO, u64::MAX);
        assert_eq!(a.offered(Time::from_us(10)), 1250);
        assert_eq!(a.offered(Time::from_us(39)), 1250);
        assert_eq!(a.offered(Time::from_us(45)), 1875);
        assert_eq!(a.when_written(1250), Time::from_us(10));
        assert_eq!(a.when_written(1251), Time(Time::from_us(40).ps() + 8000));
        assert_eq!(a.when_written(2500), Time::from_us(50));
    }

    #[test]
    fn send_buffer_refuses_the_excess() {
        let mut a = OnOff::new(Rate::from_gbps(1), Time::ZERO, Time::ZERO, Time::ZERO, 3000);
        // 100 us offer 12 500 bytes; with nothing acknowledged 3000 fit.
        assert_eq!(a.written(Time::from_us(100), 0), 3000);
        assert_eq!(a.refused, 9500);
        // Once 2000 are acknowledged, room for 2000 more: offered in the next 16 us.
        assert_eq!(a.written(Time::from_us(100), 2000), 3000);
        assert_eq!(a.when_written(5000), Time::from_us(116));
        assert_eq!(a.written(Time::from_us(116), 2000), 5000);
    }
}
