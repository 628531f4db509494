//! `benchmp compare BASE CUR`: an A/B verdict on every figure that separate runs share, from
//! their report files or result folders (the judging itself is [`benchmp_cli::compare`]).

use std::path::{Path, PathBuf};

use anyhow::Result;
use benchmp_cli::compare::{self, Judging, Run};

/// `benchmp compare`'s options.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// BASE then CUR, one run each (a report file or a result folder); with `--`, every
    /// run of BASE.
    #[arg(value_name = "BASE", required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// After `--`: every run of CUR, the side judged against BASE (options go before `--`).
    #[arg(value_name = "CUR", last = true)]
    pub current_runs: Vec<PathBuf>,
    /// Smallest change that counts, percent of the baseline's figure.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = min_effect)]
    pub min_effect: f64,
    /// With one run per side: how far two runs of one build drift apart on this machine,
    /// percent (the largest change between two baseline runs). A change within it is
    /// NOISY; without it (the default) every change beyond --min-effect is.
    #[arg(long, value_name = "PCT", value_parser = min_effect)]
    pub run_spread: Option<f64>,
    /// With several runs on a side: the Mann-Whitney p-value below which a change beyond
    /// --min-effect is a FAIL or IMPROVED rather than NOISY.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = super::probability)]
    pub alpha: f64,
    /// `--json[=FILE]`: the comparison; `--csv[=FILE]`: one row per figure.
    #[command(flatten)]
    pub files: benchmp::cli::ResultFiles,
}

/// 0, or a percentage from a thousandth (a smaller one only prints as a long string of zeros)
/// to 1000.
fn min_effect(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p == 0.0 || (0.001..=1000.0).contains(&p) => Ok(p),
        _ => Err(format!("'{s}' is not 0 or a percentage from 0.001 to 1000")),
    }
}

/// Runs `benchmp compare`: splits the paths into two sides, loads every run, judges every
/// shared figure, writes what was asked; the exit status is 1 when a figure regressed.
pub fn run(args: CompareArgs) -> Result<i32> {
    let CompareArgs {
        runs,
        current_runs,
        min_effect,
        run_spread,
        alpha,
        files,
    } = args;
    let how = Judging {
        rule: benchmp::stats::verdict::JudgeRule {
            min_effect_pct: min_effect,
            alpha,
        },
        run_spread_pct: run_spread,
    };
    let (base, current) = compare::sides(runs, current_runs)?;
    let inputs: Vec<&Path> = base.iter().chain(&current).map(|p| p.as_path()).collect();
    compare::refuse_overwrite(&inputs, &files.named_files())?;
    files.check_besides(&benchmp::cli::Protected::new())?;
    let load = |side: &[PathBuf]| {
        side.iter()
            .map(|p| Run::load(p))
            .collect::<Result<Vec<_>, _>>()
    };
    let (b, c) = (load(&base)?, load(&current)?);
    let cmp = compare::compare(&b, &c, how)?;
    benchmp::output::emit(&cmp, benchmp::output::Outputs::to(&files))?;
    Ok(if cmp.regressed() {
        benchmp::EXIT_FAILED
    } else {
        benchmp::EXIT_OK
    })
}
