//! Android atrace-format records written to tracefs `trace_marker`.
//!
//! Each event is one write(2) of one record, formatted in a fixed stack buffer (no heap
//! allocation), so a marker costs a syscall and nothing else:
//!
//! | event   | record              | viewer                                  |
//! |---------|---------------------|-----------------------------------------|
//! | begin   | `B|pid|name`        | opens a slice on the writing thread     |
//! | end     | `E|pid`             | closes that thread's innermost slice    |
//! | counter | `C|pid|name|value`  | a per-process counter track (`i64`)     |
//! | instant | `I|pid|name`        | a zero-length slice on the writing thread |
//!
//! `I|pid|name` is the instant form Perfetto's systrace importer reads as a thread-scoped
//! instant (the same letter as the Chrome JSON `"ph": "i"` it becomes); the older
//! `N|pid|track|name` needs a named async track, which benchmark phases do not have. The
//! catapult systrace viewer ignores records it does not know, so instants never break a trace.
//!
//! The pid is the process id (tgid) read at write time, so children forked after the marker
//! was opened write their own. Names have `|` replaced by `/` and control characters (newlines
//! included) by spaces, and are cut at a UTF-8 boundary so a record stays under 1 KiB.
//!
//! While `tracing_on` is 0 the kernel answers EBADF: that is the normal "nobody is tracing"
//! state and is ignored silently. Any other write error is reported once on stderr.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;

use crate::sys;

/// Longest record written, in bytes (the kernel accepts up to 1 KiB per marker write).
pub const MAX_RECORD: usize = 1023;

/// Replacement for `|`, which separates atrace fields.
pub const PIPE_REPLACEMENT: char = '/';

/// The kind of an atrace record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `B|pid|name`
    Begin,
    /// `E|pid`
    End,
    /// `C|pid|name|value`
    Counter(i64),
    /// `I|pid|name`
    Instant,
}

/// A fixed-capacity record under construction; bytes past the capacity are dropped.
#[derive(Debug)]
pub struct Record {
    bytes: [u8; MAX_RECORD],
    len: usize,
}

impl Default for Record {
    fn default() -> Self {
        Self::new()
    }
}

impl Record {
    /// An empty record.
    pub const fn new() -> Self {
        Record {
            bytes: [0; MAX_RECORD],
            len: 0,
        }
    }

    /// Formats `kind` for process `pid`; `name` is ignored for [`Kind::End`].
    pub fn format(kind: Kind, pid: i32, name: &str) -> Self {
        let mut rec = Record::new();
        let letter = match kind {
            Kind::Begin => b'B',
            Kind::End => b'E',
            Kind::Counter(_) => b'C',
            Kind::Instant => b'I',
        };
        rec.push(letter);
        rec.push(b'|');
        rec.push_int(i64::from(pid));
        match kind {
            Kind::End => {}
            Kind::Begin | Kind::Instant => {
                rec.push(b'|');
                rec.push_name(name, MAX_RECORD);
            }
            Kind::Counter(value) => {
                rec.push(b'|');
                let mut digits = Record::new();
                digits.push_int(value);
                // Keep room for "|value" so a long name never cuts the value.
                rec.push_name(name, MAX_RECORD - 1 - digits.len);
                rec.push(b'|');
                rec.extend(digits.as_bytes());
            }
        }
        rec
    }

    /// The formatted bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn push(&mut self, byte: u8) {
        if self.len < MAX_RECORD {
            self.bytes[self.len] = byte;
            self.len += 1;
        }
    }

    fn extend(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(MAX_RECORD - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    fn push_int(&mut self, value: i64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if value < 0 {
            self.push(b'-');
        }
        self.extend(&digits[at..]);
    }

    /// Appends the sanitised name, whole characters only, while the record stays within `limit`.
    fn push_name(&mut self, name: &str, limit: usize) {
        let mut utf8 = [0u8; 4];
        for ch in name.chars() {
            let ch = sanitise(ch);
            let encoded = ch.encode_utf8(&mut utf8);
            if self.len + encoded.len() > limit {
                break;
            }
            self.extend(encoded.as_bytes());
        }
    }
}

/// The character a name character is written as.
fn sanitise(ch: char) -> char {
    match ch {
        '|' => PIPE_REPLACEMENT,
        c if c.is_control() => ' ',
        c => c,
    }
}

/// A trace_marker writer: an open descriptor, or nothing (every call a no-op).
#[derive(Debug)]
pub struct Marker {
    fd: Option<OwnedFd>,
    warned: AtomicBool,
}

impl Marker {
    /// Opens `path` (normally tracefs `trace_marker`) for writing, close-on-exec.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Marker> {
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)?;
        Ok(Marker::from_fd(file.into()))
    }

    /// Opens this machine's tracefs `trace_marker`, returning it with its path, or says why
    /// it cannot: tracefs not mounted or not in this kernel, or no permission.
    pub fn open_tracefs() -> crate::Result<(Marker, PathBuf)> {
        let path = crate::tracefs::Tracefs::locate()?.path("trace_marker");
        match Marker::open(&path) {
            Ok(marker) => Ok((marker, path)),
            Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
                Err(crate::Error::NotRoot { path })
            }
            Err(source) => Err(crate::Error::Io {
                path,
                action: "open for writing".into(),
                source,
            }),
        }
    }

    /// Writes to an already open descriptor (a pipe or a file in tests).
    pub fn from_fd(fd: OwnedFd) -> Marker {
        Marker {
            fd: Some(fd),
            warned: AtomicBool::new(false),
        }
    }

    /// A writer that writes nothing.
    pub const fn disabled() -> Marker {
        Marker {
            fd: None,
            warned: AtomicBool::new(false),
        }
    }

    /// The process-wide writer on tracefs `trace_marker`, opened on first use.
    ///
    /// Call it (or [`crate::init`]) before forking so children share the descriptor. When no
    /// tracefs is found or `trace_marker` cannot be opened, one warning goes to stderr and the
    /// writer is [`Marker::disabled`].
    pub fn global() -> &'static Marker {
        static GLOBAL: OnceLock<Marker> = OnceLock::new();
        GLOBAL.get_or_init(|| match crate::tracefs::find() {
            None => {
                foundation::errln!(
                    "ftrace: no tracefs found (mount it with `mount -t tracefs nodev /sys/kernel/tracing`); trace markers are off"
                );
                Marker::disabled()
            }
            Some(root) => Marker::open_or_disabled(root.join("trace_marker")),
        })
    }

    /// Opens `path`, or prints one warning and returns [`Marker::disabled`] when it cannot.
    pub fn open_or_disabled(path: impl AsRef<Path>) -> Marker {
        let path = path.as_ref();
        Marker::open(path).unwrap_or_else(|err| {
            foundation::errln!(
                "ftrace: cannot open {} ({err}); trace markers are off",
                path.display()
            );
            Marker::disabled()
        })
    }

    /// Whether calls write anything.
    pub fn is_enabled(&self) -> bool {
        self.fd.is_some()
    }

    /// `B|pid|name`: opens a slice on the calling thread.
    #[inline]
    pub fn begin(&self, name: &str) {
        let _ = self.emit(Kind::Begin, name);
    }

    /// `E|pid`: closes the calling thread's innermost slice.
    #[inline]
    pub fn end(&self) {
        let _ = self.emit(Kind::End, "");
    }

    /// `C|pid|name|value`: sets counter `name` of this process.
    #[inline]
    pub fn counter(&self, name: &str, value: i64) {
        let _ = self.emit(Kind::Counter(value), name);
    }

    /// `I|pid|name`: a zero-length event on the calling thread.
    #[inline]
    pub fn instant(&self, name: &str) {
        let _ = self.emit(Kind::Instant, name);
    }

    /// Begins slice `name` and ends it when the returned guard drops.
    pub fn scope<'a>(&'a self, name: &str) -> Scope<'a> {
        self.begin(name);
        Scope { marker: self }
    }

    /// Formats and writes one record; returns what write(2) said (Ok(0) when disabled). A
    /// failure other than EBADF (tracing off) is reported once on stderr.
    pub fn emit(&self, kind: Kind, name: &str) -> Result<usize, Errno> {
        match self.try_emit(kind, name) {
            Ok(n) => Ok(n),
            // tracing_on is 0: nobody is recording.
            Err(Errno::EBADF) => Err(Errno::EBADF),
            Err(err) => {
                self.warn_once(err);
                Err(err)
            }
        }
    }

    /// [`Marker::emit`] without the warning: for callers that report a failed write
    /// themselves, such as `ftrace mark`.
    pub fn try_emit(&self, kind: Kind, name: &str) -> Result<usize, Errno> {
        let Some(fd) = &self.fd else {
            return Ok(0);
        };
        let record = Record::format(kind, sys::pid(), name);
        nix::unistd::write(fd, record.as_bytes())
    }

    #[cold]
    fn warn_once(&self, err: Errno) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            foundation::errln!(
                "ftrace: trace_marker write failed ({err}); later failures are not reported"
            );
        }
    }
}

/// Ends its slice when dropped; see [`Marker::scope`].
#[derive(Debug)]
#[must_use = "the slice ends when the guard drops"]
pub struct Scope<'a> {
    marker: &'a Marker,
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        self.marker.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn text(kind: Kind, pid: i32, name: &str) -> String {
        String::from_utf8(Record::format(kind, pid, name).as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn exact_bytes_of_each_kind() {
        assert_eq!(
            Record::format(Kind::Begin, 1234, "rep cpu=1").as_bytes(),
            b"B|1234|rep cpu=1"
        );
        assert_eq!(
            Record::format(Kind::End, 1234, "ignored").as_bytes(),
            b"E|1234"
        );
        assert_eq!(
            Record::format(Kind::Counter(-42), 7, "mb_per_s").as_bytes(),
            b"C|7|mb_per_s|-42"
        );
        assert_eq!(
            Record::format(Kind::Instant, 99, "go").as_bytes(),
            b"I|99|go"
        );
    }

    #[test]
    fn integer_extremes() {
        assert_eq!(
            text(Kind::Counter(i64::MIN), 1, "x"),
            "C|1|x|-9223372036854775808"
        );
        assert_eq!(
            text(Kind::Counter(i64::MAX), 0, "x"),
            "C|0|x|9223372036854775807"
        );
        assert_eq!(text(Kind::Counter(0), i32::MAX, "x"), "C|2147483647|x|0");
    }

    #[test]
    fn names_are_sanitised() {
        assert_eq!(text(Kind::Begin, 1, "a|b\nc\r\td\0e"), "B|1|a/b c  d e");
        assert_eq!(text(Kind::Counter(5), 1, "x|y"), "C|1|x/y|5");
        assert_eq!(text(Kind::Instant, 1, "héllo ✓"), "I|1|héllo ✓");
        assert_eq!(text(Kind::Begin, 1, ""), "B|1|");
    }

    #[test]
    fn long_names_are_cut_under_one_kib() {
        let long = "n".repeat(5000);
        let rec = text(Kind::Begin, 123, &long);
        assert_eq!(rec.len(), MAX_RECORD);
        assert!(rec.starts_with("B|123|nnn"));

        // A counter keeps its whole value however long the name.
        let rec = text(Kind::Counter(i64::MIN), 123, &long);
        assert_eq!(rec.len(), MAX_RECORD);
        assert!(rec.ends_with("n|-9223372036854775808"), "{rec}");

        // Multi-byte characters are never split.
        let wide = "é".repeat(1000);
        let rec = text(Kind::Begin, 12, &wide);
        assert!(rec.len() <= MAX_RECORD && rec.len() > MAX_RECORD - 2);
        assert!(rec.ends_with('é'));
    }

    #[test]
    fn disabled_marker_is_a_no_op() {
        let marker = Marker::disabled();
        assert!(!marker.is_enabled());
        assert_eq!(marker.emit(Kind::Begin, "x"), Ok(0));
        marker.begin("x");
        marker.end();
    }

    #[test]
    fn missing_tracefs_gives_a_no_op_writer() {
        assert!(Marker::open("/nonexistent/socbench/trace_marker").is_err());
        let marker = Marker::open_or_disabled("/nonexistent/socbench/trace_marker");
        assert!(!marker.is_enabled());
        let _slice = marker.scope("rep");
        marker.counter("n", 1);
        assert_eq!(marker.emit(Kind::Instant, "x"), Ok(0));
    }

    #[test]
    fn one_write_per_record_through_a_pipe() {
        let (read, write) = nix::unistd::pipe().unwrap();
        let marker = Marker::from_fd(write);
        let pid = std::process::id();
        marker.begin("outer");
        {
            let _inner = marker.scope("inner|x");
            marker.counter("n", 4);
            marker.instant("tick");
        }
        marker.end();
        drop(marker);
        let mut got = String::new();
        std::fs::File::from(read).read_to_string(&mut got).unwrap();
        assert_eq!(
            got,
            format!("B|{pid}|outerB|{pid}|inner/xC|{pid}|n|4I|{pid}|tickE|{pid}E|{pid}")
        );
    }

    #[test]
    fn explicit_path_receives_records() {
        let path = std::env::temp_dir().join(format!("ftrace-marker-{}.txt", std::process::id()));
        std::fs::write(&path, "").unwrap();
        let marker = Marker::open(&path).unwrap();
        let want = format!("B|{}|calibrate", std::process::id());
        assert_eq!(marker.emit(Kind::Begin, "calibrate"), Ok(want.len()));
        drop(marker);
        let got = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(got, want);
    }
}
