//! How `benchmp ab` spends its budget: each process pair's block of repetition pairs per
//! undecided figure.

use super::*;

/// How the budget is spent in one process pair: each undecided figure's block of pairs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// Process pair (0-based).
    pub(super) round: usize,
    /// The whole `--time`, in one process pair; `None` over several.
    pub(super) whole: Option<Duration>,
    /// Seconds left of the budget per undecided figure.
    pub(super) left: f64,
    /// Process pairs `--processes` still allows, this one included.
    pub(super) rounds_left: usize,
    /// Seconds a process pair costs each figure beyond its pairs, once measured.
    pub(super) overhead: Option<f64>,
    /// `--time`.
    pub(super) time: f64,
}

impl Plan {
    pub(super) fn new(
        args: &AbArgs,
        started: Instant,
        round: usize,
        tallies: &[Tally],
        overhead: Option<f64>,
    ) -> Plan {
        let undecided = tallies.iter().filter(|t| t.judgement.is_none()).count();
        let left = total_budget(args, tallies.len()).saturating_sub(started.elapsed());
        Plan {
            round,
            whole: (args.processes == 1).then(|| Duration::from_secs_f64(args.time)),
            left: left.as_secs_f64() / undecided.max(1) as f64,
            rounds_left: args.processes - round,
            overhead,
            time: args.time,
        }
    }

    /// The time for figure `t`'s pairs in this process pair (at least `MIN_BLOCK_PAIRS`
    /// pairs are taken whatever it says): its planned block of pairs once
    /// [`Plan::block_pairs`] has made one, before that an even share of what is left over the
    /// 16 process pairs first planned, less each one's cost beyond its pairs.
    pub(super) fn block(&self, t: &Tally) -> Duration {
        if let Some(whole) = self.whole {
            return whole;
        }
        if self.round == 0 {
            return Duration::from_secs_f64(
                self.time / PLANNED_PROCESSES.min(self.rounds_left) as f64,
            );
        }
        if let (Some(m), Some(per_pair)) = (t.block_pairs, t.per_pair()) {
            return Duration::from_secs_f64(m as f64 * per_pair);
        }
        let still = PLANNED_PROCESSES
            .saturating_sub(self.round)
            .clamp(1, self.rounds_left);
        let share = self.left / still as f64 - self.overhead.unwrap_or(0.0);
        Duration::from_secs_f64(share.max(0.0))
    }

    /// The block of pairs per process pair that spends figure `t`'s budget best, from its
    /// variance components: with σ_b between and σ_w within process pairs, a cost C_p per
    /// process pair beyond its pairs and C_r per repetition pair, the variance of the mean over
    /// K process pairs of m pairs, (σ_b² + σ_w²/m)/K with K = T/(C_p + m·C_r), is least at
    /// m* = (σ_w/σ_b)·√(C_p/C_r) (the optimal two-stage sample; Cochran, *Sampling
    /// Techniques*, §10.6). At least `MIN_BLOCK_PAIRS`, and at most what leaves the budget 8
    /// process pairs in all (the t interval's degrees of freedom); `None` until 3 process
    /// pairs tell the parts apart.
    pub(super) fn block_pairs(&self, t: &Tally) -> Option<usize> {
        let c = t.variance()?;
        let overhead = self.overhead?;
        let per_pair = t.per_pair()?;
        if t.processes.len() < REPLAN_AFTER {
            return None;
        }
        // A between part its F test does not show (p above 5 %) counts as none: a spread of a
        // few process pairs' means that chance gives would cut the blocks short for nothing.
        let m = if c.between_sd_pct > 0.0 && c.between_p <= BETWEEN_SHOWN {
            c.within_sd_pct / c.between_sd_pct * (overhead / per_pair).sqrt()
        } else {
            f64::INFINITY
        };
        let still = MIN_PLANNED
            .saturating_sub(self.round)
            .clamp(1, self.rounds_left);
        let most = (self.left / still as f64 - overhead) / per_pair;
        let m = m.min(most).max(MIN_BLOCK_PAIRS as f64);
        Some(if m.is_finite() {
            m.round() as usize
        } else {
            MIN_BLOCK_PAIRS
        })
    }
}
