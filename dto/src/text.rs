//! dto's own text besides the guide's tables ([`crate::report::render_text`]): the `dto list`
//! table, the `dto check` summary, and the notes an A/B run writes on the stream its results
//! do not use. Pure functions of what they describe.

use std::fmt::Write as _;

use crate::check;
use crate::impls::Listing;
use crate::report::{CheckSummary, Extra};

/// The `dto list` table: name, available (with why not), description; then the timer, the
/// flush instruction and the huge pages free.
pub fn listing(l: &Listing) -> String {
    let mut o = format!("{:<10} {:<10} {}\n", "impl", "available", "description");
    for i in &l.implementations {
        let (n, d) = (&i.name, &i.description);
        let _ = match &i.reason {
            None => writeln!(o, "{n:<10} {:<10} {d}", "yes"),
            Some(why) => writeln!(o, "{n:<10} {:<10} {d} ({why})", "no"),
        };
    }
    let _ = writeln!(
        o,
        "\ntimer: {}; cache flush: {}; 2 MiB huge pages free: {}",
        l.timer, l.flush, l.huge_pages_free
    );
    o
}

/// The `dto check` text: what was checked, each mismatch kept, and the verdict.
pub fn check(s: &CheckSummary) -> String {
    let mut o = format!(
        "dto check: {} ({}), {} threads\n\
         memcpy, memset: sizes 0-{} with every source/destination offset 0-63, {} larger sizes up to {} bytes\n\
         memmove: overlapping both ways; memcmp: equal, and differing at the first, middle and last byte\n",
        s.implementation,
        s.source,
        s.threads,
        check::SMALL_MAX,
        check::LARGE_SIZES.len(),
        check::LARGE_SIZES.iter().max().unwrap_or(&0)
    );
    for m in &s.mismatches {
        let _ = writeln!(o, "MISMATCH {m}");
    }
    let _ = writeln!(o, "{} cases, {} wrong: {}", s.cases, s.failures, s.result);
    o
}

/// The error line of a check that found wrong results, naming the first.
pub fn check_failed(s: &CheckSummary) -> String {
    let first = s
        .mismatches
        .first()
        .map(|m| m.to_string())
        .unwrap_or_default();
    format!(
        "dto: check failed: {} wrong result(s); first: {first}\n",
        s.failures
    )
}

/// The note that PERF_ITERS was lowered to `max`.
pub fn iters_capped(max: u32) -> String {
    format!("dto: PERF_ITERS capped at {max}\n")
}

/// The notes on the cells that moved: A/A cells are this run's noise, A/B cells regressions.
pub fn verdict_notes(e: &Extra) -> String {
    let mut o = String::new();
    let effect = e.setup.min_effect_pct;
    if e.noisy > 0 {
        let _ = writeln!(
            o,
            "dto: {} A/A cell(s) moved by more than {effect:.1}%: this run's noise (not a regression)",
            e.noisy
        );
    }
    if e.regressions > 0 {
        let _ = writeln!(
            o,
            "dto: {} A/B cell(s) regressed by more than {effect:.1}%",
            e.regressions
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Mismatch;
    use crate::impls::{ImplSpec, Listed};
    use crate::report::{Mode, PassFail};

    fn summary(mismatches: Vec<Mismatch>) -> CheckSummary {
        CheckSummary {
            tool: "dto".into(),
            mode: Mode::Check,
            implementation: ImplSpec::Lib("/x/libdto.so".into()),
            source: "/x/libdto.so".into(),
            threads: 4,
            cases: 100,
            failures: mismatches.len() as u64,
            result: PassFail::of(mismatches.len() as u64),
            mismatches,
        }
    }

    #[test]
    fn the_listing_says_why_an_implementation_is_missing() {
        let row = |name: &str, reason: Option<&str>| Listed {
            name: name.into(),
            available: reason.is_none(),
            reason: reason.map(Into::into),
            description: "d".into(),
        };
        let l = Listing {
            implementations: vec![row("cpu", None), row("avx512", Some("no AVX-512F"))],
            timer: "rdtsc/rdtscp".into(),
            flush: "clflushopt".into(),
            huge_pages_free: 0,
        };
        assert_eq!(
            listing(&l),
            "impl       available  description\n\
             cpu        yes        d\n\
             avx512     no         d (no AVX-512F)\n\
             \n\
             timer: rdtsc/rdtscp; cache flush: clflushopt; 2 MiB huge pages free: 0\n"
        );
    }

    #[test]
    fn a_check_lists_its_mismatches_and_its_verdict() {
        let t = check(&summary(Vec::new()));
        assert!(t.starts_with("dto check: lib:/x/libdto.so (/x/libdto.so), 4 threads\n"));
        assert!(t.ends_with("\n100 cases, 0 wrong: PASS\n"), "{t}");
        let m = Mismatch {
            op: "memcpy".into(),
            size: 1000,
            src_offset: 1,
            dst_offset: 0,
            thread: 2,
            detail: "byte 500 is 0x45, expected 0x44".into(),
        };
        let s = summary(vec![m]);
        let t = check(&s);
        assert!(t.contains(
            "\nMISMATCH memcpy: size 1000, src offset 1, dst offset 0 (thread 2): byte 500 is 0x45, expected 0x44\n100 cases, 1 wrong: FAIL\n"
        ), "{t}");
        assert_eq!(
            check_failed(&s),
            "dto: check failed: 1 wrong result(s); first: memcpy: size 1000, src offset 1, dst offset 0 (thread 2): byte 500 is 0x45, expected 0x44\n"
        );
    }
}
