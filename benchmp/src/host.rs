//! Facts about the host every report carries: name, kernel, CPU model, build of this binary.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Host identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// Node name.
    pub hostname: String,
    /// `uname -s -r -v`.
    pub kernel: String,
    /// `uname -m`.
    pub arch: String,
    /// CPU model from /proc/cpuinfo (or the device-tree model on boards and phones).
    pub cpu_model: String,
    /// Device-tree or DMI product name, when available.
    pub machine_model: Option<String>,
}

/// How this binary was built (recorded by benchmp's build script, built with the same
/// profile as the tool).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// `rustc -V` of the compiler.
    pub rustc: String,
    /// Target triple.
    pub target: String,
    /// Cargo's PROFILE: "release" or "debug".
    pub profile: String,
    /// Optimisation level.
    pub opt_level: String,
    /// LTO setting of the profile built with ("false", "thin", "fat", ...).
    pub lto: String,
    /// codegen-units of the profile built with.
    pub codegen_units: String,
    /// RUSTFLAGS used (e.g. -C target-cpu=native).
    pub rustflags: String,
    /// Target features enabled at compile time.
    pub target_features: String,
    /// The cargo profile by name: dev, release, bench or a custom one (empty in reports
    /// written before it was recorded).
    #[serde(default)]
    pub cargo_profile: String,
    /// Whether debug assertions were compiled in.
    #[serde(default)]
    pub debug_assertions: bool,
}

impl Build {
    /// The build of the running binary.
    pub fn current() -> Build {
        Build {
            rustc: env!("BENCHMP_RUSTC").to_string(),
            target: env!("BENCHMP_TARGET").to_string(),
            profile: env!("BENCHMP_PROFILE").to_string(),
            opt_level: env!("BENCHMP_OPT_LEVEL").to_string(),
            lto: env!("BENCHMP_LTO").to_string(),
            codegen_units: env!("BENCHMP_CODEGEN_UNITS").to_string(),
            rustflags: env!("BENCHMP_RUSTFLAGS").to_string(),
            target_features: env!("BENCHMP_TARGET_FEATURES").to_string(),
            cargo_profile: env!("BENCHMP_CARGO_PROFILE").to_string(),
            debug_assertions: env!("BENCHMP_DEBUG_ASSERTIONS") == "true",
        }
    }

    /// The `-C target-cpu` of the RUSTFLAGS (the last one given), else "default".
    pub fn target_cpu(&self) -> String {
        let mut flags = self.rustflags.split_whitespace();
        let mut cpu = None;
        while let Some(f) = flags.next() {
            let codegen = match f {
                "-C" | "--codegen" => flags.next().unwrap_or(""),
                _ => f.strip_prefix("-C").unwrap_or(f),
            };
            if let Some(c) = codegen.strip_prefix("target-cpu=") {
                cpu = Some(c);
            }
        }
        cpu.unwrap_or("default").to_string()
    }

    /// Profile and code-generation settings in one line, as CoreMark-style reports print
    /// their compiler flags: `profile=release opt-level=3 lto=fat codegen-units=1
    /// target-cpu=default`, then `debug-assertions=on` and the RUSTFLAGS when there are any.
    pub fn flags_line(&self) -> String {
        let mut s = format!(
            "profile={} opt-level={} lto={} codegen-units={} target-cpu={}",
            self.cargo_profile,
            self.opt_level,
            self.lto,
            self.codegen_units,
            self.target_cpu()
        );
        if self.debug_assertions {
            s.push_str(" debug-assertions=on");
        }
        if !self.rustflags.is_empty() {
            s.push_str(&format!(" RUSTFLAGS=\"{}\"", self.rustflags));
        }
        s
    }
}

/// The CPU model name: x86 `model name`, else ARM `Hardware`/`Processor`/`CPU part`.
pub fn cpu_model() -> String {
    let text = crate::sysfs::read_proc(Path::new("/proc/cpuinfo")).unwrap_or_default();
    cpu_model_from(&text)
}

/// Extracts the CPU model from /proc/cpuinfo text.
pub fn cpu_model_from(cpuinfo: &str) -> String {
    let field = |name: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    };
    field("model name")
        .or_else(|| field("Hardware"))
        .or_else(|| field("Processor"))
        .or_else(|| {
            let imp = field("CPU implementer")?;
            let part = field("CPU part")?;
            Some(format!("ARM implementer {imp} part {part}"))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

impl Host {
    /// Reads the running host.
    pub fn current() -> Host {
        let uts = nix::sys::utsname::uname().ok();
        let s = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uts.as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let machine_model = [
            "/sys/firmware/devicetree/base/model",
            "/sys/class/dmi/id/product_name",
        ]
        .iter()
        .find_map(|p| {
            let t = crate::sysfs::read_attr(Path::new(p)).ok()?;
            let t = t.trim_matches(char::from(0)).trim().to_string();
            (!t.is_empty()).then_some(t)
        });
        Host {
            hostname: s(|u| u.nodename()),
            kernel: format!(
                "{} {} {}",
                s(|u| u.sysname()),
                s(|u| u.release()),
                s(|u| u.version())
            ),
            arch: s(|u| u.machine()),
            cpu_model: cpu_model(),
            machine_model,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_x86_and_arm() {
        assert_eq!(
            cpu_model_from("processor\t: 0\nmodel name\t: AMD EPYC 9B14\n"),
            "AMD EPYC 9B14"
        );
        assert_eq!(
            cpu_model_from("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd82\n"),
            "ARM implementer 0x41 part 0xd82"
        );
        assert_eq!(
            cpu_model_from("Hardware : Qualcomm SM8650\n"),
            "Qualcomm SM8650"
        );
        assert_eq!(cpu_model_from(""), "unknown");
    }

    fn build(profile: &str, rustflags: &str, debug_assertions: bool) -> Build {
        Build {
            rustc: "rustc 1.0.0 (abc 2026-01-01)".into(),
            target: "aarch64-linux-android".into(),
            profile: "release".into(),
            opt_level: "3".into(),
            lto: "fat".into(),
            codegen_units: "1".into(),
            rustflags: rustflags.into(),
            target_features: String::new(),
            cargo_profile: profile.into(),
            debug_assertions,
        }
    }

    #[test]
    fn flags_line_names_every_setting() {
        assert_eq!(
            build("release", "", false).flags_line(),
            "profile=release opt-level=3 lto=fat codegen-units=1 target-cpu=default"
        );
        assert_eq!(
            build(
                "profiling",
                "-C target-cpu=cortex-a76 -Ctarget-cpu=native",
                true
            )
            .flags_line(),
            "profile=profiling opt-level=3 lto=fat codegen-units=1 target-cpu=native \
             debug-assertions=on RUSTFLAGS=\"-C target-cpu=cortex-a76 -Ctarget-cpu=native\""
        );
        assert_eq!(
            build("release", "--codegen target-cpu=x86-64-v3", false).target_cpu(),
            "x86-64-v3"
        );
        assert_eq!(
            build("release", "-C opt-level=2", false).target_cpu(),
            "default"
        );
    }

    #[test]
    fn older_reports_still_read() {
        let mut j = serde_json::to_value(build("release", "", false)).unwrap();
        let o = j.as_object_mut().unwrap();
        o.remove("cargo_profile");
        o.remove("debug_assertions");
        let b: Build = serde_json::from_value(j).unwrap();
        assert_eq!(b.cargo_profile, "");
        assert!(!b.debug_assertions);
    }

    #[test]
    fn build_info_is_recorded() {
        let b = Build::current();
        assert!(b.rustc.starts_with("rustc "), "{}", b.rustc);
        assert!(!b.target.is_empty());
        assert_eq!(b.debug_assertions, cfg!(debug_assertions));
        // Tests build with the dev profile, which the workspace leaves at Cargo's defaults
        // (change these with the workspace's [profile.dev]).
        if b.cargo_profile == "dev" {
            assert_eq!(b.profile, "debug");
            assert_eq!(b.opt_level, "0");
            assert_eq!((b.lto.as_str(), b.codegen_units.as_str()), ("false", "256"));
        } else if b.cargo_profile == "release" {
            // The workspace's [profile.release].
            assert_eq!((b.lto.as_str(), b.codegen_units.as_str()), ("fat", "1"));
        } else {
            assert!(!b.cargo_profile.is_empty());
        }
    }
}
