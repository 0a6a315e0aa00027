//! Thin PyO3 bindings: a scenario as JSON text in, the result as JSON text out. Invalid
//! scenarios raise `ValueError` with the field, the value and what is allowed; the simulation
//! runs without holding the GIL.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Runs a scenario given as JSON; returns `{"summary", "tables", "meta"}` as JSON.
#[pyfunction]
fn run_json(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = py.detach(|| rttlab_sim::run(&s)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(out.to_json())
}

/// Validates a scenario given as JSON; returns it with every default filled in, as JSON.
#[pyfunction]
fn resolve_json(scenario: &str) -> PyResult<String> {
    let s = rttlab_sim::Scenario::from_json(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(s.resolved().to_string())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
