//! Each figure's pairs as they accumulate, and the pairing of one measurement in one process
//! pair.

use super::*;
use benchmp::schema::{Pair, Sizing};

/// One figure's pairs as they accumulate over the process pairs.
#[derive(Debug)]
pub(super) struct Tally {
    pub(super) ready: Ready,
    pub(super) iterations: u64,
    pub(super) d: Vec<f64>,
    pub(super) va: Vec<f64>,
    pub(super) vb: Vec<f64>,
    pub(super) pre: (u64, u64),
    pub(super) mig: (usize, usize),
    pub(super) timed: (u64, u64),
    pub(super) cpu: (u64, u64),
    pub(super) seconds: f64,
    pub(super) processes: Vec<ProcessPair>,
    /// Set once decided, or at the last look.
    pub(super) judgement: Option<Judgement>,
    /// Its block of pairs per process pair, once its variance components are known.
    pub(super) block_pairs: Option<usize>,
    /// Alpha spent over its looks at repetition pairs (`--processes 1`).
    pub(super) spending: Spending,
    /// Its buffers are renewed between blocks (both sides can, and a renewal has not failed).
    pub(super) renews: bool,
    /// What the last renewal of both sides took, s.
    pub(super) renew_cost: Option<f64>,
    /// Each child's cluster ([`clusters`]), for the system figure of a step.
    pub(super) clusters: Vec<usize>,
}

impl Tally {
    pub(super) fn new(ready: Ready, iterations: u64, alpha: f64) -> Tally {
        Tally {
            renews: ready.renews,
            clusters: clusters(&ready.cpus),
            ready,
            iterations,
            d: Vec::new(),
            va: Vec::new(),
            vb: Vec::new(),
            pre: (0, 0),
            mig: (0, 0),
            timed: (0, 0),
            cpu: (0, 0),
            seconds: 0.0,
            processes: Vec::new(),
            judgement: None,
            block_pairs: None,
            spending: Spending::new(alpha),
            renew_cost: None,
        }
    }

    /// Seconds per repetition pair so far (its warm-up steps included); `None` before any.
    pub(super) fn per_pair(&self) -> Option<f64> {
        (!self.d.is_empty() && self.seconds > 0.0).then(|| self.seconds / self.d.len() as f64)
    }

    /// Adds one pair of steps: each side's figure by `metric`, their log ratio (positive: B
    /// worse, as `better` says), and each side's preemptions, migrations, timed and CPU time.
    fn add_pair(&mut self, metric: &Metric, better: Better, sa: &[StepSample], sb: &[StepSample]) {
        let (xa, xb) = (
            value(metric, sa, &self.clusters, self.ready.sequential),
            value(metric, sb, &self.clusters, self.ready.sequential),
        );
        // Whatever counts a worker sends, the totals saturate rather than overflow.
        let sum = |v: &[StepSample], f: fn(&StepSample) -> u64| {
            v.iter().fold(0u64, |acc, s| acc.saturating_add(f(s)))
        };
        let longest = |v: &[StepSample]| v.iter().map(|s| s.elapsed_ns).max().unwrap_or(0);
        self.pre.0 = self.pre.0.saturating_add(sum(sa, |s| s.preempted));
        self.pre.1 = self.pre.1.saturating_add(sum(sb, |s| s.preempted));
        self.mig.0 += sa.iter().filter(|s| s.cpus.0 != s.cpus.1).count();
        self.mig.1 += sb.iter().filter(|s| s.cpus.0 != s.cpus.1).count();
        self.timed.0 = self.timed.0.saturating_add(longest(sa));
        self.timed.1 = self.timed.1.saturating_add(longest(sb));
        self.cpu.0 = self.cpu.0.saturating_add(sum(sa, |s| s.cpu_ns));
        self.cpu.1 = self.cpu.1.saturating_add(sum(sb, |s| s.cpu_ns));
        self.va.push(xa);
        self.vb.push(xb);
        self.d.push(paired::log_ratio(xa, xb, better));
    }

    /// Where the variance of its differences lives, within and between process pairs.
    pub(super) fn variance(&self) -> Option<paired::variance::Components> {
        let sizes: Vec<usize> = self.processes.iter().map(|p| p.pairs).collect();
        paired::variance::of_process_pairs(&self.d, &sizes)
    }

    /// The verdict over the process pairs' estimates so far, at the last look's confidence;
    /// undecided with fewer than `FIRST_PROCESS_LOOK` of them (or `--processes`), whose spread
    /// says too little about the next one's (two that agree by chance would make a PASS).
    pub(super) fn judge_processes(&self, rule: &AbRule) -> Judgement {
        let units: Vec<f64> = self.processes.iter().map(|p| p.estimate).collect();
        let mut j = paired::judge_mean(
            &units,
            rule.min_effect_pct,
            rule.confidence,
            "process pairs",
        );
        let fewest = FIRST_PROCESS_LOOK.min(rule.processes);
        if units.len() < fewest && j.decision != Decision::Undecided {
            j.decision = Decision::Undecided;
            j.why = Some(format!(
                "too few process pairs ({}) for a verdict: {fewest} at least",
                units.len()
            ));
        }
        j
    }

    pub(super) fn figure(self, rule: &AbRule) -> AbFigure {
        let variance = self.variance();
        let judgement = match self.judgement {
            Some(j) => j,
            // A side ended early: what there is.
            None if rule.unit() == Unit::ProcessPairs => self.judge_processes(rule),
            None => paired::judge_pairs(&self.d, rule.min_effect_pct, rule.confidence),
        };
        let verdict = match judgement.decision {
            Decision::Fail => Verdict::Fail,
            Decision::Improved => Verdict::Improved,
            Decision::Pass => Verdict::Pass,
            Decision::Undecided => Verdict::Noisy,
        };
        AbFigure {
            measurement: self.ready.figure(),
            unit: self.ready.metric.unit().to_string(),
            better: self.ready.metric.better(),
            base_median: benchmp::stats::median_of(&self.va),
            current_median: benchmp::stats::median_of(&self.vb),
            verdict,
            paired: PairedFigure {
                judged_over: rule.unit(),
                judgement,
                cpus: self.ready.cpus,
                iterations: self.iterations,
                seconds: self.seconds,
                variance,
                processes: self.processes,
                preempted: self.pre,
                migrated: self.mig,
                timed_ns: self.timed,
                cpu_ns: self.cpu,
                params: (self.ready.params, self.ready.params_b),
                differences: self.d,
                base_values: self.va,
                current_values: self.vb,
            },
        }
    }
}

/// Pairs one measurement in one process pair: for its share of the budget ([`Plan::block`],
/// at least `MIN_BLOCK_PAIRS` pairs) or `--pairs` pairs; with one process pair, until the
/// verdict over the repetition pairs is decided or the budget is spent, its looks' confidences
/// from the alpha-spending function.
#[allow(clippy::too_many_arguments)]
pub(super) fn pair_block(
    args: &AbArgs,
    rule: &AbRule,
    budget: Duration,
    rng: &mut XorShift,
    a: &mut Worker,
    b: &mut Worker,
    t: &mut Tally,
) -> Result<()> {
    let iterations = t.iterations;
    let timeout = step_timeout(rule);
    // One untimed repetition on each side first: caches, TLBs and branch predictors warm.
    a.step(iterations, timeout)?;
    b.step(iterations, timeout)?;
    let metric = t.ready.metric.clone();
    let better = metric.better();
    let mut block = Block {
        budget,
        alone: rule.unit() == Unit::RepetitionPairs,
        start: Instant::now(),
        first: t.d.len(),
        renewed_at: Instant::now(),
        renewed_pairs: 0,
        renewals: 0,
    };
    loop {
        let a_first = match rule.order {
            Order::Random => rng.coin(),
            Order::Abba => t.d.len().is_multiple_of(2),
        };
        let (sa, sb) = step_both(a, b, a_first, iterations, timeout)?;
        t.add_pair(&metric, better, &sa, &sb);
        let n = t.d.len() - block.first;
        if block.over(args, rule, t, n) {
            break;
        }
        // Fresh buffers on both sides (in a random order) after a block of pairs that took ten
        // times what the last renewal did, unless the process pair's end is nearer than that.
        if block.renewal_due(args, rule, t, n) {
            let both = renew_both(rng, a, b, t)?;
            block.renewed(n, both);
        }
    }
    block.end(a, b, t)
}

/// One measurement's block of pairs in one process pair, as it is taken.
struct Block {
    /// Its share of the budget.
    budget: Duration,
    /// The only process pair: the repetition pairs are the units, looked at as they come.
    alone: bool,
    /// When its timed pairs began.
    start: Instant,
    /// Where its pairs begin among the tally's.
    first: usize,
    /// When both sides' buffers were last renewed (or the pairs began).
    renewed_at: Instant,
    /// Its pairs at that renewal.
    renewed_pairs: usize,
    /// Renewals of both sides' buffers so far.
    renewals: usize,
}

impl Block {
    /// Whether the block ends after its `n`th pair. With one process pair: when a look at the
    /// repetition pairs decides the verdict, or at the last look (the budget spent, or the
    /// most pairs taken) whatever it says; the look's judgement is set in the tally.
    /// Otherwise: once `--pairs` pairs are taken, or without it once the budget is spent and
    /// it has `MIN_BLOCK_PAIRS`.
    fn over(&self, args: &AbArgs, rule: &AbRule, t: &mut Tally, n: usize) -> bool {
        let spent = args.pairs.is_none() && self.start.elapsed() >= self.budget;
        if self.alone {
            let last = spent || n >= rule.looks.max_pairs;
            if last || rule.looks.is_look(n) {
                // Information: the share of the budget spent, or of the pairs with --pairs.
                let info = match args.pairs {
                    _ if last => 1.0,
                    Some(max) => n as f64 / max as f64,
                    None => self.start.elapsed().as_secs_f64() / self.budget.as_secs_f64(),
                };
                let confidence = confidence_at(t.spending.look(info));
                let j = paired::judge_pairs(&t.d, rule.min_effect_pct, confidence);
                if last || j.decision != Decision::Undecided {
                    t.judgement = Some(j);
                    return true;
                }
            }
            false
        } else {
            args.pairs.map_or(spent && n >= MIN_BLOCK_PAIRS, |p| n >= p)
        }
    }

    /// Whether both sides' buffers are renewed after its `n`th pair: when the rule and the
    /// tally allow it, and the pairs since the last renewal (`RENEW_PAIRS` at least) took ten
    /// times what it did, unless the block's end is nearer than that (`RENEW_PAIRS` pairs
    /// with `--pairs`, else ten times the last renewal's cost).
    fn renewal_due(&self, args: &AbArgs, rule: &AbRule, t: &Tally, n: usize) -> bool {
        let cost = t.renew_cost.unwrap_or(0.0);
        let block_done = n - self.renewed_pairs >= RENEW_PAIRS
            && self.renewed_at.elapsed().as_secs_f64() * RENEW_SHARE >= cost;
        let room = match args.pairs {
            Some(p) => p - n >= RENEW_PAIRS,
            None => {
                (self.start.elapsed().as_secs_f64() + cost / RENEW_SHARE)
                    < self.budget.as_secs_f64()
            }
        };
        rule.renew && t.renews && block_done && room
    }

    /// Notes a renewal after its `n`th pair, counted when `both` sides renewed.
    fn renewed(&mut self, n: usize, both: bool) {
        self.renewals += usize::from(both);
        (self.renewed_at, self.renewed_pairs) = (Instant::now(), n);
    }

    /// Ends the block: both sides told to stop, its time added to the tally's, and its pairs
    /// kept in the tally as one process pair's, with their estimate.
    fn end(self, a: &mut Worker, b: &mut Worker, t: &mut Tally) -> Result<()> {
        a.send(ToWorker::Stop)?;
        b.send(ToWorker::Stop)?;
        t.seconds += self.start.elapsed().as_secs_f64();
        let block = &t.d[self.first..];
        let estimate = paired::hodges_lehmann(block);
        t.processes.push(ProcessPair {
            pairs: block.len(),
            estimate,
            estimate_pct: estimate.exp_m1() * 100.0,
            renewals: self.renewals,
            stack_offset_bytes: Some(a.stack_offset),
        });
        Ok(())
    }
}

/// One timed repetition on each side, back to back, A's first when `a_first`: A's samples and
/// B's.
fn step_both(
    a: &mut Worker,
    b: &mut Worker,
    a_first: bool,
    iterations: u64,
    timeout: Duration,
) -> Result<(Vec<StepSample>, Vec<StepSample>)> {
    if a_first {
        let sa = a.step(iterations, timeout)?;
        Ok((sa, b.step(iterations, timeout)?))
    } else {
        let sb = b.step(iterations, timeout)?;
        Ok((a.step(iterations, timeout)?, sb))
    }
}

/// Renews both sides' buffers, in a random order; what it took is kept as the tally's
/// renewal cost. Whether both sides renewed.
fn renew_both(rng: &mut XorShift, a: &mut Worker, b: &mut Worker, t: &mut Tally) -> Result<bool> {
    let began = Instant::now();
    let (first, second) = if rng.coin() {
        (&mut *a, &mut *b)
    } else {
        (&mut *b, &mut *a)
    };
    let renewed = first.renew(first.renew_timeout(t.renew_cost))?;
    let both = second.renew(second.renew_timeout(t.renew_cost))? && renewed;
    t.renew_cost = Some(began.elapsed().as_secs_f64());
    // A side short of memory for a second set beside the first: no more tries.
    t.renews = both;
    Ok(both)
}

/// One side's figure for one step: the tool's own system figure
/// ([`benchmp::aggregate::system_value`]) of its children's steps, child `i` in cluster
/// `clusters[i]`: throughputs added (averaged when the children were timed one after another),
/// latencies averaged within each cluster and the clusters' means averaged. A step's time is
/// its net time, or its elapsed time when the subtracted overheads swallowed it (a log ratio
/// needs a figure above 0).
pub(super) fn value(
    metric: &Metric,
    samples: &[StepSample],
    clusters: &[usize],
    sequential: bool,
) -> f64 {
    let values: Vec<(usize, f64)> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let u = if s.net_ns > 0 { s.net_ns } else { s.elapsed_ns }.max(1);
            let pair = Pair { n: s.iterations, u };
            (clusters.get(i).copied().unwrap_or(0), metric.value(pair))
        })
        .collect();
    benchmp::aggregate::system_value(&values, metric, sequential)
}

/// Each child's cluster as the tool's own figures place it ([`benchmp::aggregate::cluster_of`]),
/// from this machine's topology; every child in one cluster when it cannot be read.
pub(super) fn clusters(cpus: &[Option<usize>]) -> Vec<usize> {
    let topology = benchmp::topology::Topology::detect().ok();
    cpus.iter()
        .map(|&c| {
            topology
                .as_ref()
                .map_or(0, |t| benchmp::aggregate::cluster_of(c, t))
        })
        .collect()
}

/// A measurement a worker is ready to pair.
#[derive(Debug, Clone)]
pub(super) struct Ready {
    pub(super) measurement: String,
    pub(super) metric: Metric,
    pub(super) params: serde_json::Value,
    /// What sizes it besides its name, as the tool declared it (`None` from a build before
    /// workers sent it).
    pub(super) sizing: Option<Sizing>,
    /// B's parameters (the figure is A's account; B's settings may differ).
    pub(super) params_b: serde_json::Value,
    pub(super) cpus: Vec<Option<usize>>,
    /// The side's children can renew their buffers.
    pub(super) renews: bool,
    /// The side's children are timed one after another: a step's figure is their mean.
    pub(super) sequential: bool,
}

impl Ready {
    /// The figure this measurement is ([`figure_label`]).
    pub(super) fn figure(&self) -> String {
        figure_label(&self.measurement, self.sizing.as_ref(), &self.params)
    }
}

/// What makes two measurements the same figure: the name and what sizes it, as the tool
/// declared it ([`Sizing::label`]). A worker of a build from before tools declared their
/// sizing sent only its parameters: for it, the parameters those tools sized their figures by
/// (`size_bytes`, `stride_bytes`, `layout`, which give the same label), so that such a build
/// can still be paired with a newer one. Shortened and printable, as a worker sent it.
pub(super) fn figure_label(
    measurement: &str,
    sizing: Option<&Sizing>,
    p: &serde_json::Value,
) -> String {
    let legacy;
    let sizing = match sizing {
        Some(s) => s,
        None => {
            legacy = Sizing {
                size_bytes: p.get("size_bytes").and_then(serde_json::Value::as_u64),
                stride_bytes: p.get("stride_bytes").and_then(serde_json::Value::as_u64),
                layout: p
                    .get("layout")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string),
                level: None,
            };
            &legacy
        }
    };
    bounded(&sizing.label(measurement))
}
