//! No congestion control: the NIC's line rate.

use crate::registry::{Algorithm, Controller, Kind, Path};
use crate::{Completion, ParamError, Rate, RateController};
use serde::{Deserialize, Serialize};

/// No congestion control: always the NIC line rate. With PFC this is the "PFC" column of
/// TIMELY's Table 1 (OS-bypass messaging over a lossless fabric, §6).
#[derive(Copy, Clone, Debug)]
pub struct LineRate(pub Rate);

impl RateController for LineRate {
    fn on_completion(&mut self, _: &Completion) {}
    fn rate(&self) -> Rate {
        self.0
    }
}

/// `cc.algorithm = "none"` takes no parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineRateParams {}

impl Algorithm for LineRateParams {
    const KIND: Kind = Kind::Rate;
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }
    fn build(&self, path: &Path) -> Controller {
        Controller::Rate(Box::new(LineRate(path.line_rate)))
    }
}
