//! Thin PyO3 bindings: a scenario as JSON text in, the result as JSON text out. Invalid
//! scenarios raise `ValueError` with the field, the value and what is allowed; the simulation
//! runs without holding the GIL. A panic (a bug in rttlab) never reaches Python as a Rust
//! backtrace: it is caught here and raised as `InternalError` with its message and location.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

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

/// Runs a scenario given as JSON; returns `{"summary", "tables", "meta"}` as JSON.
#[pyfunction]
fn run_json(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = py.detach(|| guarded(|| rttlab_sim::run(&s).map_err(|e| PyValueError::new_err(e.to_string()))))?;
    Ok(out.to_json())
}

/// Validates a scenario given as JSON; returns it with every default filled in, as JSON.
#[pyfunction]
fn resolve_json(scenario: &str) -> PyResult<String> {
    guarded(|| {
        let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(s.resolved().to_string())
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
    m.add_function(wrap_pyfunction!(resolve_json, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
