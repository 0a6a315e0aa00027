//! Congestion controllers written in Python (`rttlab.RateController`,
//! `rttlab.WindowController`), driven by the simulator through the same traits as its own.
//!
//! One Python object per connection. Each event is one method call with one event object
//! (`Completion`, `Ack`); what the simulator asks often (the rate, the window) is read back once
//! after each call that may change it and kept. The simulation holds the GIL while it runs
//! them. The first exception a controller raises, or the first value it returns that no
//! controller may (a negative, NaN or infinite rate or window), is kept with the class and
//! method it came from; from then on no controller is called, and the run stops at its next
//! look at its observer (`Failure::stop_flag`) and raises it as `ControllerError`, the user's own
//! exception and traceback as its cause.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rttlab_cc::{AckEvent, Completion as CcCompletion, Loss, Metrics, Rate, RateController, Time, WindowController};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

create_exception!(
    rttlab._core,
    ControllerError,
    PyRuntimeError,
    "A congestion controller written in Python raised an exception or returned a value no controller may; its cause is the original exception."
);

/// A completion event for a rate controller (TIMELY §3.1): the receiver acknowledged a whole
/// segment. Times in picoseconds, rates in bit/s.
#[pyclass(frozen, get_all, module = "rttlab._core")]
pub struct Completion {
    /// When the completion reached the sender.
    now_ps: u64,
    /// The RTT sample: completion time − send time − the segment's serialization at the NIC.
    rtt_ps: u64,
    /// Payload bytes the completion acknowledges.
    acked_bytes: u64,
    /// The rate the connection has been sending at, as its transport measures it; None: not
    /// measured.
    sending_rate_bps: Option<u64>,
    /// Bytes acknowledged in all (this completion included) and bytes released to the NIC.
    snd_una: u64,
    snd_nxt: u64,
    /// In-band telemetry of the segment's path, one `(ts, tx, qlen, rate_bps)` per switch in
    /// the wire encoding of `rttlab_cc::int` (empty without `switch.int`).
    int_hops: Vec<(u32, u32, u32, u64)>,
}

/// An ACK for a window controller. Times in picoseconds; sequence numbers are payload bytes.
#[pyclass(frozen, get_all, module = "rttlab._core")]
pub struct Ack {
    now_ps: u64,
    /// Bytes this ACK newly acknowledges cumulatively.
    acked_bytes: u64,
    /// ECN-Echo: the acknowledged data carried a CE mark.
    ece: bool,
    /// The RTT sample this ACK gives, if any.
    rtt_ps: Option<u64>,
    /// The oldest unacknowledged byte after this ACK, and the next new byte.
    snd_una: u64,
    snd_nxt: u64,
    /// The transport is repairing a loss: the window must not grow.
    in_recovery: bool,
    /// The window limited the last send (RFC 7661): only then may it grow.
    cwnd_limited: bool,
    /// Swift's endpoint delay: the receiver's and this ACK's host queuing (zero without a host
    /// model).
    endpoint_delay_ps: u64,
    /// Switches the acknowledged packet crossed.
    hops: u8,
}

/// What went wrong first in a run's Python controllers, shared by all of them and the run.
#[derive(Default)]
pub struct Failure {
    error: std::sync::Mutex<Option<PyErr>>,
    /// Set with the error: the run's observer, which may run without the GIL, stops on it.
    stop: Arc<AtomicBool>,
}

impl Failure {
    /// The flag that says the run must stop.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// The error to raise, if any.
    pub fn take(&self) -> Option<PyErr> {
        self.error.lock().expect("unpoisoned").take()
    }

    fn failed(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Keeps `cause`, raised by `class.method`, unless an earlier error is kept.
    fn record(&self, py: Python<'_>, class: &str, method: &str, cause: PyErr) {
        let mut slot = self.error.lock().expect("unpoisoned");
        if slot.is_none() {
            let err = ControllerError::new_err(format!("{class}.{method}: {}", cause.value(py)));
            err.set_cause(py, Some(cause));
            *slot = Some(err);
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Keeps an error for a value `class.method` returned that no controller may return.
    fn bad_value(&self, py: Python<'_>, class: &str, method: &str, value: String, allowed: &str) {
        let cause = PyValueError::new_err(format!("returned {value}: {allowed}"));
        self.record(py, class, method, cause);
    }
}

/// The optional methods a class overrides (`RateController._hooks`): the others are its base's
/// no-ops and are not called.
#[derive(Clone, Copy, Default)]
struct Hooks {
    restart: bool,
    on_congestion_notification: bool,
    on_sent: bool,
    advance: bool,
    next_change_ps: bool,
    window_bytes: bool,
    pacing_delay_ps: bool,
}

impl Hooks {
    fn of(class: &Bound<'_, PyAny>) -> PyResult<Hooks> {
        let names: Vec<String> = class.getattr("_hooks")?.extract()?;
        let has = |n: &str| names.iter().any(|x| x == n);
        Ok(Hooks {
            restart: has("restart"),
            on_congestion_notification: has("on_congestion_notification"),
            on_sent: has("on_sent"),
            advance: has("advance"),
            next_change_ps: has("next_change_ps"),
            window_bytes: has("window_bytes"),
            pacing_delay_ps: has("pacing_delay_ps"),
        })
    }
}

/// Builds one Python controller per connection: `class(line_rate_bps or mss_bytes, params)`.
pub struct PyControllers {
    class: Py<PyAny>,
    params: Py<PyDict>,
    name: String,
    hooks: Hooks,
    failure: Arc<Failure>,
}

impl PyControllers {
    pub fn new(py: Python<'_>, class: Py<PyAny>, params: Py<PyDict>, failure: Arc<Failure>) -> PyResult<PyControllers> {
        let bound = class.bind(py);
        let name: String = bound.getattr("__qualname__")?.extract()?;
        let hooks = Hooks::of(bound)?;
        Ok(PyControllers { class, params, name, hooks, failure })
    }

    /// A new instance, or `None` (the failure kept) if its constructor raised.
    fn instance(&self, arg: u64) -> Option<Py<PyAny>> {
        Python::attach(|py| match self.class.call1(py, (arg, self.params.bind(py).copy().ok()?)) {
            Ok(obj) => Some(obj),
            Err(e) => {
                self.failure.record(py, &self.name, "__init__", e);
                None
            }
        })
    }

    fn object(&self, obj: Option<Py<PyAny>>) -> Instance {
        Instance { obj, class: self.name.clone(), hooks: self.hooks, failure: self.failure.clone() }
    }
}

impl rttlab_sim::Controllers for PyControllers {
    fn rate(&mut self, line_rate: Rate) -> Box<dyn RateController> {
        let mut c = PyRate { o: self.object(self.instance(line_rate.bps())), rate: line_rate, window: None, repath: false };
        c.refresh();
        Box::new(c)
    }

    fn window(&mut self, mss: u64) -> Box<dyn WindowController> {
        let mut c = PyWindow { o: self.object(self.instance(mss)), cwnd: mss, pacing_delay: None, repath: false };
        c.refresh();
        Box::new(c)
    }
}

/// One connection's Python object and what calling it needs.
struct Instance {
    /// `None` once its constructor failed.
    obj: Option<Py<PyAny>>,
    class: String,
    hooks: Hooks,
    failure: Arc<Failure>,
}

impl Instance {
    /// Calls `method(args)` unless a controller has failed; `None` if it raised (kept).
    fn call<'py>(&self, py: Python<'py>, method: &str, args: impl pyo3::call::PyCallArgs<'py>) -> Option<Bound<'py, PyAny>> {
        let obj = self.obj.as_ref().filter(|_| !self.failure.failed())?;
        match obj.bind(py).call_method1(method, args) {
            Ok(v) => Some(v),
            Err(e) => {
                self.failure.record(py, &self.class, method, e);
                None
            }
        }
    }

    /// `method()` as a number, or `None` if it raised or returned something else (kept).
    fn number(&self, py: Python<'_>, method: &str, allowed: &str) -> Option<f64> {
        let v = self.call(py, method, ())?;
        v.extract::<f64>().map_err(|_| self.refuse(py, method, &v, allowed)).ok()
    }

    /// Keeps the error for `value`, which `method` returned and no controller may.
    fn refuse(&self, py: Python<'_>, method: &str, value: &Bound<'_, PyAny>, allowed: &str) {
        let shown = value.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
        self.failure.bad_value(py, &self.class, method, shown, allowed);
    }

    /// Whether the object set `_repath` (`repath()`) since the last look; clears it.
    fn take_repath(&self, py: Python<'_>) -> bool {
        let Some(obj) = self.obj.as_ref() else { return false };
        let obj = obj.bind(py);
        let asked = obj.getattr("_repath").and_then(|v| v.extract::<bool>()).unwrap_or(false);
        if asked {
            let _ = obj.setattr("_repath", false);
        }
        asked
    }

    /// A positive, finite number of `method()`, or `None` (the failure kept).
    fn positive(&self, py: Python<'_>, method: &str, what: &str) -> Option<f64> {
        let x = self.number(py, method, what)?;
        if x.is_finite() && x > 0.0 {
            return Some(x);
        }
        self.failure.bad_value(py, &self.class, method, x.to_string(), what);
        None
    }

    /// An integer of `method()` that is not negative, or `None` when it returned None (or
    /// failed, kept).
    fn optional_count(&self, py: Python<'_>, method: &str, what: &str) -> Option<u64> {
        let v = self.call(py, method, ())?;
        if v.is_none() {
            return None;
        }
        v.extract::<u64>().map_err(|_| self.refuse(py, method, &v, what)).ok()
    }

    /// The controller's `metrics()` dict as the simulator's `Metrics`.
    fn metrics(&self, fallback: Metrics) -> Metrics {
        Python::attach(|py| {
            let Some(v) = self.call(py, "metrics", ()) else { return fallback };
            match metrics_of(&v) {
                Ok(m) => m,
                Err(e) => {
                    self.failure.record(py, &self.class, "metrics", e);
                    fallback
                }
            }
        })
    }
}

/// `metrics()`'s dict: `rate_bps`, `at_min_rate`, `cwnd_bytes`, `ssthresh_bytes`,
/// `dctcp_alpha`, `fcwnd_pkts`, `ecwnd_pkts` (each optional); another key is an error naming it.
fn metrics_of(v: &Bound<'_, PyAny>) -> PyResult<Metrics> {
    let shown = v.repr()?.to_string();
    let d = v.cast::<PyDict>().map_err(|_| {
        PyValueError::new_err(format!("returned {shown}: a dict of rate_bps, at_min_rate, cwnd_bytes, ssthresh_bytes, dctcp_alpha, fcwnd_pkts, ecwnd_pkts"))
    })?;
    let mut m = Metrics::default();
    for (k, x) in d.iter() {
        let key: String = k.extract()?;
        if x.is_none() {
            continue;
        }
        match key.as_str() {
            "rate_bps" => m.rate = Some(Rate(x.extract::<f64>()? as u64)),
            "at_min_rate" => m.at_min_rate = Some(x.extract()?),
            "cwnd_bytes" => m.cwnd_bytes = Some(x.extract::<f64>()? as u64),
            "ssthresh_bytes" => m.ssthresh_bytes = Some(x.extract::<f64>()? as u64),
            "dctcp_alpha" => m.dctcp_alpha = Some(x.extract()?),
            "fcwnd_pkts" => m.fcwnd_pkts = Some(x.extract()?),
            "ecwnd_pkts" => m.ecwnd_pkts = Some(x.extract()?),
            other => {
                return Err(PyValueError::new_err(format!(
                    "key {other:?}: not a metric; the metrics are rate_bps, at_min_rate, cwnd_bytes, ssthresh_bytes, dctcp_alpha, fcwnd_pkts, ecwnd_pkts"
                )))
            }
        }
    }
    Ok(m)
}

/// A Python `RateController`.
struct PyRate {
    o: Instance,
    /// `rate_bps()` and `window_bytes()` as last read.
    rate: Rate,
    window: Option<u64>,
    /// It called `repath()`, not yet taken.
    repath: bool,
}

const RATE: &str = "a rate in bit/s, positive and finite";
const BYTES: &str = "None or a whole number of bytes, not negative";

impl PyRate {
    /// Reads the rate (and window) back after a call that may have changed them.
    fn refresh(&mut self) {
        Python::attach(|py| {
            if let Some(r) = self.o.positive(py, "rate_bps", RATE) {
                // As the native controllers do: `Rate(rate as u64)`.
                self.rate = Rate(r as u64);
            }
            if self.o.hooks.window_bytes {
                self.window = self.o.optional_count(py, "window_bytes", BYTES);
            }
            self.repath |= self.o.take_repath(py);
        });
    }
}

impl RateController for PyRate {
    fn take_repath(&mut self) -> bool {
        std::mem::take(&mut self.repath)
    }

    fn on_completion(&mut self, c: &CcCompletion) {
        Python::attach(|py| {
            let ev = Completion {
                now_ps: c.now.ps(),
                rtt_ps: c.rtt.ps(),
                acked_bytes: c.acked_bytes,
                sending_rate_bps: c.sending_rate.map(|r| r.bps()),
                snd_una: c.snd_una,
                snd_nxt: c.snd_nxt,
                int_hops: c.int.iter().map(|h| (h.ts, h.tx, h.qlen, h.rate.bps())).collect(),
            };
            let Ok(ev) = Py::new(py, ev) else { return };
            self.o.call(py, "on_completion", (ev,));
        });
        self.refresh();
    }

    fn rate(&self) -> Rate {
        self.rate
    }

    fn metrics(&self) -> Metrics {
        let mut fallback = Metrics::default();
        fallback.rate = Some(self.rate);
        self.o.metrics(fallback)
    }

    fn restart(&mut self) {
        if self.o.hooks.restart {
            Python::attach(|py| {
                self.o.call(py, "restart", ());
            });
            self.refresh();
        }
    }

    fn window(&self) -> Option<u64> {
        self.window
    }

    fn on_congestion_notification(&mut self, now: Time) {
        if self.o.hooks.on_congestion_notification {
            Python::attach(|py| {
                self.o.call(py, "on_congestion_notification", (now.ps(),));
            });
            self.refresh();
        }
    }

    fn on_sent(&mut self, now: Time, bytes: u64) {
        if self.o.hooks.on_sent {
            Python::attach(|py| {
                self.o.call(py, "on_sent", (now.ps(), bytes));
            });
            self.refresh();
        }
    }

    fn advance(&mut self, now: Time) {
        if self.o.hooks.advance {
            Python::attach(|py| {
                self.o.call(py, "advance", (now.ps(),));
            });
            self.refresh();
        }
    }

    fn next_change(&self) -> Option<Time> {
        if !self.o.hooks.next_change_ps {
            return None;
        }
        Python::attach(|py| self.o.optional_count(py, "next_change_ps", "None or a time in ps").map(Time))
    }
}

/// A Python `WindowController`.
struct PyWindow {
    o: Instance,
    /// `cwnd_bytes()` and `pacing_delay_ps()` as last read.
    cwnd: u64,
    pacing_delay: Option<Time>,
    /// It called `repath()`, not yet taken.
    repath: bool,
}

impl PyWindow {
    fn refresh(&mut self) {
        Python::attach(|py| {
            match self.o.number(py, "cwnd_bytes", "a window in bytes, finite and not negative") {
                // As the native controllers do: `cwnd as u64`.
                Some(w) if w.is_finite() && w >= 0.0 => self.cwnd = w as u64,
                Some(w) => self.o.failure.bad_value(py, &self.o.class, "cwnd_bytes", w.to_string(), "a window in bytes, finite and not negative"),
                None => {}
            }
            if self.o.hooks.pacing_delay_ps {
                self.pacing_delay = self.o.optional_count(py, "pacing_delay_ps", "None or a delay in ps, not negative").map(Time);
            }
            self.repath |= self.o.take_repath(py);
        });
    }
}

impl WindowController for PyWindow {
    fn take_repath(&mut self) -> bool {
        std::mem::take(&mut self.repath)
    }

    fn on_ack(&mut self, a: &AckEvent) {
        Python::attach(|py| {
            let ev = Ack {
                now_ps: a.now.ps(),
                acked_bytes: a.acked_bytes,
                ece: a.ece,
                rtt_ps: a.rtt.map(|t| t.ps()),
                snd_una: a.snd_una,
                snd_nxt: a.snd_nxt,
                in_recovery: a.in_recovery,
                cwnd_limited: a.cwnd_limited,
                endpoint_delay_ps: a.endpoint_delay.ps(),
                hops: a.hops,
            };
            let Ok(ev) = Py::new(py, ev) else { return };
            self.o.call(py, "on_ack", (ev,));
        });
        self.refresh();
    }

    fn on_loss(&mut self, loss: Loss, flight_bytes: u64, now: Time) {
        let kind = match loss {
            Loss::FastRetransmit => "fast_retransmit",
            Loss::Timeout => "timeout",
        };
        Python::attach(|py| {
            self.o.call(py, "on_loss", (kind, flight_bytes, now.ps()));
        });
        self.refresh();
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn pacing_delay(&self) -> Option<Time> {
        self.pacing_delay
    }

    fn metrics(&self) -> Metrics {
        let mut fallback = Metrics::default();
        fallback.cwnd_bytes = Some(self.cwnd);
        self.o.metrics(fallback)
    }
}
