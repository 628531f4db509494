//! Facts about the host every report carries: name, kernel, CPU model, build of this binary.

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

/// How this binary was built (recorded by benchmp's build script).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// `rustc -V` of the compiler.
    pub rustc: String,
    /// Target triple.
    pub target: String,
    /// Cargo profile (release, debug).
    pub profile: String,
    /// Optimisation level.
    pub opt_level: String,
    /// LTO setting of the workspace release profile.
    pub lto: String,
    /// codegen-units of the workspace release profile.
    pub codegen_units: String,
    /// RUSTFLAGS used (e.g. -C target-cpu=native).
    pub rustflags: String,
    /// Target features enabled at compile time.
    pub target_features: String,
}

impl Build {
    /// The build of the running binary.
    pub fn current() -> Build {
        Build {
            rustc: env!("BENCHMP_RUSTC").to_string(),
            target: env!("BENCHMP_TARGET").to_string(),
            profile: env!("BENCHMP_PROFILE").to_string(),
            opt_level: env!("BENCHMP_OPT_LEVEL").to_string(),
            lto: LTO.to_string(),
            codegen_units: CODEGEN_UNITS.to_string(),
            rustflags: env!("BENCHMP_RUSTFLAGS").to_string(),
            target_features: env!("BENCHMP_TARGET_FEATURES").to_string(),
        }
    }

    /// Compiler and flags in one line, as CoreMark-style reports print them.
    pub fn flags_line(&self) -> String {
        let mut s = format!(
            "opt-level={} lto={} codegen-units={}",
            self.opt_level, self.lto, self.codegen_units
        );
        if self.profile != "release" {
            s.push_str(&format!(" profile={}", self.profile));
        }
        if !self.rustflags.is_empty() {
            s.push(' ');
            s.push_str(&self.rustflags);
        }
        s
    }
}

/// LTO of `[profile.release]` in the workspace manifest (checked by a test).
pub const LTO: &str = "fat";
/// codegen-units of `[profile.release]` in the workspace manifest (checked by a test).
pub const CODEGEN_UNITS: &str = "1";

/// The CPU model name: x86 `model name`, else ARM `Hardware`/`Processor`/`CPU part`.
pub fn cpu_model() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
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
            let t = std::fs::read_to_string(p).ok()?;
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

    #[test]
    fn build_constants_match_the_workspace_manifest() {
        let manifest = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"),
        )
        .unwrap();
        let release = manifest.split("[profile.release]").nth(1).unwrap();
        assert!(release.contains(&format!("lto = \"{LTO}\"")));
        assert!(release.contains(&format!("codegen-units = {CODEGEN_UNITS}")));
        assert!(release.contains("opt-level = 3"));
    }

    #[test]
    fn build_info_is_recorded() {
        let b = Build::current();
        assert!(b.rustc.starts_with("rustc "), "{}", b.rustc);
        assert!(!b.target.is_empty());
        assert!(b.flags_line().contains("opt-level="));
    }
}
