//! A tool's entries in `benchmp suite`'s plan: the words of its runs in each mode, sized from
//! the machine the suite runs on. Each suite tool declares its own in its `src/suite.rs`, a
//! file that uses only this module and `std`: the tool's crate tests it, and `benchmp suite`
//! (benchmp-cli's build script, for every name in `SUITE_TOOLS` of `scripts/lib/tools.sh`)
//! compiles the same file into its plan, so a tool joins the suite with that one name and no
//! binary has to exist to list the plan.

use std::fmt;

/// How much the suite measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fewer operations and repetitions (about a minute here).
    Quick,
    /// The default set (a few minutes here).
    Default,
    /// Every operation, lmbench's 11 repetitions, more strides (tens of minutes).
    Full,
}

/// What the plan is sized by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// CPUs the all-CPU entries run one child on each of (at least 1).
    pub cpus: usize,
    /// Largest cache of the first CPU, bytes (0 when unknown).
    pub llc_bytes: u64,
}

impl Machine {
    /// `-P` of an entry's runs: 1, and every CPU when there is more than one.
    pub fn parallel(&self) -> Vec<usize> {
        if self.cpus > 1 {
            vec![1, self.cpus]
        } else {
            vec![1]
        }
    }
}

/// One word of an entry's arguments or environment: text, or a path the executor fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// The word as it is.
    Text(String),
    /// `PREFIX` followed by the entry's JSON report path (`--json=` + path).
    Json(&'static str),
    /// `PREFIX` followed by the entry's CSV path.
    Csv(&'static str),
    /// `PREFIX` followed by a folder of the entry's own (made before it runs).
    Dir(&'static str),
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Word::Text(t) => f.write_str(t),
            Word::Json(p) => write!(f, "{p}{{json}}"),
            Word::Csv(p) => write!(f, "{p}{{csv}}"),
            Word::Dir(p) => write!(f, "{p}{{dir}}"),
        }
    }
}

/// A plan word: `--json={json}`, `--csv={csv}` and `{dir}` become placeholders.
fn word(w: &str) -> Word {
    match w {
        "--json={json}" => Word::Json("--json="),
        "--csv={csv}" => Word::Csv("--csv="),
        "{dir}" => Word::Dir(""),
        _ => Word::Text(w.to_string()),
    }
}

/// One run of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteEntry {
    /// Names the entry's files (`LABEL.json`, `.csv`, `.txt`, `.err`, `LABEL/`).
    pub label: String,
    /// The tool's binary name.
    pub tool: &'static str,
    /// Environment set for the run (`NAME`, value).
    pub env: Vec<(String, Word)>,
    /// The tool's arguments.
    pub args: Vec<Word>,
}

impl fmt::Display for SuiteEntry {
    /// `LABEL|ENV|TOOL|ARGS`: the environment and arguments space-separated, `{json}`,
    /// `{csv}` and `{dir}` for the entry's files (the form `benchmp suite --list` prints).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let args: Vec<String> = self.args.iter().map(Word::to_string).collect();
        write!(
            f,
            "{}|{}|{}|{}",
            self.label,
            env.join(" "),
            self.tool,
            args.join(" ")
        )
    }
}

impl SuiteEntry {
    /// An entry of `tool` labelled `label`, its arguments `args` split at white space, where
    /// `--json={json}`, `--csv={csv}` and `{dir}` are the entry's files.
    pub fn new(label: impl Into<String>, tool: &'static str, args: &str) -> SuiteEntry {
        SuiteEntry {
            label: label.into(),
            tool,
            env: Vec::new(),
            args: args.split_whitespace().map(word).collect(),
        }
    }

    /// The entry with `name` set to `value` in its environment (`{dir}`: the entry's folder).
    pub fn with_env(mut self, name: &str, value: &str) -> SuiteEntry {
        self.env.push((name.to_string(), word(value)));
        self
    }

    /// True when the entry needs a folder of its own.
    pub fn needs_dir(&self) -> bool {
        self.args
            .iter()
            .chain(self.env.iter().map(|(_, w)| w))
            .any(|w| matches!(w, Word::Dir(_)))
    }
}

/// A tool's plan: its entries in `mode` on `machine`, in the order they run.
pub type Plan = fn(Mode, Machine) -> Vec<SuiteEntry>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_shows_its_placeholders_as_the_list_prints_them() {
        let e = SuiteEntry::new("t-1", "t", "-N 3 --json={json} --csv={csv}")
            .with_env("A", "1")
            .with_env("D", "{dir}");
        assert_eq!(
            e.to_string(),
            "t-1|A=1 D={dir}|t|-N 3 --json={json} --csv={csv}"
        );
        assert!(e.needs_dir());
        assert_eq!(e.args[2], Word::Json("--json="));
        assert!(!SuiteEntry::new("t-2", "t", "x {json}").needs_dir());
    }

    #[test]
    fn every_cpu_is_a_second_run_only_with_more_than_one() {
        let one = Machine {
            cpus: 1,
            llc_bytes: 0,
        };
        let eight = Machine {
            cpus: 8,
            llc_bytes: 0,
        };
        assert_eq!(one.parallel(), [1]);
        assert_eq!(eight.parallel(), [1, 8]);
    }
}
