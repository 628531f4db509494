//! `benchmp suite --ab`: each entry paired with the baseline build's binaries by `benchmp ab`
//! (OUT/ab/ENTRY.json and .txt), and the gathering of their comparisons into the folder's
//! own (compare.json, .csv, .txt), in `benchmp compare`'s schema, so the summary's verdict
//! column and the plots read them as they read a comparison with a `--baseline`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use benchmp::output::Export as _;
use benchmp_cli::compare::{Comparison, Counts};

use super::exec::{Ended, EntryFiles, Job};
use super::plan::{SuiteEntry, Word};
use super::{SuiteArgs, read_own, shown};
use crate::cmd::outdir::write_whole;

/// `x` with 6 significant digits and no trailing zeros (printf's `%.6g` for 1e-5 < x < 1).
pub(super) fn significant6(x: f64) -> String {
    if !(x.is_finite() && x > 0.0) {
        return "0".into();
    }
    let digits = (5 - x.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One side's command for benchmp ab, as words a shell would split: the entry's environment
/// and arguments with its result files dropped (the driver keeps the figures) and `{dir}` a
/// folder of the side's own.
pub(super) fn ab_words(bin: &Path, dest: &Path, e: &SuiteEntry, side: &str) -> Result<String> {
    let dir = dest.join("ab").join(format!("{}-{side}", e.label));
    if e.needs_dir() {
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", shown(&dir)))?;
    }
    let files = EntryFiles {
        json: PathBuf::new(),
        csv: PathBuf::new(),
        dir,
    };
    let mut words: Vec<String> = e
        .env
        .iter()
        .map(|(k, v)| format!("{k}={}", files.fill(v)))
        .collect();
    words.push(bin.join(e.tool).display().to_string());
    words.extend(
        e.args
            .iter()
            .filter(|w| !matches!(w, Word::Json(_) | Word::Csv(_)))
            .map(|w| files.fill(w)),
    );
    Ok(shlex::try_join(words.iter().map(String::as_str))?)
}

/// What pairs each entry with the baseline build through benchmp ab.
pub(super) struct AbRun<'a> {
    /// This benchmp.
    pub(super) me: &'a Path,
    /// The baseline build's tools (A).
    pub(super) base: &'a Path,
    /// This build's tools (B).
    pub(super) bin: &'a Path,
    /// The results folder.
    pub(super) dest: &'a Path,
    /// `--ab-time` and `--ab-processes`.
    pub(super) args: &'a SuiteArgs,
    /// The false-alarm rate per entry.
    pub(super) alpha: f64,
    /// The folder's lock, inherited.
    pub(super) hold: std::os::fd::RawFd,
}

impl AbRun<'_> {
    /// The entry paired by benchmp ab, the baseline build (A) against this one (B).
    pub(super) fn run(&self, e: &SuiteEntry) -> Result<Ended> {
        let dir = self.dest.join("ab");
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", shown(&dir)))?;
        let a = ab_words(self.base, self.dest, e, "base")?;
        let b = ab_words(self.bin, self.dest, e, "current")?;
        let alpha = significant6(self.alpha);
        outln!(
            "{:<22} benchmp ab --time {} --processes {} --alpha {alpha} (base against this build)",
            format!("{} (ab)", e.label),
            self.args.ab_time,
            self.args.ab_processes
        );
        let job = Job {
            program: self.me.to_path_buf(),
            args: vec![
                "ab".into(),
                "--time".into(),
                self.args.ab_time.to_string(),
                "--processes".into(),
                self.args.ab_processes.to_string(),
                "--alpha".into(),
                alpha,
                format!("--json={}", dir.join(format!("{}.json", e.label)).display()),
                a,
                b,
            ],
            env: Vec::new(),
            stdout: Some(dir.join(format!("{}.txt", e.label))),
            stderr: Some(dir.join(format!("{}.err", e.label))),
            timeout: None,
            hold: Some(self.hold),
        };
        Ok(job.run()?)
    }
}

/// Gathers the comparisons of the entries `labels` that `benchmp ab` paired (OUT/ab/LABEL.json;
/// an entry without one was not paired) into OUT/compare.json and .csv, each row's entry its
/// label, and OUT/compare.txt (every entry's table, then the counts). Each file is written
/// whole or not at all. Returns the counts' line.
pub(super) fn gather(dest: &Path, labels: &[String], alpha: f64) -> Result<String> {
    let mut whole = Comparison {
        base: String::new(),
        current: String::new(),
        base_runs: Vec::new(),
        current_runs: Vec::new(),
        rule: benchmp::stats::verdict::JudgeRule {
            min_effect_pct: 2.0,
            alpha,
        },
        run_spread_pct: None,
        rows: Vec::new(),
        counts: Counts::default(),
        paired: true,
        ab: None,
        incomplete: None,
    };
    let mut text = String::new();
    for label in labels {
        let path = dest.join("ab").join(format!("{label}.json"));
        let Some(json) =
            benchmp::input::read_text_if_there(&path, benchmp::input::MAX_INPUT_BYTES)?
        else {
            continue;
        };
        let c: Comparison = serde_json::from_str(&json)
            .with_context(|| format!("{} is not a comparison of benchmp ab", shown(&path)))?;
        if whole.base.is_empty() {
            (whole.base, whole.current, whole.rule) = (c.base, c.current, c.rule);
        }
        whole.rows.extend(c.rows.into_iter().map(|mut r| {
            r.entry = label.clone();
            r
        }));
        text += &format!("== {label}\n");
        text += &read_own(&dest.join("ab").join(format!("{label}.txt")));
    }
    whole.counts = Counts::of(&whole.rows);
    let k = &whole.counts;
    let last = format!(
        "{} figures: {} PASS, {} FAIL, {} IMPROVED, {} NOISY, {} MISSING (paired: benchmp ab)",
        whole.rows.len(),
        k.pass,
        k.fail,
        k.improved,
        k.noisy,
        k.missing
    );
    write_whole(&dest.join("compare.json"), whole.json()?.as_bytes())?;
    write_whole(&dest.join("compare.csv"), whole.csv()?.as_bytes())?;
    write_whole(
        &dest.join("compare.txt"),
        format!("{text}{last}\n").as_bytes(),
    )?;
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::super::plan::{self, Machine, Mode};
    use super::*;

    #[test]
    fn alpha_as_printf_g() {
        assert_eq!(significant6(0.05 / 14.0), "0.00357143");
        assert_eq!(significant6(0.05), "0.05");
        assert_eq!(significant6(0.025), "0.025");
    }

    #[test]
    fn each_ab_side_gets_a_folder_of_its_own_and_no_result_files() {
        let dest = std::env::temp_dir().join(format!("socbench ab-words {}", std::process::id()));
        let machine = Machine {
            cpus: 2,
            llc_bytes: 1 << 20,
        };
        let plan = plan::plan(Mode::Quick, machine);
        let dto = plan.iter().find(|e| e.label == "dto-speedup").unwrap();
        let bin = Path::new("/b i n");
        let mut dirs = Vec::new();
        for side in ["base", "current"] {
            let line = ab_words(bin, &dest, dto, side).unwrap();
            let words = shlex::split(&line).unwrap();
            let dir = dest.join("ab").join(format!("dto-speedup-{side}"));
            assert!(dir.is_dir(), "{line}");
            assert!(
                words.contains(&format!("RESULTS_DIR={}", dir.display())),
                "{line}"
            );
            assert!(words.contains(&"/b i n/dto".to_string()), "{line}");
            assert!(!words.iter().any(|w| w.contains("--json")), "{line}");
            dirs.push(dir);
        }
        assert_ne!(dirs[0], dirs[1]);
        let dhry = plan.iter().find(|e| e.label == "dhry-P1").unwrap();
        ab_words(bin, &dest, dhry, "base").unwrap();
        assert!(!dest.join("ab/dhry-P1-base").exists());
        std::fs::remove_dir_all(&dest).unwrap();
    }

    /// What `benchmp ab --json` writes for one figure of `tool`, with `verdict`.
    fn ab_json(tool: &str, verdict: &str) -> String {
        let side = serde_json::json!({"cpu": 0, "value": 10.0, "trimmed_mean": 10.0, "n": 2,
            "outliers": 0, "samples": [9.0, 11.0]});
        serde_json::json!({
            "base": "old/dhry", "current": "new/dhry",
            "rule": {"min_effect_pct": 2.0, "alpha": 0.01},
            "rows": [{"entry": tool, "tool": tool, "figure": "score", "unit": "DMIPS",
                "better": "higher", "base": side, "current": side, "change_pct": 0.5,
                "ks_d": null, "ks_p": null, "verdict": verdict}],
            "counts": {"pass": 0, "fail": 0, "improved": 0, "noisy": 0, "missing": 0},
            "paired": true
        })
        .to_string()
    }

    #[test]
    fn the_paired_comparisons_are_gathered_into_the_folders_own() {
        let dest = std::env::temp_dir().join(format!("socbench-gather {}", std::process::id()));
        std::fs::create_dir_all(dest.join("ab")).unwrap();
        std::fs::write(dest.join("ab/dhry-P1.json"), ab_json("dhry", "FAIL")).unwrap();
        std::fs::write(dest.join("ab/dhry-P1.txt"), "dhry's table\n").unwrap();
        std::fs::write(
            dest.join("ab/coremark-P1.json"),
            ab_json("coremark", "PASS"),
        )
        .unwrap();
        // bw_mem-rd-P1 was not paired (its ab failed): no row.
        let labels = ["bw_mem-rd-P1", "dhry-P1", "coremark-P1"].map(String::from);
        let last = gather(&dest, &labels, 0.05).unwrap();
        assert_eq!(
            last,
            "2 figures: 1 PASS, 1 FAIL, 0 IMPROVED, 0 NOISY, 0 MISSING (paired: benchmp ab)"
        );
        let c: Comparison =
            serde_json::from_slice(&std::fs::read(dest.join("compare.json")).unwrap()).unwrap();
        assert!(c.paired);
        let entries: Vec<&str> = c.rows.iter().map(|r| r.entry.as_str()).collect();
        assert_eq!(entries, ["dhry-P1", "coremark-P1"]);
        assert_eq!((c.counts.pass, c.counts.fail), (1, 1));
        assert_eq!((c.base.as_str(), c.rule.alpha), ("old/dhry", 0.01));
        // compare's own CSV layout.
        let csv = std::fs::read_to_string(dest.join("compare.csv")).unwrap();
        let mut lines = csv.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("entry,tool,figure,unit,better,base,")
        );
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("dhry-P1,dhry,score,DMIPS,higher,")
        );
        let txt = std::fs::read_to_string(dest.join("compare.txt")).unwrap();
        assert_eq!(
            txt,
            format!("== dhry-P1\ndhry's table\n== coremark-P1\n{last}\n")
        );
        // What is no comparison is an error naming it, and leaves the files as they were.
        std::fs::write(dest.join("ab/bw_mem-rd-P1.json"), "{}").unwrap();
        let e = gather(&dest, &labels, 0.05).unwrap_err();
        assert!(format!("{e:#}").contains("ab/bw_mem-rd-P1.json"), "{e:#}");
        assert_eq!(
            std::fs::read_to_string(dest.join("compare.txt")).unwrap(),
            txt
        );
        std::fs::remove_dir_all(&dest).unwrap();
    }
}
