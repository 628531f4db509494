//! The power options a command that runs tools passes to each of them as given (`benchmp
//! suite`, `benchmp efficiency`): which sources, an external meter, the sampling rate and the
//! idle baseline. Each value is checked here against the range every tool takes, so a typo
//! is one refusal before anything runs rather than a failure of every tool.

/// `--power`, `--power-cmd`, `--power-hz` and `--power-baseline`, as given.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args, serde::Serialize)]
pub struct PowerArgs {
    /// Passed to every tool: the power sources to use, SRC[,SRC...] (powercap:ZONE,
    /// hwmon:NAME:LABEL, battery:NAME, odpm:RAIL, cmd), or none. Default: the tools' own (every
    /// source they find).
    #[arg(long, value_name = "SRC[,SRC...]", value_parser = sources)]
    pub power: Option<String>,
    /// Passed to every tool: an external meter, a command whose output lines are
    /// `<unix seconds> <watts>`.
    #[arg(long, value_name = "CMD", value_parser = meter)]
    pub power_cmd: Option<String>,
    /// Passed to every tool: how often power, temperatures and clocks are sampled, per second
    /// (0.1 to 1000; the tools' default is 10).
    #[arg(long, value_name = "HZ", value_parser = hz)]
    pub power_hz: Option<String>,
    /// Passed to every tool: seconds of idle measured before each run, whose power is
    /// subtracted (0 to 86400; the tools' default is 0, none).
    #[arg(long, value_name = "S", value_parser = baseline)]
    pub power_baseline: Option<String>,
}

impl PowerArgs {
    /// Checks the options together as every tool will: `--power none` with a `--power-cmd`
    /// contradicts itself.
    pub fn check(&self) -> Result<(), String> {
        let choice = self
            .power
            .as_deref()
            .map(benchmp::power::parse_choice)
            .transpose()?;
        benchmp::power::check_meter(choice.as_ref(), self.power_cmd.as_deref())
    }

    /// The options as each tool gets them (`--power=SRC`), in a fixed order.
    pub fn words(&self) -> Vec<String> {
        [
            ("--power", &self.power),
            ("--power-cmd", &self.power_cmd),
            ("--power-hz", &self.power_hz),
            ("--power-baseline", &self.power_baseline),
        ]
        .into_iter()
        .filter_map(|(o, v)| v.as_ref().map(|v| format!("{o}={v}")))
        .collect()
    }
}

/// A value of one line of printable text, at most 4 KiB.
fn printable_line(s: &str, what: &str) -> Result<String, String> {
    if s.trim().is_empty() || s.len() > 4096 || s.chars().any(char::is_control) {
        return Err(format!(
            "'{}' is not {what}",
            foundation::error::printable(&s.chars().take(200).collect::<String>())
        ));
    }
    Ok(s.to_string())
}

// Each value is checked by the parser the tools use themselves, and passed on as given.

fn sources(s: &str) -> Result<String, String> {
    benchmp::power::parse_choice(s)?;
    printable_line(s, "a list of power sources (SRC[,SRC...], or none)")
}

fn meter(s: &str) -> Result<String, String> {
    printable_line(s, "a meter command (one line)")
}

fn hz(s: &str) -> Result<String, String> {
    benchmp::power::parse_hz(s).map(|_| s.trim().to_string())
}

fn baseline(s: &str) -> Result<String, String> {
    benchmp::power::parse_baseline(s).map(|_| s.trim().to_string())
}

/// Checks a `--cool-down` temperature with the tools' own parser, kept as given.
pub fn celsius(s: &str) -> Result<String, String> {
    benchmp::cli::celsius(s).map(|_| s.trim().to_string())
}

/// Checks a `--cool-down-timeout` as the tools do (whole seconds, 1 to 86400).
pub fn timeout(s: &str) -> Result<String, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=86_400).contains(&n) => Ok(n.to_string()),
        _ => Err(format!(
            "'{}' is not a whole number of seconds from 1 to 86400",
            foundation::error::printable(s)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_and_passed_as_given() {
        let p = PowerArgs {
            power: Some(sources("battery:battery,odpm:S4M_VDD_CPUCL0").unwrap()),
            power_cmd: Some(meter("meter --port /dev/ttyUSB0").unwrap()),
            power_hz: Some(hz("50").unwrap()),
            power_baseline: Some(baseline("5").unwrap()),
        };
        assert_eq!(
            p.words(),
            [
                "--power=battery:battery,odpm:S4M_VDD_CPUCL0",
                "--power-cmd=meter --port /dev/ttyUSB0",
                "--power-hz=50",
                "--power-baseline=5"
            ]
        );
        assert!(PowerArgs::default().words().is_empty());
        assert!(p.check().is_ok());
        let both = PowerArgs {
            power: Some("none".into()),
            power_cmd: Some("meter".into()),
            ..PowerArgs::default()
        };
        assert!(both.check().unwrap_err().contains("--power none"));
        for bad in ["", "a,,b", "x\n\u{1b}[31m"] {
            assert!(sources(bad).is_err(), "{bad:?}");
        }
        assert!(meter("a\nb").is_err());
        for bad in ["0", "1001", "x", "nan"] {
            assert!(hz(bad).is_err(), "{bad}");
        }
        assert!(baseline("-1").is_err());
        assert_eq!(baseline("0").unwrap(), "0");
        assert_eq!(celsius("-5").unwrap(), "-5");
        assert!(celsius("200").is_err());
        assert!(timeout("0").is_err() && timeout("1.5").is_err());
    }
}
