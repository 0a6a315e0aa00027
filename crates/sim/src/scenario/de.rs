//! Reading a scenario's tables with errors that name the whole path of a bad field
//! (`workloads[2].cdf`, `topology.link_rate`), also inside internally tagged sections
//! (`kind = "star"`, `algorithm = "timely"`), where serde's own derive would lose it.

use super::ScenarioError;
use serde::de::{DeserializeOwned, DeserializeSeed};
use serde_json::{Map, Value};

/// `at.key`, or `key` at the top level.
pub(crate) fn join(at: &str, key: &str) -> String {
    match (at.is_empty(), key.starts_with('[')) {
        (true, _) => key.to_string(),
        (false, true) => format!("{at}{key}"),
        (false, false) => format!("{at}.{key}"),
    }
}

/// `value` read as a `T` at path `at`.
pub(crate) fn parse<T: DeserializeOwned>(at: &str, value: Value) -> Result<T, ScenarioError> {
    parse_seed(at, value, std::marker::PhantomData::<T>)
}

/// `value` read through `seed` (e.g. parameters over a profile's defaults) at path `at`.
pub(crate) fn parse_seed<T>(at: &str, value: Value, seed: impl for<'de> DeserializeSeed<'de, Value = T>) -> Result<T, ScenarioError> {
    let mut track = serde_path_to_error::Track::new();
    seed.deserialize(serde_path_to_error::Deserializer::new(value, &mut track)).map_err(|e| {
        let inner = track.path().to_string();
        let field = if inner == "." { at.to_string() } else { join(at, &inner) };
        ScenarioError::Field { field: if field.is_empty() { "scenario".into() } else { field }, message: with_suggestion(e.to_string()) }
    })
}

/// `; did you mean `t_low`?` when one of `allowed` is close to the misspelled `key` (Jaro-Winkler
/// similarity above 0.8, close to clap's rule), else nothing.
pub(crate) fn did_you_mean<'a>(key: &str, allowed: impl IntoIterator<Item = &'a str>) -> String {
    let best = allowed.into_iter().map(|a| (strsim::jaro_winkler(key, a), a)).max_by(|x, y| x.0.total_cmp(&y.0));
    match best {
        Some((score, name)) if score > 0.8 => format!("; did you mean `{name}`?"),
        _ => String::new(),
    }
}

/// serde's "unknown field `tlow`, expected one of `alpha`, `t_low`, …" (also for variants) with a
/// suggestion appended; other messages unchanged.
fn with_suggestion(message: String) -> String {
    if !(message.starts_with("unknown field `") || message.starts_with("unknown variant `")) {
        return message;
    }
    let quoted: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let hint = did_you_mean(quoted[0], quoted[1..].iter().copied());
    message + &hint
}

/// A table being read key by key; what is left at the end is an unknown key.
pub(crate) struct Table {
    at: String,
    map: Map<String, Value>,
}

impl Table {
    /// `value` as a table at path `at` ("" for the scenario itself).
    pub fn new(at: &str, value: Value) -> Result<Table, ScenarioError> {
        match value {
            Value::Object(map) => Ok(Table { at: at.to_string(), map }),
            other => Err(ScenarioError::Field {
                field: if at.is_empty() { "scenario".into() } else { at.to_string() },
                message: format!("{} is not a table", kind(&other)),
            }),
        }
    }

    /// The path of `key` in this table.
    pub fn path(&self, key: &str) -> String {
        join(&self.at, key)
    }

    /// Removes `key` and reads it; `None` when absent.
    pub fn take<T: DeserializeOwned>(&mut self, key: &str) -> Result<Option<T>, ScenarioError> {
        self.map.remove(key).map(|v| parse(&self.path(key), v)).transpose()
    }

    /// Removes `key`, which must be present, and reads it.
    pub fn require<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, ScenarioError> {
        let value = self.require_raw(key)?;
        parse(&self.path(key), value)
    }

    /// Removes the raw value of `key`, which must be present.
    pub fn require_raw(&mut self, key: &str) -> Result<Value, ScenarioError> {
        self.map.remove(key).ok_or_else(|| ScenarioError::Field { field: self.path(key), message: "missing: this key is required".into() })
    }

    /// Removes the raw value of `key`, if present.
    pub fn raw(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key)
    }

    /// Removes the tag `key` and returns which of `allowed` it names.
    pub fn tag(&mut self, key: &str, allowed: &[&'static str]) -> Result<&'static str, ScenarioError> {
        let field = self.path(key);
        let one_of = allowed.join(", ");
        match self.map.remove(key) {
            Some(Value::String(name)) => allowed.iter().find(|&&a| a == name).copied().ok_or_else(|| ScenarioError::Invalid {
                field,
                value: format!("'{name}'"),
                allowed: format!("one of {one_of}{}", did_you_mean(&name, allowed.iter().copied())),
            }),
            Some(other) => Err(ScenarioError::Invalid { field, value: other.to_string(), allowed: format!("a name, one of {one_of}") }),
            None => Err(ScenarioError::Field { field, message: format!("missing: one of {one_of}") }),
        }
    }

    /// The keys left, read as a `T` at this table's path (its own unknown keys are errors).
    pub fn rest<T: DeserializeOwned>(self) -> Result<T, ScenarioError> {
        parse(&self.at, Value::Object(self.map))
    }

    /// The keys left, read over `base`: each key given replaces that value of `base`, the rest
    /// stay (a profile's defaults).
    pub fn rest_over<T: serde::Serialize + DeserializeOwned>(self, base: &T) -> Result<T, ScenarioError> {
        parse_over(&self.at, base, self.map)
    }

    /// As `rest_over`, keeping the keys.
    pub fn peek_over<T: serde::Serialize + DeserializeOwned>(&self, base: &T) -> Result<T, ScenarioError> {
        parse_over(&self.at, base, self.map.clone())
    }

    /// No key may be left: an unknown one is an error listing what is allowed.
    pub fn finish(self, allowed: &[&str]) -> Result<(), ScenarioError> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(key) => Err(ScenarioError::Field {
                field: self.path(key),
                message: format!("unknown key; expected one of {}{}", allowed.join(", "), did_you_mean(key, allowed.iter().copied())),
            }),
        }
    }
}

/// `given` read at `at` over `base`: each key given replaces that value of `base`.
fn parse_over<T: serde::Serialize + DeserializeOwned>(at: &str, base: &T, given: Map<String, Value>) -> Result<T, ScenarioError> {
    let Value::Object(mut map) = serde_json::to_value(base).expect("parameters serialize") else { unreachable!("parameters are a table") };
    map.extend(given);
    parse(at, Value::Object(map))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// An array whose items `read` reads, each at `at[i]`.
pub(crate) fn read_list<T>(at: &str, value: Value, read: impl Fn(&str, Value) -> Result<T, ScenarioError>) -> Result<Vec<T>, ScenarioError> {
    match value {
        Value::Array(items) => items.into_iter().enumerate().map(|(i, v)| read(&format!("{at}[{i}]"), v)).collect(),
        other => Err(ScenarioError::Field { field: at.to_string(), message: format!("{} is not an array of tables", kind(&other)) }),
    }
}
