//! The headline rule: which figure stands for an entry (a latency sweep's DRAM plateau with
//! its caches beside it, else the one figure or the first few), and its energy.

use benchmp::schema::Figure;
use serde::Serialize;

/// A figure shown next to the headline (`L1 1.42 ns`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Also {
    /// Its name, as the report gives it (after the part all figures share).
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// The figure that stands for a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// Which figure (its name with its CPU or cluster); empty for a report's only figure.
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// Figures shown beside it.
    pub also: Vec<Also>,
    /// How many figures the report has.
    pub of: usize,
}

/// Reports with more figures than this are summed up by one of them, named, and their range.
const LISTED: usize = 6;

/// `(stride, level)` of a latency plateau figure, as its sizing declares them (lat_mem_rd's
/// `random stride 64 DRAM`: stride 64, level DRAM). A report made before figures carried
/// their sizing has none, and is headed by the rules for any figures.
pub(super) fn plateau(f: &Figure) -> Option<(u64, &str)> {
    Some((f.sizing.stride_bytes?, f.sizing.level.as_deref()?))
}

/// The headline of a report's figures:
/// - a latency sweep (lat_mem_rd's plateaus): the DRAM plateau at the largest stride (its
///   last plateau when none is DRAM), with that stride's L1 beside it;
/// - one figure: it;
/// - up to six: the last (a parallel run's system or largest one), the others beside it;
/// - more: the median one by value, named, with the smallest and largest beside it.
pub fn headline(figures: &[Figure]) -> Option<Headline> {
    let of = figures.len();
    let named = |f: &Figure, also: Vec<Also>| Headline {
        name: f.describe(),
        value: f.value,
        unit: f.unit.clone(),
        also,
        of,
    };
    if !figures.is_empty() && figures.iter().all(|f| plateau(f).is_some()) {
        let stride = figures.iter().filter_map(plateau).map(|(s, _)| s).max()?;
        let at: Vec<&Figure> = figures
            .iter()
            .filter(|f| plateau(f).is_some_and(|(s, _)| s == stride))
            .collect();
        // The first cluster's curve when there are several.
        let cluster = at.iter().map(|f| f.cluster).min().flatten();
        let at: Vec<&Figure> = at.into_iter().filter(|f| f.cluster == cluster).collect();
        let main = at
            .iter()
            .find(|f| plateau(f).is_some_and(|(_, l)| l == "DRAM"))
            .or(at.last())?;
        let also = at
            .iter()
            .find(|f| plateau(f).is_some_and(|(_, l)| l == "L1") && !std::ptr::eq(**f, *main))
            .map(|l1| Also {
                name: "L1".into(),
                value: l1.value,
            });
        return Some(named(main, also.into_iter().collect()));
    }
    match figures {
        [] => None,
        [one] => Some(Headline {
            name: String::new(),
            ..named(one, Vec::new())
        }),
        few if few.len() <= LISTED => {
            let names: Vec<String> = few.iter().map(Figure::describe).collect();
            let prefix = common_prefix(&names);
            let also = few[..few.len() - 1]
                .iter()
                .zip(&names)
                .map(|(f, n)| Also {
                    name: n[prefix.len()..].to_string(),
                    value: f.value,
                })
                .collect();
            Some(named(few.last()?, also))
        }
        many => {
            let mut by_value: Vec<&Figure> = many.iter().collect();
            by_value.sort_by(|a, b| a.value.total_cmp(&b.value));
            let (lo, hi) = (by_value[0], by_value[by_value.len() - 1]);
            let also = vec![
                Also {
                    name: format!("lowest {}", lo.describe()),
                    value: lo.value,
                },
                Also {
                    name: format!("highest {}", hi.describe()),
                    value: hi.value,
                },
            ];
            // The median of the CPUs is one of them, so that it can be named.
            let mid = benchmp::stats::middle(&by_value).copied()?;
            Some(named(mid, also))
        }
    }
}

/// The words every name starts with, with the space after them (none when it is a whole name).
pub(super) fn common_prefix(names: &[String]) -> String {
    let words: Vec<Vec<&str>> = names.iter().map(|n| n.split(' ').collect()).collect();
    let mut k = 0;
    while words.iter().all(|w| w.len() > k + 1 && w[k] == words[0][k]) {
        k += 1;
    }
    if k == 0 {
        String::new()
    } else {
        format!("{} ", words[0][..k].join(" "))
    }
}

/// A measurement's figure per energy (`power.per_energy` of its report): the system figure
/// per net watt of the first power source, or per joule (`DMIPS/W`, `iterations/J`, `nJ/load`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportedPerEnergy {
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// The first source's energy over the measurement above the idle baseline, J
    /// (`net_energy_j`, else `energy_j`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
}

impl ReportedPerEnergy {
    /// The `power.per_energy` of a report's measurement, if it has one with a finite value.
    pub fn of(measurement: &serde_json::Value) -> Option<ReportedPerEnergy> {
        let p = &measurement["power"]["per_energy"];
        let value = p["value"].as_f64().filter(|v| v.is_finite())?;
        let source = &measurement["power"]["sources"][0];
        let joules = |k: &str| source[k].as_f64().filter(|j| j.is_finite());
        Some(ReportedPerEnergy {
            value,
            unit: p["unit"].as_str().unwrap_or_default().to_string(),
            energy_j: joules("net_energy_j").or_else(|| joules("energy_j")),
        })
    }
}

/// Which of a report's measurements (by name, in order) its headline figure comes from: the
/// last one whose name begins the headline's name word by word (`dhrystone` for `dhrystone
/// strict cpu0`), else the last one (a report's only figure has no name; the few-figure rule
/// takes the last, a parallel run's system figure).
pub fn headline_measurement(names: &[&str], headline: &Headline) -> Option<usize> {
    let words: Vec<&str> = headline.name.split(' ').collect();
    names
        .iter()
        .rposition(|n| {
            let m: Vec<&str> = n.split(' ').collect();
            !n.is_empty() && words.len() >= m.len() && words[..m.len()] == m[..]
        })
        .or_else(|| names.len().checked_sub(1))
}

/// lmbench-like numbers for the table: thousands grouped above 100, 2 decimals above 1, 4
/// below.
pub fn number(x: Option<f64>) -> String {
    let Some(x) = x else { return "-".into() };
    if !x.is_finite() || x.abs() >= 1e12 || (x != 0.0 && x.abs() < 1e-4) {
        return benchmp::number::table_number(x, 2);
    }
    if x.abs() >= 100.0 {
        let whole = format!("{:.0}", x.abs());
        let mut grouped = String::new();
        for (i, c) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{}{grouped}", if x < 0.0 { "-" } else { "" })
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}
