//! Where both sides' processes put their stacks: alike within a process pair, different from
//! one process pair to the next, so that a layout effect becomes variance between process
//! pairs (which ab measures and plans for) and never a bias between the builds. The size of
//! the environment alone moves figures by several per cent (Mytkowicz et al., "Producing wrong
//! data without doing anything obviously wrong!", ASPLOS 2009); randomising layout turns that
//! into noise a test can see (Curtsinger and Berger, "Stabilizer", ASPLOS 2013).
//!
//! - **One exec path**: each side's program is opened here and run as `/proc/self/fd/5`
//!   with the same `argv[0]` (A's program's name), so the exec path and `argv[0]` the kernel
//!   copies onto the new stack are the same wherever the two programs sit (an A/A of one
//!   binary at two paths once read as a 1.5 % regression). Nothing is written anywhere.
//! - **Arguments and environment of equal size**: both sides start from the same
//!   environment, and a pad variable ([`PAD_ENV`]) makes up the difference in their
//!   arguments' and environments' room.
//! - **A random offset per process pair**: the pad grows by the same random 0 to
//!   [`MAX_OFFSET`] − 1 bytes on both sides of a process pair, and by another amount in the
//!   next, which moves every stack address by it.
//! - Address-space randomisation off (unless `--aslr`): within a pair, code, heap and buffers
//!   sit at the same addresses on both sides.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Context, Result};

/// The variable that evens the two sides' stacks and moves them by the process pair's offset.
pub(super) const PAD_ENV: &str = "BENCHMP_AB_PAD";
/// The random offset of a process pair is below this many bytes (a page: every alignment of
/// the stack against the code and data that 4 KiB aliasing can see).
pub(super) const MAX_OFFSET: usize = 4096;

/// Where the worker's program runs from when `/proc/self/fd` is there.
pub(super) const EXEC_PATH: &str = "/proc/self/fd/5";

/// A side's program opened for its workers to run through [`EXEC_PATH`].
#[derive(Debug)]
pub(super) struct Program {
    file: File,
    /// Whether the worker may close it at exec: an ELF program yes, a script no (its
    /// interpreter opens it again by that path).
    close_at_exec: bool,
}

impl Program {
    /// Opens `path`; `None` where `/proc/self/fd` is not there (the path is then run as it
    /// is, and the report says the paths were not evened).
    pub(super) fn open(path: &Path) -> Result<Option<Program>> {
        if !Path::new("/proc/self/fd").is_dir() {
            return Ok(None);
        }
        let mut file =
            File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut magic = [0u8; 2];
        let script = file.read_exact(&mut magic).is_ok() && &magic == b"#!";
        Ok(Some(Program {
            file,
            close_at_exec: !script,
        }))
    }

    /// The descriptor and whether the worker may close it at exec
    /// ([`benchmp::sys::process::pass_fds_and_program`]).
    pub(super) fn fd(&self) -> (std::os::fd::RawFd, bool) {
        use std::os::fd::AsRawFd;
        (self.file.as_raw_fd(), self.close_at_exec)
    }
}

/// The environment a worker starts with: this process's own, then the command's leading
/// `VAR=VALUE` words, then `extra` (the worker protocol's variables), each later one
/// replacing an earlier one of its name; in the order of the names.
pub(super) fn environment(
    command: &[(String, String)],
    extra: &[(&str, Option<String>)],
) -> BTreeMap<OsString, OsString> {
    // An outer ab's pads are not this one's.
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(k, _)| !k.as_bytes().starts_with(PAD_ENV.as_bytes()))
        .collect();
    for (k, v) in command {
        env.insert(k.into(), v.into());
    }
    for (k, v) in extra {
        match v {
            Some(v) => env.insert(k.into(), v.into()),
            None => env.remove(OsString::from(k).as_os_str()),
        };
    }
    env
}

/// What a new process's exec path, `argv[0]`, arguments and environment take at the top of
/// its stack: their strings (each with its terminating NUL) and their pointers. The kernel
/// aligns the strings and the pointer block each on its own, so two stacks start alike only
/// when both are alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Room {
    /// Bytes of the strings.
    pub(super) strings: usize,
    /// Pointers to them (one per argument and variable).
    pub(super) pointers: usize,
}

impl Room {
    /// The room of `exec` (the kernel's own copy, AT_EXECFN), `arg0`, `args` and `env`.
    pub(super) fn of(
        exec: &Path,
        arg0: &OsStr,
        args: &[String],
        env: &BTreeMap<OsString, OsString>,
    ) -> Room {
        let exec_bytes = exec.as_os_str().as_bytes().len() + 1 + arg0.as_bytes().len() + 1;
        let arg_bytes: usize = args.iter().map(|a| a.len() + 1).sum();
        let env_bytes: usize = env
            .iter()
            .map(|(k, v)| k.as_bytes().len() + 1 + v.as_bytes().len() + 1)
            .sum();
        Room {
            strings: exec_bytes + arg_bytes + env_bytes,
            pointers: 1 + args.len() + env.len(),
        }
    }

    /// Bytes in all, pointers of 8 bytes.
    pub(super) fn bytes(&self) -> usize {
        self.strings + 8 * self.pointers
    }
}

/// The variables that make stacks of rooms `a` and `b` start alike, moved by `offset` bytes:
/// empty fill variables (`BENCHMP_AB_PAD_0`, …) to even the pointers, then [`PAD_ENV`] to
/// even the strings and add the offset. Each side's list, A's first.
pub(super) fn evening(a: Room, b: Room, offset: usize) -> [Vec<(OsString, OsString)>; 2] {
    let pointers = a.pointers.max(b.pointers);
    let fill = |r: Room| -> Vec<(OsString, OsString)> {
        (0..pointers - r.pointers)
            .map(|i| (OsString::from(format!("{PAD_ENV}_{i}")), OsString::new()))
            .collect()
    };
    let (fa, fb) = (fill(a), fill(b));
    let strings = |r: Room, f: &[(OsString, OsString)]| {
        r.strings + f.iter().map(|(k, v)| k.len() + v.len() + 2).sum::<usize>()
    };
    let (sa, sb) = (strings(a, &fa), strings(b, &fb));
    let most = sa.max(sb);
    let with_pad = |mut f: Vec<(OsString, OsString)>, s: usize| {
        f.push((
            PAD_ENV.into(),
            OsString::from("x".repeat(most - s + offset)),
        ));
        f
    };
    [with_pad(fa, sa), with_pad(fb, sb)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_opened_and_a_script_kept_open_at_exec() {
        let dir = std::env::temp_dir().join(format!("benchmp-ab-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("s");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        let me = std::env::current_exe().unwrap();
        let Some(elf) = Program::open(&me).unwrap() else {
            assert!(!Path::new("/proc/self/fd").is_dir());
            return;
        };
        assert!(elf.fd().1, "an ELF program closes it at exec");
        assert!(
            !Program::open(&script).unwrap().unwrap().fd().1,
            "a script keeps it"
        );
        assert!(Program::open(&dir.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_evening_gives_both_sides_one_room_moved_by_the_offset() {
        let exec = Path::new(EXEC_PATH);
        let arg0 = OsStr::new("dhry");
        let base = environment(&[], &[("BENCHMP_AB_REP_US", Some("20000".into()))]);
        let mut env_b = base.clone();
        env_b.insert("EXTRA".into(), "1".into());
        let a_args = vec!["-P".to_string(), "1".into()];
        let b_args = vec!["-P".to_string(), "1".into(), "--variant".into(), "x".into()];
        let (a, b) = (
            Room::of(exec, arg0, &a_args, &base),
            Room::of(exec, arg0, &b_args, &env_b),
        );
        assert_eq!(b.pointers, a.pointers + 3);
        for offset in [0, 1, 4095] {
            let [ea, eb] = evening(a, b, offset);
            let with = |mut env: BTreeMap<OsString, OsString>, extra: Vec<(OsString, OsString)>| {
                env.extend(extra);
                env
            };
            let (ra, rb) = (
                Room::of(exec, arg0, &a_args, &with(base.clone(), ea.clone())),
                Room::of(exec, arg0, &b_args, &with(env_b.clone(), eb.clone())),
            );
            assert_eq!(ra, rb, "one room for both at offset {offset}");
            let pad = |e: &[(OsString, OsString)]| e.last().unwrap().1.len();
            assert_eq!(pad(&ea).min(pad(&eb)), offset, "moved by the offset");
            assert_eq!(
                ea.len(),
                4,
                "three fill variables and the pad for A: {ea:?}"
            );
            assert_eq!(eb.len(), 1, "the pad alone for B");
        }
    }

    #[test]
    fn the_environment_is_the_drivers_with_the_commands_words_and_no_old_pad() {
        let env = environment(
            &[("SOCBENCH_AB_TEST".into(), "1".into())],
            &[("PATH", None), ("BENCHMP_AB_REP_US", Some("5".into()))],
        );
        assert_eq!(
            env.get(OsString::from("SOCBENCH_AB_TEST").as_os_str())
                .unwrap(),
            "1"
        );
        assert_eq!(
            env.get(OsString::from("BENCHMP_AB_REP_US").as_os_str())
                .unwrap(),
            "5"
        );
        assert!(!env.contains_key(OsString::from("PATH").as_os_str()));
        assert!(!env.contains_key(OsString::from(PAD_ENV).as_os_str()));
    }
}
