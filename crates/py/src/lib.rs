//! Thin PyO3 bindings: a scenario as JSON text in; out, the result's tables as NumPy arrays
//! (`run`) or everything as JSON text (`run_json`, for the run cache). Invalid
//! scenarios raise `ValueError` with the field, the value and what is allowed; the simulation
//! runs without holding the GIL, unless its controllers are written in Python
//! (`controllers`), which run under it. A panic (a bug in rttlab) never reaches Python as a Rust
//! backtrace: it is caught here and raised as `InternalError` with its message and location.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

mod controllers;
mod replay;
use controllers::{ControllerError, Failure, PyControllers};
use rttlab_sim::report::table::Column;
use rttlab_sim::RunError;
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

create_exception!(rttlab._core, InternalError, PyRuntimeError, "A bug in rttlab: an internal check failed. Please report it with the scenario.");

thread_local! {
    /// The message and location of this thread's last panic, kept by the quiet panic hook.
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs `f`, turning a panic into `InternalError`.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        let what = LAST_PANIC.with(|p| p.take());
        Err(InternalError::new_err(format!("internal error (a bug in rttlab; please report it with the scenario): {what}")))
    })
}

/// How often a run calls its `observe` callback, at most.
const OBSERVE_INTERVAL: Duration = Duration::from_millis(100);

/// A controller written in Python: its class and its resolved parameters.
type Controller = (Py<PyAny>, Py<PyDict>);

/// Runs a scenario given as JSON to its output, without the GIL (with it when `controller`,
/// `cc.algorithm = "python"`'s class and parameters, is given: its methods run as the
/// simulation goes).
///
/// Every few milliseconds the run checks for signals, so Ctrl-C raises `KeyboardInterrupt`
/// promptly. `observe(now_ps, end_ps, events)`, if given, is called about every 100 ms of wall
/// time (for progress); if it returns true the run stops and raises `KeyboardInterrupt`. A
/// Python controller that raises stops the run with `ControllerError`, caused by its exception.
fn simulate(py: Python<'_>, scenario: &str, observe: Option<Py<PyAny>>, controller: Option<Controller>) -> PyResult<rttlab_sim::report::output::Output> {
    let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let failure = std::sync::Arc::new(Failure::default());
    let failed = failure.stop_flag();
    let mut stopped_by: Option<PyErr> = None;
    let mut last = Instant::now();
    let mut check = |p: rttlab_sim::Progress| {
        Python::attach(|py| {
            let err = py.check_signals().err().or_else(|| {
                let f = observe.as_ref().filter(|_| last.elapsed() >= OBSERVE_INTERVAL)?;
                last = Instant::now();
                match f.call1(py, (p.now.ps(), p.end.ps(), p.events)).and_then(|v| v.is_truthy(py)) {
                    Ok(false) => None,
                    Ok(true) => Some(PyKeyboardInterrupt::new_err("the run was stopped")),
                    Err(e) => Some(e),
                }
            });
            match err {
                None if !failed.load(std::sync::atomic::Ordering::Relaxed) => ControlFlow::Continue(()),
                err => {
                    stopped_by = err;
                    ControlFlow::Break(())
                }
            }
        })
    };
    let out = match controller {
        None => py.detach(|| guarded(|| Ok(rttlab_sim::run_observed(&s, &mut check))))?,
        Some((class, params)) => {
            let built = PyControllers::new(py, class, params, failure.clone())?;
            let out = guarded(|| Ok(rttlab_sim::run_observed_with(&s, Some(Box::new(built)), &mut check)))?;
            // A controller that failed after the run's last look at its observer still fails it.
            if let Some(e) = failure.take() {
                return Err(e);
            }
            out
        }
    };
    match out {
        Ok(out) => Ok(out),
        Err(RunError::Invalid(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(RunError::Stopped(_)) => Err(stopped_by.unwrap_or_else(|| PyKeyboardInterrupt::new_err("the run was stopped"))),
    }
}

/// Runs a scenario given as JSON; returns `{"summary", "tables", "dtypes", "meta"}` as JSON
/// (what the run cache stores). See `simulate` for `observe`.
#[pyfunction]
#[pyo3(signature = (scenario, observe=None, controller=None))]
fn run_json(py: Python<'_>, scenario: &str, observe: Option<Py<PyAny>>, controller: Option<Controller>) -> PyResult<String> {
    Ok(simulate(py, scenario, observe, controller)?.to_json())
}

/// Runs a scenario given as JSON; returns `(summary JSON, meta JSON, tables, pcaps)`, where
/// `tables` maps each table's name to its columns: a NumPy array (`int64`, `float64` with NaN
/// where missing), `("labels", codes, names)` for text, or `("masked", values, missing)` for
/// integers with missing values. The arrays take over the run's vectors: no copy, no text.
/// `pcaps` maps each captured port's name to its pcap file's bytes. See `simulate` for
/// `observe`.
#[pyfunction]
#[pyo3(signature = (scenario, observe=None, controller=None))]
fn run<'py>(
    py: Python<'py>,
    scenario: &str,
    observe: Option<Py<PyAny>>,
    controller: Option<Controller>,
) -> PyResult<(String, String, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let out = simulate(py, scenario, observe, controller)?;
    let tables = PyDict::new(py);
    for (name, table) in out.tables {
        let cols = PyDict::new(py);
        for (col, c) in table.columns {
            let v: Bound<'py, PyAny> = match c {
                Column::Int(v) => v.into_pyarray(py).into_any(),
                Column::F64(v) => v.into_pyarray(py).into_any(),
                Column::OptInt { values, missing } => ("masked", values.into_pyarray(py), missing.into_pyarray(py)).into_pyobject(py)?.into_any(),
                Column::Labels { codes, names } => ("labels", codes.into_pyarray(py), names).into_pyobject(py)?.into_any(),
            };
            cols.set_item(col, v)?;
        }
        tables.set_item(name, cols)?;
    }
    let pcaps = PyDict::new(py);
    for (port, bytes) in &out.captures {
        pcaps.set_item(port, PyBytes::new(py, bytes))?;
    }
    let summary = serde_json::to_string(&out.summary).expect("summaries serialize");
    Ok((summary, out.meta.to_string(), tables, pcaps))
}

/// Validates a scenario given as JSON; returns it with every default filled in, as JSON.
#[pyfunction]
fn resolve_json(scenario: &str) -> PyResult<String> {
    guarded(|| {
        let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(s.resolved().to_string())
    })
}

/// `text` as a quantity in the unit a result column names it in, with the column's suffix:
/// a duration in microseconds (`"us"`), a rate in Gbps (`"gbps"`), a size in bytes
/// (`"bytes"`); `None` if it is none of these. The scenario's own parser reads it.
#[pyfunction]
fn quantity(text: &str) -> Option<(&'static str, f64)> {
    base_units(text).map(|(unit, n)| match unit {
        "ps" => ("us", rttlab_cc::Time(n).as_us()),
        "bps" => ("gbps", rttlab_cc::Rate(n).as_gbps()),
        _ => ("bytes", n as f64),
    })
}

/// `text` as a quantity in the simulator's own units: ("ps", picoseconds) for a duration,
/// ("bps", bit/s) for a rate, ("bytes", bytes) for a size; `None` if it is none of these.
#[pyfunction]
fn base_units(text: &str) -> Option<(&'static str, u64)> {
    use rttlab_cc::{Bytes, Rate, Time};
    if let Ok(t) = text.parse::<Time>() {
        Some(("ps", t.ps()))
    } else if let Ok(r) = text.parse::<Rate>() {
        Some(("bps", r.bps()))
    } else {
        text.parse::<Bytes>().ok().map(|b| ("bytes", b.0))
    }
}

/// A kernel log's fields, one array each (`replay::Records`).
type RecordArrays<'py> = (
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u16>,
    PyReadonlyArray1<'py, u16>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u64>,
);
/// Per record: the kernel's decision, the reference's, the bound, exempt.
type ReplayArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<bool>>);

/// The differential test's reference (`replay`): one connection's records from a kernel
/// controller, field by field, replayed under the scenario's `[cc]` (JSON, with the parameters
/// the kernel ran with). Returns (kernel, reference, bound, exempt) per record as arrays.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn cc_replay<'py>(
    py: Python<'py>,
    scenario: &str,
    line_rate_bps: u64,
    packet_bytes: u64,
    seg_ser_ps: u64,
    records: RecordArrays<'py>,
) -> PyResult<ReplayArrays<'py>> {
    guarded(|| {
        let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let (t_ns, kind, flags, rtt_us, acked, value, aux, aux2) = &records;
        let r = replay::Records {
            t_ns: t_ns.as_slice()?,
            kind: kind.as_slice()?,
            flags: flags.as_slice()?,
            rtt_us: rtt_us.as_slice()?,
            acked: acked.as_slice()?,
            value: value.as_slice()?,
            aux: aux.as_slice()?,
            aux2: aux2.as_slice()?,
        };
        let out = replay::replay(&s.cc.controller, rttlab_cc::Rate(line_rate_bps), packet_bytes, seg_ser_ps, &r).map_err(PyValueError::new_err)?;
        Ok((out.kernel.into_pyarray(py), out.reference.into_pyarray(py), out.bound.into_pyarray(py), out.exempt.into_pyarray(py)))
    })
}

/// Panics on purpose, so that tests can check how a bug reaches the user.
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    guarded(|| panic!("a deliberate panic"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Panics are reported through `InternalError`, not printed with a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
        let msg = info.payload().downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| info.payload().downcast_ref::<String>().cloned()).unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg}{at}"));
    }));
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_json, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(base_units, m)?)?;
    m.add_function(wrap_pyfunction!(cc_replay, m)?)?;
    m.add_class::<controllers::Completion>()?;
    m.add_class::<controllers::Ack>()?;
    m.add("ControllerError", m.py().get_type::<ControllerError>())?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
