//! The measured clock: three dependent chains of different operations, timed alike on the
//! monotonic clock, each link waiting for the one before (lmbench's `mhz` idea: the clock is
//! what several unlike chains agree on, not what one assumes).
//!
//! - an add chain, `x += y` with `y` a register whose value is only known at run time: one
//!   cycle a link on every x86_64 and aarch64 core. (An add of an immediate is not enough:
//!   some cores fold chains of those at rename and retire several a cycle, which once read
//!   as a 22 GHz clock);
//! - a mixed chain, `x = (x + y) ^ z`: two one-cycle operations a link;
//! - a multiply chain, `x *= m`: a whole number of cycles a link that differs between cores (2
//!   to 6), found from the other two and then held to them.
//!
//! The clock is the two one-cycle chains' and is known only when they agree within [`AGREE`]
//! and the multiply takes a whole number of their cycles (within [`AGREE`] below it, or up to
//! [`MUL_SLOW`] above: on an Intel Xeon guest of a busy host a dependent multiply read a few
//! per cent slow for minutes at a time while the adds agreed with lmbench's `mhz`, whereas a
//! chain a core shortcuts is off by a factor), each chain's fastest run of up to three
//! rounds, taken while they disagree; the clock is below [`MAX_MHZ`], and it lies
//! within [`REFERENCE_RANGE`] of what the machine itself says ([`Reference`]:
//! cpufreq's maximum, or x86's "cpu MHz"); otherwise the probe says why it is unknown, and
//! nothing (no per-MHz figure, no noise flag) rests on it.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Cycles each chain runs per timed run: 50 µs at 4 GHz, 0.4 ms at 500 MHz.
const CYCLES: u64 = 200_000;
/// Timed runs of each chain per probe, taken in turn; each chain's fastest counts (an
/// interrupt only ever slows a run).
const RUNS: usize = 7;
/// Rounds of [`RUNS`] a probe makes at most while its chains disagree.
const TRIES: usize = 3;
/// Links per loop iteration of every chain (the loop counter is a chain of its own beside).
const LINKS_PER_LOOP: u64 = 50;
/// Largest relative spread between the chains' clocks for the probe to be believed.
pub const AGREE: f64 = 0.03;
/// How much slower than a whole number of the one-cycle chains' cycles a multiply link may
/// be: 3-5 % on an Intel Xeon guest for minutes while the host was busy (its add chains agreed
/// with lmbench's `mhz` within 0.1 %); not made by a multiply loop on the guest's other vCPU,
/// so most likely another tenant's thread on the same core's multiplier.
pub const MUL_SLOW: f64 = 0.08;
/// No core runs faster: a clock above this is a chain the core shortcut, MHz.
pub const MAX_MHZ: f64 = 10_000.0;
/// The range, as a multiple of what the machine says its clock is ([`Reference`]), inside
/// which a measured clock may lie: turbo above a VM's nominal "cpu MHz" or acpi-cpufreq's
/// base-clock maximum stays well within it; a shortcut chain does not.
pub const REFERENCE_RANGE: (f64, f64) = (0.2, 3.0);
/// Cycles a multiply link may take on the cores socbench knows (x86_64: 3; aarch64: 2 to 5).
const MUL_CYCLES: std::ops::RangeInclusive<u32> = 2..=6;

/// The operation a chain repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainOp {
    /// `x += y`, one cycle a link.
    Add,
    /// `x = (x + y) ^ z`, two cycles a link.
    AddXor,
    /// `x *= m`, a whole number of cycles a link found from the other chains.
    Mul,
}

impl ChainOp {
    fn name(self) -> &'static str {
        match self {
            ChainOp::Add => "add",
            ChainOp::AddXor => "add-xor",
            ChainOp::Mul => "multiply",
        }
    }
}

/// One chain's timing (JSON: `op`, `cycles`, `ns_per_link`, `mhz`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Chain {
    /// The operation.
    pub op: ChainOp,
    /// Cycles a link takes: assumed for add and add-xor, the nearest whole number for
    /// multiply.
    pub cycles: u32,
    /// Time of one link in the fastest run, ns.
    pub ns_per_link: f64,
    /// The clock this chain gives at `cycles` a link, MHz.
    pub mhz: f64,
}

/// What the machine says its clock is, for a measured one to be held against (JSON: `mhz`,
/// `what`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// MHz.
    pub mhz: f64,
    /// Where it was read, e.g. `cpufreq cpuinfo_max_freq of CPU 1`.
    pub what: String,
}

impl Reference {
    /// cpufreq's `cpuinfo_max_freq` of `cpu` under the sysfs tree `sysfs`, else (x86) the
    /// "cpu MHz" of `/proc/cpuinfo`; `None` when neither says.
    pub fn read(sysfs: &std::path::Path, cpu: usize) -> Option<Reference> {
        let max = sysfs.join(format!(
            "devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq"
        ));
        if let Some(khz) = crate::sysfs::read_attr(&max)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&k| k > 0)
        {
            return Some(Reference {
                mhz: khz as f64 / 1000.0,
                what: format!("cpufreq cpuinfo_max_freq of CPU {cpu}"),
            });
        }
        let text = crate::input::read_text(
            std::path::Path::new(super::PROC_CPUINFO),
            crate::input::MAX_INPUT_BYTES,
        )
        .ok()?;
        super::cpuinfo_mhz(&text, cpu).map(|mhz| Reference {
            mhz,
            what: format!("/proc/cpuinfo \"cpu MHz\" of CPU {cpu}"),
        })
    }
}

/// One probe: the chains, the clock they agree on (or why there is none), and its cost
/// (JSON: `mhz` when known, `chains`, `unknown` when not, `cost_ns`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The clock, MHz: the one-cycle chains' mean when the chains agree and it is plausible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mhz: Option<f64>,
    /// Each chain's timing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<Chain>,
    /// Why the clock is unknown, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// Wall time of the whole probe, ns.
    pub cost_ns: u64,
}

/// A child's clock over its timed intervals: probed before the first and after the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbedClock {
    /// The probe before the first timed interval.
    pub before: Probe,
    /// The probe after the last.
    pub after: Probe,
}

impl ProbedClock {
    /// The clock over the intervals, the mean of the two probes, MHz; `None` unless both
    /// know it.
    pub fn mhz(&self) -> Option<f64> {
        Some((self.before.mhz? + self.after.mhz?) / 2.0)
    }

    /// How far the clock moved across the intervals, after over before − 1; `None` unless
    /// both probes know it.
    pub fn change(&self) -> Option<f64> {
        Some(self.after.mhz? / self.before.mhz? - 1.0)
    }

    /// Why the clock is unknown: the first probe's reason that has one.
    pub fn unknown(&self) -> Option<&str> {
        self.before
            .unknown
            .as_deref()
            .or(self.after.unknown.as_deref())
    }

    /// What both probes cost, ns.
    pub fn cost_ns(&self) -> u64 {
        self.before.cost_ns.saturating_add(self.after.cost_ns)
    }
}

/// The fastest run of each chain, ns, for the links each run made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timings {
    /// Links of the add chain per run, and its fastest run, ns.
    pub add: (u64, f64),
    /// Links of the add-xor chain per run, and its fastest run, ns.
    pub add_xor: (u64, f64),
    /// Links of the multiply chain per run, and its fastest run, ns.
    pub mul: (u64, f64),
}

/// Probes the clock of the CPU the caller runs on, held against `reference`; `None` where
/// there are no chains for this architecture or the timer did not advance.
pub fn probe(reference: Option<&Reference>) -> Option<Probe> {
    let start = Instant::now();
    let links = (
        CYCLES,
        CYCLES / 2,
        CYCLES / 3 / LINKS_PER_LOOP * LINKS_PER_LOOP,
    );
    // One untimed round first: the code and the branch predictor warm.
    run(ChainOp::Add, links.0)?;
    run(ChainOp::AddXor, links.1)?;
    run(ChainOp::Mul, links.2)?;
    // Each chain's fastest run so far: a clock still settling (a core waking from idle) or an
    // interrupt only slows runs, so chains that disagree get up to TRIES rounds of RUNS more
    // before the probe says so.
    let mut fastest = [u128::MAX; 3];
    let mut tries = 0;
    loop {
        tries += 1;
        for _ in 0..RUNS {
            for (slot, (op, n)) in fastest.iter_mut().zip([
                (ChainOp::Add, links.0),
                (ChainOp::AddXor, links.1),
                (ChainOp::Mul, links.2),
            ]) {
                let t = Instant::now();
                run(op, n)?;
                *slot = (*slot).min(t.elapsed().as_nanos());
            }
        }
        if fastest.contains(&0) {
            return None;
        }
        let timings = Timings {
            add: (links.0, fastest[0] as f64),
            add_xor: (links.1, fastest[1] as f64),
            mul: (links.2, fastest[2] as f64),
        };
        let cost_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let p = judge(&timings, reference, cost_ns);
        let disagree = p
            .unknown
            .as_deref()
            .is_some_and(|u| u.starts_with("the chains disagree"));
        if !disagree || tries >= TRIES {
            return Some(p);
        }
    }
}

/// The probe the chains' `timings` make: the one-cycle chains' clock when they agree within
/// [`AGREE`], the multiply chain takes a whole number of their cycles (the nearest, within
/// [`AGREE`] below or [`MUL_SLOW`] above), and it is plausible (below [`MAX_MHZ`], within
/// [`REFERENCE_RANGE`] of `reference`), else the reason.
pub fn judge(timings: &Timings, reference: Option<&Reference>, cost_ns: u64) -> Probe {
    let per_link = |(n, ns): (u64, f64)| ns / n.max(1) as f64;
    let chain = |op, cycles: u32, ns_per_link: f64| Chain {
        op,
        cycles,
        ns_per_link,
        mhz: f64::from(cycles) * 1e3 / ns_per_link,
    };
    let add = chain(ChainOp::Add, 1, per_link(timings.add));
    let add_xor = chain(ChainOp::AddXor, 2, per_link(timings.add_xor));
    let simple = (add.mhz + add_xor.mhz) / 2.0;
    let mul_ns = per_link(timings.mul);
    let mul_cycles = (mul_ns * simple / 1e3).round();
    let mul = chain(ChainOp::Mul, mul_cycles.clamp(1.0, 1e6) as u32, mul_ns);
    let chains = vec![add, add_xor, mul];
    let unknown = why_unknown(&chains, mul_ns * simple / 1e3, reference);
    let mhz = unknown.is_none().then_some(simple);
    Probe {
        mhz,
        chains,
        unknown,
        cost_ns,
    }
}

/// Why the chains give no clock: the one-cycle chains disagree, a multiply takes no
/// plausible whole number of their cycles (`mul_cycles`, as measured), or the clock is
/// impossible or far from `reference`.
fn why_unknown(chains: &[Chain], mul_cycles: f64, reference: Option<&Reference>) -> Option<String> {
    let list = || {
        chains
            .iter()
            .map(|c| {
                format!(
                    "{} {:.0} MHz at {} cycle{}",
                    c.op.name(),
                    c.mhz,
                    c.cycles,
                    if c.cycles == 1 { "" } else { "s" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !chains.iter().all(|c| c.mhz.is_finite() && c.mhz > 0.0) {
        return Some("a chain's time did not advance".into());
    }
    if let Some(mul) = chains
        .iter()
        .find(|c| c.op == ChainOp::Mul && !MUL_CYCLES.contains(&c.cycles))
    {
        return Some(format!(
            "the chains disagree: a multiply took {} add-chain cycles, not {} to {} ({})",
            mul.cycles,
            MUL_CYCLES.start(),
            MUL_CYCLES.end(),
            list()
        ));
    }
    let simple = || {
        chains
            .iter()
            .filter(|c| c.op != ChainOp::Mul)
            .map(|c| c.mhz)
    };
    let lo = simple().fold(f64::INFINITY, f64::min);
    let hi = simple().fold(0.0, f64::max);
    if hi / lo - 1.0 > AGREE {
        return Some(format!(
            "the chains disagree by {:.0} % ({})",
            (hi / lo - 1.0) * 100.0,
            list()
        ));
    }
    let whole = mul_cycles.round();
    if mul_cycles / whole - 1.0 > MUL_SLOW || whole / mul_cycles - 1.0 > AGREE {
        return Some(format!(
            "the chains disagree: a multiply took {mul_cycles:.2} add-chain cycles, not a whole number ({})",
            list()
        ));
    }
    if hi > MAX_MHZ {
        return Some(format!(
            "{hi:.0} MHz is above any core's clock ({})",
            list()
        ));
    }
    if let Some(r) = reference.filter(|r| r.mhz.is_finite() && r.mhz > 0.0) {
        let ratio = lo / r.mhz;
        if ratio < REFERENCE_RANGE.0 || hi / r.mhz > REFERENCE_RANGE.1 {
            return Some(format!(
                "{:.0} MHz is {:.2} times {} ({:.0} MHz)",
                (lo + hi) / 2.0,
                (lo + hi) / 2.0 / r.mhz,
                r.what,
                r.mhz
            ));
        }
    }
    None
}

/// Runs `links` links (a multiple of [`LINKS_PER_LOOP`]) of the chain of `op`; returns the
/// chain's value, which depends on every link.
fn run(op: ChainOp, links: u64) -> Option<u64> {
    // Operands the compiler cannot see: the add adds 1, the xor flips a constant's bits, the
    // multiply is by an odd constant (never by 1, which a core could shortcut).
    let y = std::hint::black_box(1u64);
    let z = std::hint::black_box(0x5bd1_e995_u64);
    let m = std::hint::black_box(0x9e37_79b9_7f4a_7c15_u64);
    let n = links / LINKS_PER_LOOP;
    if n == 0 {
        return Some(0);
    }
    match op {
        ChainOp::Add => chain::add(n, y),
        ChainOp::AddXor => chain::add_xor(n, y, z),
        ChainOp::Mul => chain::mul(n, m),
    }
}

/// The chains in assembly: the compiler may neither fold them nor reorder their links.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(unsafe_code)]
mod chain {
    /// Ten copies of one instruction line.
    macro_rules! ten {
        ($s:literal) => {
            concat!($s, $s, $s, $s, $s, $s, $s, $s, $s, $s)
        };
    }
    /// Fifty copies (one loop iteration's links).
    macro_rules! fifty {
        ($s:literal) => {
            concat!(ten!($s), ten!($s), ten!($s), ten!($s), ten!($s))
        };
    }

    /// `n` iterations of 50 `x += y`.
    #[inline(never)]
    pub(super) fn add(mut n: u64, y: u64) -> Option<u64> {
        let mut x = 0u64;
        // SAFETY: register arithmetic only: no memory is read or written, no stack used; the
        // counter is at least 1, so the loop ends after `n` iterations.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            std::arch::asm!(
                "2:", fifty!("add {x}, {y}\n"), "dec {n}", "jnz 2b",
                x = inout(reg) x, y = in(reg) y, n = inout(reg) n,
                options(nomem, nostack),
            );
            #[cfg(target_arch = "aarch64")]
            std::arch::asm!(
                "2:", fifty!("add {x}, {x}, {y}\n"), "subs {n}, {n}, #1", "b.ne 2b",
                x = inout(reg) x, y = in(reg) y, n = inout(reg) n,
                options(nomem, nostack),
            );
        }
        let _ = n;
        Some(x)
    }

    /// `n` iterations of 50 `x = (x + y) ^ z`.
    #[inline(never)]
    pub(super) fn add_xor(mut n: u64, y: u64, z: u64) -> Option<u64> {
        let mut x = 0u64;
        // SAFETY: as `add`: registers only, a counter of at least 1.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            std::arch::asm!(
                "2:", fifty!("add {x}, {y}\nxor {x}, {z}\n"), "dec {n}", "jnz 2b",
                x = inout(reg) x, y = in(reg) y, z = in(reg) z, n = inout(reg) n,
                options(nomem, nostack),
            );
            #[cfg(target_arch = "aarch64")]
            std::arch::asm!(
                "2:", fifty!("add {x}, {x}, {y}\neor {x}, {x}, {z}\n"), "subs {n}, {n}, #1", "b.ne 2b",
                x = inout(reg) x, y = in(reg) y, z = in(reg) z, n = inout(reg) n,
                options(nomem, nostack),
            );
        }
        let _ = n;
        Some(x)
    }

    /// `n` iterations of 50 `x *= m`.
    #[inline(never)]
    pub(super) fn mul(mut n: u64, m: u64) -> Option<u64> {
        let mut x = 1u64;
        // SAFETY: as `add`: registers only, a counter of at least 1.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            std::arch::asm!(
                "2:", fifty!("imul {x}, {m}\n"), "dec {n}", "jnz 2b",
                x = inout(reg) x, m = in(reg) m, n = inout(reg) n,
                options(nomem, nostack),
            );
            #[cfg(target_arch = "aarch64")]
            std::arch::asm!(
                "2:", fifty!("mul {x}, {x}, {m}\n"), "subs {n}, {n}, #1", "b.ne 2b",
                x = inout(reg) x, m = in(reg) m, n = inout(reg) n,
                options(nomem, nostack),
            );
        }
        let _ = n;
        Some(x)
    }
}

/// No chains for this architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod chain {
    pub(super) fn add(_n: u64, _y: u64) -> Option<u64> {
        None
    }
    pub(super) fn add_xor(_n: u64, _y: u64, _z: u64) -> Option<u64> {
        None
    }
    pub(super) fn mul(_n: u64, _m: u64) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_chains() -> bool {
        cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
    }

    #[test]
    fn every_chain_makes_every_link() {
        if !has_chains() {
            assert_eq!(run(ChainOp::Add, 100), None);
            return;
        }
        assert_eq!(run(ChainOp::Add, CYCLES), Some(CYCLES));
        assert_eq!(
            run(ChainOp::Add, 10),
            Some(0),
            "below one loop iteration, nothing"
        );
        // (x + 1) ^ z, 100 times, and m to the 100th power, in plain arithmetic.
        let z = 0x5bd1_e995_u64;
        let want = (0..100).fold(0u64, |x, _| x.wrapping_add(1) ^ z);
        assert_eq!(run(ChainOp::AddXor, 100), Some(want));
        let m = 0x9e37_79b9_7f4a_7c15_u64;
        let want = (0..100).fold(1u64, |x, _| x.wrapping_mul(m));
        assert_eq!(run(ChainOp::Mul, 100), Some(want));
    }

    fn timings(add_ns: f64, add_xor_ns: f64, mul_ns: f64) -> Timings {
        // 1000 links of each at the given ns per link.
        Timings {
            add: (1000, add_ns * 1000.0),
            add_xor: (1000, add_xor_ns * 1000.0),
            mul: (1000, mul_ns * 1000.0),
        }
    }

    #[test]
    fn chains_that_agree_give_the_clock() {
        // A 4 GHz core: add 0.25 ns, add-xor 0.5 ns, a 3-cycle multiply 0.75 ns.
        let p = judge(&timings(0.25, 0.5, 0.75), None, 7);
        assert_eq!(p.unknown, None);
        assert!((p.mhz.unwrap() - 4000.0).abs() < 1e-6, "{p:?}");
        assert_eq!(p.chains[2].cycles, 3);
        assert_eq!(p.cost_ns, 7);
        // A little noise within the agreement, and a 4-cycle multiply (an in-order arm core).
        let p = judge(&timings(0.505, 1.0, 2.02), None, 0);
        assert_eq!(p.chains[2].cycles, 4, "{p:?}");
        assert!(p.mhz.unwrap() > 1960.0 && p.mhz.unwrap() < 2000.0, "{p:?}");
    }

    #[test]
    fn a_multiply_slowed_by_a_sibling_thread_still_gives_the_clock() {
        // The Intel Xeon guest on a busy host: adds at 3567 MHz, the multiply 4.6 % over its
        // 3 cycles. The clock is the adds', as lmbench's mhz read (3563).
        let cycle = 1e3 / 3567.0;
        let p = judge(&timings(cycle, 2.0 * cycle, 3.0 * cycle * 1.046), None, 0);
        assert_eq!(p.unknown, None, "{p:?}");
        assert!((p.mhz.unwrap() - 3567.0).abs() < 0.01, "{p:?}");
        assert_eq!(p.chains[2].cycles, 3);
    }

    #[test]
    fn a_core_that_folds_adds_gives_no_clock() {
        // The Intel guest: adds retired 5.5 a cycle at 4.15 GHz would read 22.8 GHz.
        let cycle = 1e3 / 4152.0;
        let p = judge(&timings(cycle / 5.5, 2.0 * cycle, 3.0 * cycle), None, 0);
        assert_eq!(p.mhz, None);
        let why = p.unknown.unwrap();
        assert!(why.starts_with("the chains disagree"), "{why}");
        // Adds folded two a cycle (the add-xor chain then takes 1.5 cycles a link): the
        // multiply falls on a whole 5 cycles of the two, in range, yet the chains disagree.
        let p = judge(&timings(cycle / 2.0, cycle * 1.5, 3.0 * cycle), None, 0);
        assert_eq!(p.chains[2].cycles, 5, "{p:?}");
        assert!(p.unknown.unwrap().contains("disagree by"));
    }

    #[test]
    fn chains_apart_or_a_multiply_between_whole_cycles_give_no_clock() {
        let p = judge(&timings(0.25, 0.6, 0.75), None, 0);
        assert!(
            p.unknown.unwrap().contains("disagree by"),
            "add-xor 20 % slow"
        );
        let p = judge(&timings(0.25, 0.5, 0.25 * 3.5), None, 0);
        let why = p.unknown.unwrap();
        assert!(
            why.contains("a multiply took 3.50 add-chain cycles, not a whole number"),
            "{why}"
        );
        // 10 % over 3 cycles, and 5 % under: neither a shared multiplier nor a whole number.
        for mul in [0.75 * 1.10, 0.75 * 0.95] {
            let p = judge(&timings(0.25, 0.5, mul), None, 0);
            assert!(
                p.unknown.is_some_and(|u| u.contains("not a whole number")),
                "{mul}"
            );
        }
        let p = judge(&timings(0.25, 0.5, 0.25 * 9.0), None, 0);
        assert!(
            p.unknown
                .unwrap()
                .contains("a multiply took 9 add-chain cycles"),
            "9 cycles"
        );
    }

    #[test]
    fn an_impossible_or_implausible_clock_is_unknown() {
        // 20 GHz, every chain agreeing: no core runs there.
        let p = judge(&timings(0.05, 0.1, 0.15), None, 0);
        assert!(p.unknown.unwrap().contains("above any core's clock"));
        let r = Reference {
            mhz: 1000.0,
            what: "cpufreq cpuinfo_max_freq of CPU 0".into(),
        };
        // 4 GHz against a 1 GHz maximum: four times what the machine says.
        let p = judge(&timings(0.25, 0.5, 0.75), Some(&r), 0);
        let why = p.unknown.unwrap();
        assert!(
            why.contains("4.00 times cpufreq cpuinfo_max_freq of CPU 0 (1000 MHz)"),
            "{why}"
        );
        // 2.5 GHz against it: turbo above a reported base, believed.
        let p = judge(&timings(0.4, 0.8, 1.2), Some(&r), 0);
        assert_eq!(p.unknown, None);
    }

    #[test]
    fn a_probe_gives_a_positive_clock_and_its_cost() {
        let Some(p) = probe(None) else {
            assert!(!has_chains(), "chains, yet no probe");
            return;
        };
        assert_eq!(p.chains.len(), 3);
        for c in &p.chains {
            assert!(c.mhz.is_finite() && c.mhz > 0.0, "{p:?}");
        }
        // Known, or unknown with a reason (a busy machine can upset a chain's fastest run).
        assert_eq!(p.mhz.is_some(), p.unknown.is_none(), "{p:?}");
        // Its cost holds RUNS timed runs of the add chain, none faster than the fastest.
        let fastest_ns = p.chains[0].ns_per_link * CYCLES as f64;
        assert!(
            p.cost_ns as f64 >= fastest_ns * RUNS as f64 * 0.999,
            "{p:?}"
        );
    }

    #[test]
    fn json_of_an_older_probe_still_reads() {
        let p: Probe = serde_json::from_str(r#"{"mhz": 3561.7, "cost_ns": 900}"#).unwrap();
        assert_eq!(p.mhz, Some(3561.7));
        assert!(p.chains.is_empty() && p.unknown.is_none());
    }

    #[test]
    fn a_probed_clock_needs_both_probes() {
        let known = judge(&timings(0.25, 0.5, 0.75), None, 1);
        let unknown = judge(&timings(0.05, 0.5, 0.75), None, 1);
        let k = ProbedClock {
            before: known.clone(),
            after: known.clone(),
        };
        assert_eq!(k.mhz(), Some(4000.0));
        assert_eq!(k.change(), Some(0.0));
        assert_eq!(k.unknown(), None);
        let u = ProbedClock {
            before: known,
            after: unknown,
        };
        assert_eq!((u.mhz(), u.change()), (None, None));
        assert!(u.unknown().unwrap().contains("disagree"));
    }
}
