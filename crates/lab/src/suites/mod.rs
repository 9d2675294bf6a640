//! The lab's experiment suites and their registry.
//!
//! A [`Suite`] lists its runs (`runs(quick, seed)`: run IDs and
//! [`Scenario`]s; [`Suite::runs_with`] when the command line adds options
//! such as `--traces`) and builds its report from the runs' records, read back
//! from `runs/RUN_ID.json` ([`RunRecord`]). [`crate::labcmd`] runs the
//! scenarios in parallel, writes the JSON files and calls
//! [`Suite::report`]. Add a suite by implementing the trait and adding one
//! line to [`all`].

use std::path::{Path, PathBuf};

use crate::scenario::Scenario;

pub mod common;
pub mod fidelity;
pub mod hetero;
pub mod migration;
pub mod mp_vs_sp;
pub mod pn_space_debate;
pub mod rpc;
pub mod sim_vs_real;
pub mod spns_rules;
pub mod spns_vs_mpns;
pub mod spns_vs_mpns_fidelity;
pub mod trace_dir;
pub mod wsp;
pub mod xlink;
pub mod xlink_fidelity;

pub use common::{ReportOutput, RunRecord};

/// What a suite's run list depends on.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// The quick variant.
    pub quick: bool,
    /// Master seed.
    pub seed: u64,
    /// A directory of user-supplied Mahimahi traces to replay instead of
    /// the generated ones (only suites that override
    /// [`Suite::runs_with`] accept it).
    pub traces: Option<PathBuf>,
}

/// One experiment suite.
pub trait Suite: Send + Sync {
    /// Name used on the command line (`mpquic lab run NAME`).
    fn name(&self) -> &'static str;
    /// One-line description for `mpquic lab list`.
    fn description(&self) -> &'static str;
    /// The runs: unique run IDs (file-name safe) and their scenarios.
    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)>;
    /// The runs for command-line options; errors on options the suite
    /// does not support (the default supports none beyond quick and seed)
    /// or on bad input such as a trace directory without usable traces.
    fn runs_with(&self, opts: &SuiteOptions) -> anyhow::Result<Vec<(String, Scenario)>> {
        if let Some(dir) = &opts.traces {
            anyhow::bail!(
                "suite `{}` does not replay trace files (--traces {}); only spns-vs-mpns does",
                self.name(),
                dir.display()
            );
        }
        Ok(self.runs(opts.quick, opts.seed))
    }
    /// Builds the report (CSV tables, plots, `index.html`) in `out_dir`
    /// from the runs' records. Runs may be missing (a partial shard set):
    /// the report then shows what it has.
    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput>;
}

/// Every registered suite, in `lab list` order.
pub fn all() -> Vec<Box<dyn Suite>> {
    vec![
        Box::new(spns_vs_mpns::SpnsVsMpns::default()),
        Box::new(mp_vs_sp::MpVsSp::default()),
        Box::new(pn_space_debate::PnSpaceDebate::default()),
        Box::new(spns_rules::SpnsRulesSuite::default()),
        Box::new(rpc::Rpc::default()),
        Box::new(xlink::XlinkSuite),
        Box::new(hetero::Hetero::default()),
        Box::new(migration::Migration::default()),
        Box::new(sim_vs_real::SimVsReal::default()),
    ]
}

/// The suite called `name`.
pub fn find(name: &str) -> Option<Box<dyn Suite>> {
    all().into_iter().find(|s| s.name() == name)
}
