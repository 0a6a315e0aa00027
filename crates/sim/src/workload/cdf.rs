//! Flow-size distributions given as points of their CDF, sampled by inverse transform with
//! linear interpolation between points (reference algorithms.md §9.3: HPCC's `traffic_gen/`
//! files and `custom_rand.py`; a size is truncated to whole bytes, 0 becomes 1).

use crate::core::engine::Rng;
use crate::scenario::CdfSpec;
use crate::scenario::MAX_TRANSFER;
use rand::Rng as _;

/// `(size_bytes, cumulative_percent)` points.
type Points = &'static [(f64, f64)];

/// DCTCP paper web search (HPCC `WebSearch_distribution.txt`, mean 1,711,250 B).
const WEBSEARCH: Points = &[
    (0.0, 0.0),
    (10_000.0, 15.0),
    (20_000.0, 20.0),
    (30_000.0, 30.0),
    (50_000.0, 40.0),
    (80_000.0, 53.0),
    (200_000.0, 60.0),
    (1_000_000.0, 70.0),
    (2_000_000.0, 80.0),
    (5_000_000.0, 90.0),
    (10_000_000.0, 97.0),
    (30_000_000.0, 100.0),
];

/// Facebook Hadoop (HPCC `FbHdp_distribution.txt`, mean 120,421 B).
const FB_HADOOP: Points = &[
    (0.0, 0.0),
    (100.0, 1.0),
    (200.0, 2.0),
    (300.0, 5.0),
    (350.0, 15.0),
    (400.0, 20.0),
    (500.0, 30.0),
    (600.0, 40.0),
    (700.0, 50.0),
    (1_000.0, 60.0),
    (2_000.0, 67.0),
    (7_000.0, 70.0),
    (30_000.0, 72.0),
    (50_000.0, 82.0),
    (80_000.0, 87.0),
    (120_000.0, 90.0),
    (300_000.0, 95.0),
    (1_000_000.0, 97.5),
    (2_000_000.0, 99.0),
    (10_000_000.0, 100.0),
];

/// Alibaba storage 2019 (HPCC `AliStorage2019.txt`, mean 40,870 B).
const ALISTORAGE: Points = &[
    (0.0, 0.0),
    (4_000.0, 22.93),
    (8_000.0, 69.21),
    (16_000.0, 80.61),
    (32_000.0, 90.47),
    (64_000.0, 93.53),
    (128_000.0, 96.77),
    (256_000.0, 97.53),
    (2_000_000.0, 100.0),
];

/// The shipped distributions by name.
pub const NAMED: &[(&str, Points)] = &[("websearch", WEBSEARCH), ("fb_hadoop", FB_HADOOP), ("alistorage", ALISTORAGE)];

#[derive(Clone, Debug)]
pub struct Cdf {
    /// (size in bytes, cumulative fraction), both non-decreasing, the last fraction 1.
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// The CDF a scenario names or lists; `Err` says what is allowed.
    pub fn from_spec(spec: &CdfSpec) -> Result<Cdf, String> {
        let points: Vec<(f64, f64)> = match spec {
            CdfSpec::Named(name) => match NAMED.iter().find(|(n, _)| n == name) {
                Some((_, p)) => p.to_vec(),
                None => {
                    let names: Vec<&str> = NAMED.iter().map(|(n, _)| *n).collect();
                    return Err(format!("one of {}, or a list of [size_bytes, cumulative_percent] points", names.join(", ")));
                }
            },
            CdfSpec::Points(p) => p.iter().map(|&[x, y]| (x, y)).collect(),
        };
        let ok = points.len() >= 2
            && points.iter().all(|&(x, y)| x.is_finite() && x >= 0.0 && (0.0..=100.0).contains(&y))
            && points.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
            && points.last().is_some_and(|&(_, y)| y == 100.0)
            && points.last().is_some_and(|&(x, _)| x >= 1.0 && x <= MAX_TRANSFER.0 as f64);
        if !ok {
            return Err(format!(
                "at least 2 [size_bytes, cumulative_percent] points, both non-decreasing, percent ending at 100, sizes at most {MAX_TRANSFER}"
            ));
        }
        Ok(Cdf { points: points.into_iter().map(|(x, y)| (x, y / 100.0)).collect() })
    }

    /// The size at cumulative fraction `u` in [0, 1): linear between the points around it.
    pub fn quantile(&self, u: f64) -> u64 {
        let p = &self.points;
        let i = p.partition_point(|&(_, y)| y <= u);
        let x = if i == 0 {
            p[0].0
        } else if i == p.len() {
            p[p.len() - 1].0
        } else {
            let ((x0, y0), (x1, y1)) = (p[i - 1], p[i]);
            x0 + (x1 - x0) * (u - y0) / (y1 - y0)
        };
        (x as u64).max(1)
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.quantile(rng.random::<f64>())
    }

    /// Mean size: the trapezoid rule over the points, exact for linear interpolation (plus any
    /// mass at the first point).
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        p[0].0 * p[0].1 + p.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::engine::{rng_stream, Stream};

    fn named(n: &str) -> Cdf {
        Cdf::from_spec(&CdfSpec::Named(n.into())).unwrap()
    }

    #[test]
    fn means_match_the_reference() {
        // Reference algorithms.md §9.3.
        assert!((named("websearch").mean() - 1_711_250.0).abs() < 1.0);
        assert!((named("fb_hadoop").mean() - 120_421.0).abs() / 120_421.0 < 1e-3);
        assert!((named("alistorage").mean() - 40_870.0).abs() / 40_870.0 < 1e-3);
    }

    #[test]
    fn quantiles_interpolate_linearly() {
        let c = named("websearch");
        assert_eq!(c.quantile(0.15), 10_000);
        // Halfway between 10 KB (15 %) and 20 KB (20 %); truncation may take the last byte.
        assert!((14_999..=15_000).contains(&c.quantile(0.175)));
        assert_eq!(c.quantile(0.0), 1, "0 becomes 1 byte");
        assert_eq!(c.quantile(0.985), 20_000_000);
    }

    #[test]
    fn sampled_means_within_two_percent_of_the_cdf_mean() {
        for (name, _) in NAMED {
            let c = named(name);
            let mut rng = rng_stream(1, Stream::Flow(0, 0));
            let n = 1_000_000;
            let mean = (0..n).map(|_| c.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            let err = (mean - c.mean()).abs() / c.mean();
            assert!(err < 0.02, "{name}: sampled mean {mean:.0} vs CDF mean {:.0} ({:.2} %)", c.mean(), err * 100.0);
        }
    }

    #[test]
    fn bad_points_are_refused() {
        let bad = |p: Vec<[f64; 2]>| Cdf::from_spec(&CdfSpec::Points(p)).is_err();
        assert!(bad(vec![[0.0, 0.0]]));
        assert!(bad(vec![[0.0, 0.0], [10.0, 90.0]]), "must end at 100 %");
        assert!(bad(vec![[10.0, 0.0], [5.0, 100.0]]), "sizes must not decrease");
        assert!(!bad(vec![[1000.0, 0.0], [2000.0, 100.0]]));
        assert!(Cdf::from_spec(&CdfSpec::Named("web".into())).unwrap_err().contains("websearch"));
    }
}
