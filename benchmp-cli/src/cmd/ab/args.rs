//! `benchmp ab`'s options and their value parsers.

use super::*;

/// `benchmp ab`'s options.
#[derive(Debug, clap::Args)]
pub struct AbArgs {
    /// The baseline command (A), one string as for a shell: 'old/bw_mem 64m rd'. Leading
    /// VAR=VALUE words set its environment.
    pub base: String,
    /// The current command (B), judged against A: the same tool and figures.
    pub current: String,
    /// Smallest change that counts, percent: FAIL when B is worse than A by more than this
    /// with the interval's confidence, PASS when the interval lies within ± this. 1 % by
    /// default, so that a true 2 % change is found (the interval must clear the bound).
    #[arg(long, value_name = "PCT", default_value_t = 1.0, value_parser = positive_pct)]
    pub min_effect: f64,
    /// False-alarm rate of the whole comparison: split over its figures (Bonferroni) and spent
    /// over the looks by an O'Brien-Fleming-type function, so looking after every process pair
    /// costs little; with --processes 1, per figure.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = crate::cmd::probability)]
    pub alpha: f64,
    /// Time budget per figure, seconds: pairs are added until the verdict is decided or the
    /// budget is spent (then NOISY when still undecided). Over several process pairs the
    /// whole comparison keeps to it (this times the figures), worker start-up included: what
    /// is left is planned over 16 process pairs, then, after 3, over as many as the figure's
    /// variance components make best (longer ones when a process pair's repetitions vary
    /// more than process pairs do), at least 3 repetition pairs each, and no process pair
    /// starts once it is spent, so --processes is only an upper bound. Not used with --pairs.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = seconds)]
    pub time: f64,
    /// Take exactly this many pairs per figure in each process pair instead of the time
    /// budget: over process pairs the looks' information is then the share of --processes
    /// run; with --processes 1 the pairs are looked at once, at the end.
    #[arg(long, value_name = "N", value_parser = pair_count)]
    pub pairs: Option<usize>,
    /// Pairs of worker processes per figure, at most. Two processes of one build can differ
    /// by a few percent for their whole life (their physical pages, on a VM the host's
    /// backing), so each figure is paired in fresh processes, its budget split over them,
    /// and judged over their estimates: the process pair is the unit. Fewer run when --time
    /// is spent first or the verdict is decided (a look after every process pair from the
    /// 4th). 1: one pair of workers and the repetition pair as the unit (quicker, but blind
    /// to a difference between the two processes).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = process_count)]
    pub processes: usize,
    /// Length of one repetition, milliseconds (each side's count is sized to it once, and
    /// A's count is then used by both sides).
    #[arg(long, value_name = "MS", default_value_t = 20.0, value_parser = rep_ms)]
    pub rep_ms: f64,
    /// Order within each pair: random (a coin per pair) or abba (A B, B A, ...).
    #[arg(long, value_enum, default_value_t = Order::Random)]
    pub order: Order,
    /// Pages of the workers' buffers where a command names none (a memory tool's --pages):
    /// by default transparent huge pages asked of both sides, so that where each process's
    /// pages land matters less and both are backed alike (the kernel may decline: the tools'
    /// JSON says what they got); huge, 4k or system ask that of both; command leaves each
    /// command's own default.
    #[arg(long, value_enum, value_name = "PAGES", default_value_t = AbPages::Thp)]
    pub pages: AbPages,
    /// Keep each worker's buffers for its whole life. By default a tool that can (bw_mem,
    /// lat_mem_rd) maps fresh ones, warmed by an untimed repetition, between blocks of a
    /// process pair's repetitions when that costs at most a tenth of the time, so that
    /// page placement varies within the process pair and pairing averages it (over several
    /// process pairs; with --processes 1 the buffers are kept).
    #[arg(long)]
    pub no_renew: bool,
    /// Keep the workers' address-space randomisation. By default both start with it off, so
    /// two processes of one binary place code, stacks and buffers at the same addresses:
    /// otherwise 4 KiB aliasing between a copy's source and destination can differ between
    /// the two processes and show as a change that is neither build's.
    #[arg(long)]
    pub aslr: bool,
    /// Seed of the random order (default: from the clock; the report records it).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// `--json[=FILE]`: the verdicts, a comparison in benchmp compare's layout whose rows
    /// carry their pairs (`paired`); `--csv[=FILE]`: one row per figure in its columns.
    #[command(flatten)]
    pub files: benchmp::cli::ResultFiles,
}

/// What `--pages` asks of both sides' buffers: the tools' own page choices, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AbPages {
    /// Transparent huge pages asked (MADV_HUGEPAGE).
    Thp,
    /// Reserved 2 MiB hugetlb pages (both sides' buffers must fit in them).
    Huge,
    /// Base pages only.
    #[value(name = "4k")]
    Small,
    /// No advice: the kernel's policy.
    System,
    /// Each command's own default.
    Command,
}

impl AbPages {
    /// The pages the workers are given ([`benchmp::run::worker::PAGES_ENV`], by the name
    /// their --pages takes); `None` for `command`.
    pub(super) fn asked(self) -> Option<String> {
        use clap::ValueEnum;
        let pages = match self {
            AbPages::Thp => Pages::Thp,
            AbPages::Huge => Pages::Huge,
            AbPages::Small => Pages::Small,
            AbPages::System => Pages::System,
            AbPages::Command => return None,
        };
        pages.to_possible_value().map(|v| v.get_name().to_string())
    }
}

/// The smallest `--min-effect`: a thousandth of a percent is below any repetition's
/// resolution, and a smaller one only prints as a long string of zeros.
const MIN_EFFECT_PCT: f64 = 0.001;

fn positive_pct(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (MIN_EFFECT_PCT..=100.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{s}' is not a percentage from {MIN_EFFECT_PCT} to 100"
        )),
    }
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 86_400.0 => Ok(t),
        _ => Err(format!(
            "'{s}' is not a number of seconds above 0 and at most a day"
        )),
    }
}

fn pair_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (2..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a pair count from 2 to 1000000")),
    }
}

fn process_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a process pair count from 1 to 1000")),
    }
}

fn rep_ms(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if (0.01..=60_000.0).contains(&t) => Ok(t),
        _ => Err(format!(
            "'{s}' is not a repetition length from 0.01 to 60000 ms"
        )),
    }
}
