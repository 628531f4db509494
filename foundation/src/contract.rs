//! What every socbench binary tells the contract test about itself: its commands and options
//! as clap defines them, and for each command how to run it quickly and how to run it long
//! enough to be interrupted. With [`SPEC_ENV`] set, a binary prints this as JSON and exits 0
//! before it parses anything, so the test (benchmp-cli/tests/contract.rs) reaches every command and
//! option, present and future, without a list of its own; a command without an [`Example`]
//! fails that test.

use serde::Serialize;

/// Set (to anything) to make a binary print its [`spec`] and exit 0.
pub const SPEC_ENV: &str = "SOCBENCH_CLI_SPEC";

/// How the contract test runs one command. The words are split as a shell would, leading
/// `NAME=VALUE` words setting the environment; `{bin}` is
/// the folder of the binaries under test, `{tmp}` a fresh scratch folder, and the test's own
/// inputs are `{report_a}` and `{report_b}` (two reports of one tool), `{suite}` (a results
/// folder), `{stubs}` (stand-in tools that exit 0, or sleep for `$SOCBENCH_STUB_SLEEP`
/// seconds) and `{repo}` (the workspace).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Example {
    /// The subcommand's path (`"ab"`, `"dto speedup"` is `"speedup"` for dto); `""` for a
    /// binary without subcommands.
    pub command: &'static str,
    /// Arguments of a short run (well under a second on a busy machine, debug build).
    pub quick: &'static str,
    /// Arguments of a run that lasts for many seconds, writing `--json={tmp}/…` where the
    /// command can, so an interrupt can be checked for what it leaves.
    pub long: &'static str,
}

/// One option or positional argument.
#[derive(Debug, Serialize)]
struct Arg {
    id: String,
    long: Option<String>,
    short: Option<char>,
    positional: bool,
    takes_value: bool,
    /// `--opt=VALUE` only (clap's require_equals).
    require_equals: bool,
    possible_values: Vec<String>,
}

/// One command: its path of subcommand names and its arguments.
#[derive(Debug, Serialize)]
struct Command {
    path: Vec<String>,
    args: Vec<Arg>,
    /// True when it has subcommands of its own (only those are run).
    has_subcommands: bool,
}

/// The binary's spec.
#[derive(Debug, Serialize)]
struct Spec<'a> {
    name: String,
    commands: Vec<Command>,
    examples: &'a [Example],
}

fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Command>) {
    let args = cmd
        .get_arguments()
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(|a| Arg {
            id: a.get_id().to_string(),
            long: a.get_long().map(str::to_string),
            short: a.get_short(),
            positional: a.is_positional(),
            takes_value: a.get_action().takes_values(),
            require_equals: a.is_require_equals_set(),
            possible_values: a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect(),
        })
        .collect();
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .collect();
    out.push(Command {
        path: path.clone(),
        args,
        has_subcommands: !subs.is_empty(),
    });
    for s in subs {
        path.push(s.get_name().to_string());
        walk(s, path, out);
        path.pop();
    }
}

/// The spec of `cmd` with its examples, as JSON.
pub fn spec(cmd: &clap::Command, examples: &[Example]) -> String {
    let mut commands = Vec::new();
    walk(cmd, &mut Vec::new(), &mut commands);
    serde_json::to_string(&Spec {
        name: cmd.get_name().to_string(),
        commands,
        examples,
    })
    .unwrap_or_default()
}

/// With [`SPEC_ENV`] set: prints the spec of `cmd` and exits 0; otherwise does nothing.
pub fn print_spec_if_asked(cmd: &clap::Command, examples: &[Example]) {
    if std::env::var_os(SPEC_ENV).is_some() {
        let status = crate::console::out(&(spec(cmd, examples) + "\n")).map_or(1, |()| 0);
        std::process::exit(status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_and_option_is_listed() {
        let cmd = clap::Command::new("t")
            .arg(clap::Arg::new("json").long("json").require_equals(true))
            .subcommand(
                clap::Command::new("run").arg(clap::Arg::new("size")).arg(
                    clap::Arg::new("x")
                        .short('x')
                        .action(clap::ArgAction::SetTrue),
                ),
            );
        let ex = [Example {
            command: "run",
            quick: "8k",
            long: "8g",
        }];
        let v: serde_json::Value = serde_json::from_str(&spec(&cmd, &ex)).unwrap();
        assert_eq!(v["name"], "t");
        let cmds = v["commands"].as_array().unwrap();
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[0]["args"][0]["require_equals"], true);
        assert_eq!(cmds[1]["path"][0], "run");
        assert_eq!(cmds[1]["args"][0]["positional"], true);
        assert_eq!(cmds[1]["args"][1]["takes_value"], false);
        assert_eq!(v["examples"][0]["quick"], "8k");
    }
}
