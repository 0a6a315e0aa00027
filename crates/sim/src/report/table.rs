//! Column tables as a run returns them: named columns of one type each and of equal length.
//! The Python front end hands them to pandas as arrays, with no text in between; `to_json`
//! writes them for everything else, a missing value as `null`.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// One column's values.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Integers (counts, bytes, ids): signed, as pandas' default, so that differences of
    /// two columns do not wrap.
    Int(Vec<i64>),
    /// A missing value is NaN.
    F64(Vec<f64>),
    /// Integers with missing values: the values (0 where missing) and which are missing.
    OptInt { values: Vec<i64>, missing: Vec<bool> },
    /// Text with few distinct values (port, group and bucket names): each row's index into
    /// `names`.
    Labels { codes: Vec<u32>, names: Vec<String> },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::Int(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::OptInt { values, .. } => values.len(),
            Column::Labels { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Labels from each row's text, numbered in order of first appearance.
    pub fn labels<S: AsRef<str>>(rows: impl IntoIterator<Item = S>) -> Column {
        let (mut codes, mut names, mut index) = (Vec::new(), Vec::new(), HashMap::new());
        for s in rows {
            let s = s.as_ref();
            let code = *index.entry(s.to_string()).or_insert_with(|| {
                names.push(s.to_string());
                names.len() as u32 - 1
            });
            codes.push(code);
        }
        Column::Labels { codes, names }
    }

    /// The pandas dtype the column becomes: `int64`, `float64`, `Int64` (nullable) or
    /// `object` (text).
    pub fn dtype(&self) -> &'static str {
        match self {
            Column::Int(_) => "int64",
            Column::F64(_) => "float64",
            Column::OptInt { .. } => "Int64",
            Column::Labels { .. } => "object",
        }
    }

    /// Row `r` as text: a label, or a number as Rust prints it ("NaN" where missing).
    pub fn text(&self, r: usize) -> String {
        match self {
            Column::Int(v) => v[r].to_string(),
            Column::F64(v) => v[r].to_string(),
            Column::OptInt { values, missing } => {
                if missing[r] {
                    "NaN".into()
                } else {
                    values[r].to_string()
                }
            }
            Column::Labels { codes, names } => names[codes[r] as usize].clone(),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Column::Int(v) => v.iter().map(|&x| Value::from(x)).collect(),
            Column::F64(v) => v.iter().map(|&x| if x.is_nan() { Value::Null } else { Value::from(x) }).collect(),
            Column::OptInt { values, missing } => values.iter().zip(missing).map(|(&x, &m)| if m { Value::Null } else { Value::from(x) }).collect(),
            Column::Labels { codes, names } => codes.iter().map(|&c| Value::from(names[c as usize].as_str())).collect(),
        }
    }
}

macro_rules! unsigned_columns {
    ($($t:ty),*) => {$(
        impl From<Vec<$t>> for Column {
            fn from(v: Vec<$t>) -> Column {
                Column::Int(v.into_iter().map(|x| x as i64).collect())
            }
        }
    )*};
}
unsigned_columns!(u8, u16, u32, u64, usize);

impl From<Vec<f64>> for Column {
    fn from(v: Vec<f64>) -> Column {
        Column::F64(v)
    }
}

impl From<Vec<Option<f64>>> for Column {
    fn from(v: Vec<Option<f64>>) -> Column {
        Column::F64(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
    }
}

impl From<Vec<Option<u64>>> for Column {
    fn from(v: Vec<Option<u64>>) -> Column {
        Column::OptInt { missing: v.iter().map(Option::is_none).collect(), values: v.into_iter().map(|x| x.unwrap_or(0) as i64).collect() }
    }
}

/// A table: its columns in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    /// The table with column `name` appended.
    pub fn col(mut self, name: &'static str, values: impl Into<Column>) -> Table {
        let c = values.into();
        debug_assert!(self.columns.first().is_none_or(|(_, f)| f.len() == c.len()), "column {name} has {} rows, the table {}", c.len(), self.rows());
        self.columns.push((name, c));
        self
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    /// Column `name`, if the table has it.
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }

    /// The first row whose columns `keys` hold the given texts or numbers, as (column, value)
    /// pairs: labels as text, numbers as `f64` (NaN where missing).
    pub fn row(&self, keys: &[(&str, &str)]) -> Option<Vec<(&'static str, String)>> {
        let r = (0..self.rows()).find(|&r| keys.iter().all(|(k, v)| self.get(k).is_some_and(|c| c.text(r) == *v)))?;
        Some(self.columns.iter().map(|(n, c)| (*n, c.text(r))).collect())
    }

    /// The table as a JSON object of column arrays.
    pub fn to_json(&self) -> Value {
        Value::Object(self.columns.iter().map(|(n, c)| (n.to_string(), c.to_json())).collect::<Map<_, _>>())
    }
}

/// A run's tables by name.
pub type Tables = Vec<(&'static str, Table)>;

/// The tables as a JSON object of tables, and their columns' dtypes (`Column::dtype`) as
/// another, so that a reader builds the same frames from either.
pub fn tables_json(tables: &Tables) -> (Value, Value) {
    let dtypes = |t: &Table| Value::Object(t.columns.iter().map(|(n, c)| (n.to_string(), Value::from(c.dtype()))).collect());
    (
        Value::Object(tables.iter().map(|(n, t)| (n.to_string(), t.to_json())).collect()),
        Value::Object(tables.iter().map(|(n, t)| (n.to_string(), dtypes(t))).collect()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_keep_their_types_and_missing_values_become_null_in_json() {
        let t = Table::default()
            .col("port", Column::labels(["s0-h0", "s0-h1", "s0-h0"]))
            .col("bytes", vec![1u32, 2, 3])
            .col("rtt_us", vec![Some(1.5), None, Some(2.0)])
            .col("cwnd_bytes", vec![Some(10u64), None, Some(0)]);
        assert_eq!(t.columns[0].1, Column::Labels { codes: vec![0, 1, 0], names: vec!["s0-h0".into(), "s0-h1".into()] });
        assert_eq!(t.columns[1].1, Column::Int(vec![1, 2, 3]));
        assert_eq!(t.rows(), 3);
        assert_eq!(t.to_json(), json!({"port": ["s0-h0", "s0-h1", "s0-h0"], "bytes": [1, 2, 3], "rtt_us": [1.5, null, 2.0], "cwnd_bytes": [10, null, 0]}));
    }
}
