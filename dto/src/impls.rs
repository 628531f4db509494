//! Implementations selected by name: `cpu` (libc's functions found with dlopen/dlsym, the
//! guide's reference configuration), `lib:PATH` (the same four symbols from a shared library)
//! and the built-in kernels.
#![allow(unsafe_code)]

use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::kernels::{CmpFn, CopyFn, Kernel, MemFns, SetFn};

/// An implementation as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplSpec {
    /// libc's memcpy, memmove, memset and memcmp.
    Cpu,
    /// A shared library exporting the four symbols.
    Lib(PathBuf),
    /// A built-in kernel.
    Kernel(Kernel),
}

impl ImplSpec {
    /// Parses `cpu`, `lib:PATH` or a kernel name.
    pub fn parse(s: &str) -> Result<ImplSpec, String> {
        if s == "cpu" {
            return Ok(ImplSpec::Cpu);
        }
        if let Some(p) = s.strip_prefix("lib:") {
            if p.is_empty() {
                return Err("lib: needs a path, e.g. lib:/usr/lib/libdto.so".into());
            }
            return Ok(ImplSpec::Lib(PathBuf::from(p)));
        }
        Kernel::from_name(s).map(ImplSpec::Kernel).ok_or_else(|| {
            let names: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
            format!(
                "unknown implementation '{s}': use cpu, lib:PATH or one of {}",
                names.join(", ")
            )
        })
    }

    /// Short label for tables (`cpu`, the library file name, the kernel name).
    pub fn label(&self) -> String {
        match self {
            ImplSpec::Cpu => "cpu".into(),
            ImplSpec::Lib(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().trim_start_matches("lib").to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "lib".into()),
            ImplSpec::Kernel(k) => k.name().into(),
        }
    }

    /// Checks what can be checked without loading anything: kernel support on this CPU and
    /// that the library is a file (not missing, not a folder). `Err((exit_code, message))`.
    pub fn preflight(&self) -> Result<(), (i32, String)> {
        match self {
            ImplSpec::Cpu => Ok(()),
            ImplSpec::Lib(p) => {
                // dlopen searches the library path for a name without a slash.
                let why = if !p.as_os_str().as_bytes().contains(&b'/') || p.is_file() {
                    return Ok(());
                } else if p.is_dir() {
                    "is a folder, not a shared library"
                } else {
                    "does not exist"
                };
                Err((
                    benchmp::EXIT_USAGE,
                    format!("library {} {why}", p.display()),
                ))
            }
            ImplSpec::Kernel(k) => k.available().map_err(|why| {
                (
                    benchmp::EXIT_UNSUPPORTED,
                    format!("kernel {} is not available here: {why}", k.name()),
                )
            }),
        }
    }
}

impl ImplSpec {
    /// [`ImplSpec::preflight`] as an error of its class: a kernel this CPU lacks is
    /// unsupported here (exit 3), a library that is not a file a usage error (exit 2).
    pub fn require(&self) -> Result<(), benchmp::error::Refused> {
        match self.preflight() {
            Ok(()) => Ok(()),
            Err((code, msg)) if code == benchmp::EXIT_UNSUPPORTED => {
                Err(benchmp::Unsupported(msg).into())
            }
            Err((_, msg)) => Err(benchmp::Usage(msg).into()),
        }
    }
}

/// Written as on the command line (`cpu`, `lib:PATH`, a kernel name).
impl serde::Serialize for ImplSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ImplSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ImplSpec, D::Error> {
        let s = String::deserialize(d)?;
        ImplSpec::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for ImplSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImplSpec::Cpu => write!(f, "cpu"),
            ImplSpec::Lib(p) => write!(f, "lib:{}", p.display()),
            ImplSpec::Kernel(k) => write!(f, "{}", k.name()),
        }
    }
}

/// One implementation `dto list` shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Listed {
    /// Its name on the command line (`cpu`, `lib:PATH`, a kernel's).
    pub name: String,
    /// True when this CPU can run it.
    pub available: bool,
    /// Why not, when it cannot (null otherwise).
    pub reason: Option<String>,
    /// What it is, in words.
    pub description: String,
}

/// What `dto list` shows: every implementation, then how this machine times and flushes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Listing {
    /// `cpu`, `lib:PATH`, then every built-in kernel.
    pub implementations: Vec<Listed>,
    /// The timer of the A/B rounds.
    pub timer: String,
    /// The cache-flush instruction.
    pub flush: String,
    /// 2 MiB huge pages free now.
    pub huge_pages_free: u64,
}

impl Listing {
    /// The implementations and the machine as this process finds them.
    pub fn here() -> Listing {
        let listed = |name: &str, available: Result<(), String>, description: &str| Listed {
            name: name.into(),
            available: available.is_ok(),
            reason: available.err(),
            description: description.into(),
        };
        let mut implementations = vec![
            listed(
                "cpu",
                Ok(()),
                "libc memcpy/memmove/memset/memcmp via dlopen + dlsym (reference)",
            ),
            listed(
                "lib:PATH",
                Ok(()),
                "the same four symbols from a shared library (dlopen)",
            ),
        ];
        for k in Kernel::ALL {
            implementations.push(listed(k.name(), k.available(), k.describe()));
        }
        Listing {
            implementations,
            timer: crate::sys::TIMER.into(),
            flush: crate::sys::flush_method().into(),
            huge_pages_free: benchmp::sys::mem::huge_pages_free(),
        }
    }
}

/// Why an implementation could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A kernel this CPU cannot run (exit 3).
    #[error("kernel {name} is not available here: {why}")]
    Unsupported {
        /// Kernel name.
        name: &'static str,
        /// Reason.
        why: String,
    },
    /// dlopen failed (exit 2).
    #[error("cannot load {path}: {why}")]
    Open {
        /// Library path.
        path: String,
        /// dlerror text.
        why: String,
    },
    /// A symbol is missing (exit 2).
    #[error("{path} does not export {symbol}")]
    Symbol {
        /// Library path.
        path: String,
        /// Missing symbol.
        symbol: &'static str,
    },
}

impl LoadError {
    /// Exit status for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            LoadError::Unsupported { .. } => benchmp::EXIT_UNSUPPORTED,
            _ => benchmp::EXIT_USAGE,
        }
    }
}

/// A loaded implementation; keeps the library mapped while its functions are in use.
#[derive(Debug)]
pub struct Loaded {
    /// The four functions.
    pub fns: MemFns,
    /// Where they came from (for reports).
    pub source: String,
    _lib: Option<libloading::Library>,
}

/// Loads an implementation (in the process that will call it: for lib:PATH this runs the
/// library's initialisers, which read DTO_* variables from the environment).
pub fn load(spec: &ImplSpec) -> Result<Loaded, LoadError> {
    match spec {
        ImplSpec::Kernel(k) => {
            let fns = k.fns().map_err(|why| LoadError::Unsupported {
                name: k.name(),
                why,
            })?;
            Ok(Loaded {
                fns,
                source: format!("built-in {} kernel", k.name()),
                _lib: None,
            })
        }
        ImplSpec::Cpu => {
            for name in ["libc.so.6", "libc.so"] {
                if let Ok(lib) = open(name)
                    && let Ok(fns) = symbols(&lib, name)
                {
                    return Ok(Loaded {
                        fns,
                        source: format!("{name} via dlopen/dlsym"),
                        _lib: Some(lib),
                    });
                }
            }
            // Static builds cannot dlopen: use the libc linked into this binary.
            Ok(Loaded {
                fns: MemFns {
                    memcpy: libc::memcpy,
                    memmove: libc::memmove,
                    memset: libc::memset,
                    memcmp: libc::memcmp,
                },
                source: "linked libc (dlopen unavailable)".into(),
                _lib: None,
            })
        }
        ImplSpec::Lib(path) => {
            let shown = path.display().to_string();
            let lib = open(path.as_os_str()).map_err(|why| LoadError::Open {
                path: shown.clone(),
                why,
            })?;
            let fns = symbols(&lib, &shown)?;
            Ok(Loaded {
                fns,
                source: format!("{shown} via dlopen/dlsym"),
                _lib: Some(lib),
            })
        }
    }
}

fn open(name: impl AsRef<std::ffi::OsStr>) -> Result<libloading::Library, String> {
    // SAFETY: loading a shared library runs its initialisers; the user named this library
    // (or it is the C library already loaded) to be measured in this process.
    unsafe { libloading::Library::new(name.as_ref()) }.map_err(|e| e.to_string())
}

fn symbols(lib: &libloading::Library, path: &str) -> Result<MemFns, LoadError> {
    let missing = |symbol| LoadError::Symbol {
        path: path.to_string(),
        symbol,
    };
    // SAFETY: the four symbols are the C standard functions with exactly these signatures;
    // the pointers are used only while `lib` stays loaded (it is kept in `Loaded`).
    unsafe {
        let memcpy = *lib
            .get::<CopyFn>(b"memcpy\0")
            .map_err(|_| missing("memcpy"))?;
        let memmove = *lib
            .get::<CopyFn>(b"memmove\0")
            .map_err(|_| missing("memmove"))?;
        let memset = *lib
            .get::<SetFn>(b"memset\0")
            .map_err(|_| missing("memset"))?;
        let memcmp = *lib
            .get::<CmpFn>(b"memcmp\0")
            .map_err(|_| missing("memcmp"))?;
        Ok(MemFns {
            memcpy,
            memmove,
            memset,
            memcmp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_every_implementation_and_why_one_is_missing() {
        let l = Listing::here();
        assert_eq!(l.implementations.len(), 2 + Kernel::ALL.len());
        assert_eq!(l.implementations[0].name, "cpu");
        for i in &l.implementations {
            assert_eq!(i.available, i.reason.is_none(), "{i:?}");
        }
        let j: serde_json::Value = serde_json::to_value(&l).unwrap();
        let row = &j["implementations"][1];
        assert_eq!(
            (&row["name"], &row["available"]),
            (&"lib:PATH".into(), &true.into())
        );
        assert!(
            row["reason"].is_null(),
            "a missing reason is null, not absent"
        );
        assert!(j["huge_pages_free"].is_u64());
    }

    #[test]
    fn parse_names() {
        assert_eq!(ImplSpec::parse("cpu").unwrap(), ImplSpec::Cpu);
        assert_eq!(
            ImplSpec::parse("lib:/tmp/libx.so").unwrap(),
            ImplSpec::Lib("/tmp/libx.so".into())
        );
        assert_eq!(
            ImplSpec::parse("avx2").unwrap(),
            ImplSpec::Kernel(Kernel::Avx2)
        );
        assert!(ImplSpec::parse("lib:").is_err());
        assert!(ImplSpec::parse("fast").unwrap_err().contains("unknown"));
        assert_eq!(ImplSpec::parse("lib:/x/libdto.so").unwrap().label(), "dto");
        let j = serde_json::to_string(&ImplSpec::Lib("/x/libdto.so".into())).unwrap();
        assert_eq!(j, "\"lib:/x/libdto.so\"");
        assert_eq!(
            serde_json::from_str::<ImplSpec>(&j).unwrap(),
            ImplSpec::Lib("/x/libdto.so".into())
        );
    }

    #[test]
    fn cpu_loads_libc() {
        let l = load(&ImplSpec::Cpu).unwrap();
        let src = [1u8, 2, 3, 4];
        let mut dst = [0u8; 4];
        // SAFETY: both arrays hold 4 bytes and do not overlap.
        unsafe { (l.fns.memcpy)(dst.as_mut_ptr().cast(), src.as_ptr().cast(), 4) };
        assert_eq!(dst, src);
    }

    #[test]
    fn preflight_names_a_folder_and_a_missing_file() {
        let dir = std::env::temp_dir();
        let (code, msg) = ImplSpec::Lib(dir.clone()).preflight().unwrap_err();
        assert_eq!(code, benchmp::EXIT_USAGE);
        assert!(msg.ends_with("is a folder, not a shared library"), "{msg}");
        let (_, msg) = ImplSpec::Lib(dir.join("no-such-libx.so"))
            .preflight()
            .unwrap_err();
        assert!(msg.ends_with("does not exist"), "{msg}");
        // A bare name is for dlopen to search, whatever the current folder holds.
        assert!(ImplSpec::Lib("libc.so.6".into()).preflight().is_ok());
    }

    #[test]
    fn missing_library_is_an_open_error() {
        let e = load(&ImplSpec::Lib("/nonexistent/libnothing.so".into())).unwrap_err();
        assert!(matches!(e, LoadError::Open { .. }));
        assert_eq!(e.exit_code(), 2);
    }
}
