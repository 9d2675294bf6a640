//! The lab's experiment suites and their registry.
//!
//! A [`Suite`] lists its runs (`runs(quick, seed)`: run IDs and
//! [`Scenario`]s) and builds its report from the runs' records, read back
//! from `runs/RUN_ID.json` ([`RunRecord`]). [`crate::labcmd`] runs the
//! scenarios in parallel, writes the JSON files and calls
//! [`Suite::report`]. Add a suite by implementing the trait and adding one
//! line to [`all`].

use std::path::Path;

use crate::scenario::Scenario;

pub mod common;
pub mod mp_vs_sp;
pub mod pn_space_debate;
pub mod rpc;
pub mod spns_vs_mpns;
pub mod wsp;
pub mod xlink;

pub use common::{ReportOutput, RunRecord};

/// One experiment suite.
pub trait Suite: Send + Sync {
    /// Name used on the command line (`mpquic lab run NAME`).
    fn name(&self) -> &'static str;
    /// One-line description for `mpquic lab list`.
    fn description(&self) -> &'static str;
    /// The runs: unique run IDs (file-name safe) and their scenarios.
    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)>;
    /// Builds the report (CSV tables, plots, `index.html`) in `out_dir`
    /// from the runs' records. Runs may be missing (a partial shard set):
    /// the report then shows what it has.
    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput>;
}

/// Every registered suite, in `lab list` order.
pub fn all() -> Vec<Box<dyn Suite>> {
    vec![
        Box::new(spns_vs_mpns::SpnsVsMpns::default()),
        Box::new(mp_vs_sp::MpVsSp),
        Box::new(pn_space_debate::PnSpaceDebate),
        Box::new(rpc::Rpc),
        Box::new(xlink::XlinkSuite),
    ]
}

/// The suite called `name`.
pub fn find(name: &str) -> Option<Box<dyn Suite>> {
    all().into_iter().find(|s| s.name() == name)
}
