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
    /// What says the CPU is emulated or virtual, when anything does: its figures are then
    /// not the hardware's (absent on bare metal, and in reports from before it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_cpu: Option<VirtualCpu>,
}

/// An emulated or virtual CPU, and the evidence that says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtualCpu {
    /// `emulated` (an instruction-set emulator such as QEMU's TCG: no figure is the
    /// hardware's) or `virtual` (a virtual machine on a hypervisor: the host's CPU runs the
    /// code, but other guests and the hypervisor share it).
    pub kind: String,
    /// What told it, one phrase per source (`device tree compatible "linux,dummy-virt"`).
    pub evidence: Vec<String>,
}

impl VirtualCpu {
    /// The note every report's text carries: what the CPU is, why that is known, and that the
    /// figures are not the hardware's. Not a noise reason: the run itself may be clean.
    pub fn note(&self) -> String {
        let what = if self.kind == "emulated" {
            "an emulated CPU"
        } else {
            "a virtual CPU"
        };
        format!(
            "{what} ({}): the figures are this {} CPU's, not the hardware's",
            self.evidence.join("; "),
            self.kind
        )
    }
}

/// What the system files say about the CPU being emulated or virtual, read by
/// [`virtual_cpu`] from the running machine (each `None` when the file is not there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VirtualEvidence {
    /// /proc/cpuinfo.
    pub cpuinfo: Option<String>,
    /// /sys/firmware/devicetree/base/compatible (NUL-separated strings).
    pub dt_compatible: Option<String>,
    /// True when /sys/firmware/devicetree/base/hypervisor exists (KVM or Xen guests on Arm).
    pub dt_hypervisor: bool,
    /// /sys/hypervisor/type (Xen).
    pub hypervisor_type: Option<String>,
    /// /sys/class/dmi/id/sys_vendor and product_name, joined by a space.
    pub dmi: Option<String>,
}

/// Boards and vendors of emulators and virtual machines, as the device tree or DMI name
/// them: (substring, kind, what it is).
const KNOWN_VIRTUAL: &[(&str, &str, &str)] = &[
    ("linux,dummy-virt", "emulated", "QEMU's virt board"),
    ("QEMU", "emulated", "QEMU"),
    ("KVM", "virtual", "KVM"),
    ("VMware", "virtual", "VMware"),
    ("VirtualBox", "virtual", "VirtualBox"),
    ("Xen", "virtual", "Xen"),
    ("Virtual Machine", "virtual", "Hyper-V"),
    ("Google Compute Engine", "virtual", "a cloud VM"),
    ("Amazon EC2", "virtual", "a cloud VM"),
    ("Firecracker", "virtual", "Firecracker"),
];

/// Whether the CPU is emulated or virtual, from what the system files say: Arm's device
/// tree (QEMU's `linux,dummy-virt` board, a `hypervisor` node), x86's cpuid hypervisor bit
/// (`hypervisor` among /proc/cpuinfo's flags), an Arm MIDR implementer of 0 (reserved for
/// software: QEMU's `max` CPU), /sys/hypervisor and DMI's vendor and product. `None` when
/// nothing says so (bare metal, or a virtual machine that hides itself). Either kind means
/// the figures are not the hardware's; the kind is `emulated` for a CPU only software
/// implements, or an emulator's board without a hypervisor's mark (QEMU's TCG), else
/// `virtual`. (KVM on Arm with QEMU's board and a real core's MIDR shows no hypervisor mark
/// in the guest, and is called emulated.)
pub fn virtual_cpu_from(e: &VirtualEvidence) -> Option<VirtualCpu> {
    let mut evidence = Vec::new();
    // An emulator's board or CPU (QEMU), and a hypervisor's mark (KVM, Xen, ...).
    let (mut emulator, mut hypervisor) = (false, e.dt_hypervisor);
    let mut known = |text: &str, source: &str, evidence: &mut Vec<String>| {
        if let Some((_, kind, what)) = KNOWN_VIRTUAL.iter().find(|(k, _, _)| text.contains(k)) {
            evidence.push(format!("{source} \"{text}\": {what}"));
            emulator |= *kind == "emulated";
        }
    };
    if let Some(compat) = &e.dt_compatible {
        for name in compat.split('\0').map(str::trim).filter(|n| !n.is_empty()) {
            known(name, "device tree compatible", &mut evidence);
        }
    }
    if let Some(dmi) = e.dmi.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        known(dmi, "DMI", &mut evidence);
    }
    if e.dt_hypervisor {
        evidence.push("device tree hypervisor node".to_string());
    }
    let mut software_cpu = false;
    if let Some(cpuinfo) = &e.cpuinfo {
        let field = |name: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        if field("flags").is_some_and(|f| f.split_whitespace().any(|w| w == "hypervisor")) {
            evidence.push("cpuid hypervisor bit".to_string());
            hypervisor = true;
        }
        let implementer = field("CPU implementer")
            .and_then(|i| u32::from_str_radix(i.trim_start_matches("0x"), 16).ok());
        if implementer == Some(0) {
            evidence.push("CPU implementer 0x00, reserved for software".to_string());
            software_cpu = true;
        }
    }
    if let Some(t) = e
        .hypervisor_type
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        evidence.push(format!("/sys/hypervisor/type {t}"));
        hypervisor = true;
    }
    if evidence.is_empty() {
        return None;
    }
    // QEMU's board on a hypervisor (KVM) runs the code on real cores: virtual. Its board
    // without one, or a CPU only software implements, is emulated.
    let emulated = software_cpu || (emulator && !hypervisor);
    Some(VirtualCpu {
        kind: if emulated { "emulated" } else { "virtual" }.to_string(),
        evidence,
    })
}

/// [`virtual_cpu_from`] for the running machine.
pub fn virtual_cpu() -> Option<VirtualCpu> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let dmi: Vec<String> = [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
    ]
    .iter()
    .filter_map(|p| read(p).map(|t| t.trim().to_string()))
    .filter(|t| !t.is_empty())
    .collect();
    virtual_cpu_from(&VirtualEvidence {
        cpuinfo: read("/proc/cpuinfo"),
        dt_compatible: read("/sys/firmware/devicetree/base/compatible"),
        dt_hypervisor: std::path::Path::new("/sys/firmware/devicetree/base/hypervisor").exists(),
        hypervisor_type: read("/sys/hypervisor/type"),
        dmi: (!dmi.is_empty()).then(|| dmi.join(" ")),
    })
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
            virtual_cpu: virtual_cpu(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emulated_or_virtual_cpu_is_told_by_its_evidence() {
        // Bare metal: nothing says so.
        let metal = VirtualEvidence {
            cpuinfo: Some("processor : 0\nflags : fpu sse2 avx2\n".into()),
            dmi: Some("Dell Inc. PowerEdge R750".into()),
            ..Default::default()
        };
        assert_eq!(virtual_cpu_from(&metal), None);
        let phone = VirtualEvidence {
            cpuinfo: Some("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd44\n".into()),
            dt_compatible: Some("qcom,sm8650-mtp\0qcom,sm8650\0".into()),
            ..Default::default()
        };
        assert_eq!(virtual_cpu_from(&phone), None);
        // QEMU's virt board under TCG with its `max` CPU (the emulated SoC of scripts/device.sh).
        let tcg = virtual_cpu_from(&VirtualEvidence {
            cpuinfo: Some("processor : 0\nCPU implementer : 0x00\nCPU part : 0x051\n".into()),
            dt_compatible: Some("linux,dummy-virt\0".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(tcg.kind, "emulated");
        assert_eq!(tcg.evidence.len(), 2, "{tcg:?}");
        assert!(tcg.evidence[0].contains("linux,dummy-virt"), "{tcg:?}");
        assert!(tcg.note().contains("not the hardware's"), "{}", tcg.note());
        // An x86 virtual machine: the cpuid hypervisor bit, with or without DMI's name.
        let kvm = virtual_cpu_from(&VirtualEvidence {
            cpuinfo: Some("flags : fpu hypervisor avx2\n".into()),
            dmi: Some("QEMU Standard PC (Q35 + ICH9, 2009)".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(kvm.kind, "virtual");
        assert_eq!(kvm.evidence.len(), 2, "{kvm:?}");
        // Xen on Arm: the device tree's hypervisor node and /sys/hypervisor.
        let xen = virtual_cpu_from(&VirtualEvidence {
            dt_hypervisor: true,
            hypervisor_type: Some("xen\n".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(xen.kind, "virtual");
        // An older report without the field still reads.
        let mut j = serde_json::to_value(Host::current()).unwrap();
        j.as_object_mut().unwrap().remove("virtual_cpu");
        let h: Host = serde_json::from_value(j).unwrap();
        assert_eq!(h.virtual_cpu, None);
    }

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
