//! The exit codes every socbench tool uses, the two markers any error chain can carry (bad
//! input, not supported here), and the rule that finds a chain's code: each error type knows
//! its own ([`ExitStatus`]) and whoever ends the process names the types it may meet
//! ([`exit_code_by`]), so this module depends on nothing above it.

/// Exit status: success.
pub const EXIT_OK: i32 = 0;
/// Exit status: the measurement failed, a check failed, or a regression was found.
pub const EXIT_FAILED: i32 = 1;
/// Exit status: usage error or bad input (sizes, CPU lists, environment variables).
pub const EXIT_USAGE: i32 = 2;
/// Exit status: not supported on this machine (CPU feature, huge pages, tracefs): skip, not fail.
pub const EXIT_UNSUPPORTED: i32 = 3;

/// A request this machine cannot satisfy (exit status 3). Tools wrap such failures in it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

/// A bad argument or environment value (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// A request refused before anything ran: bad input or not supported here.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Bad input (exit status 2).
    #[error(transparent)]
    Usage(#[from] Usage),
    /// Not supported here (exit status 3).
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
}

impl ExitStatus for Refused {
    fn exit_status(&self) -> i32 {
        match self {
            Refused::Usage(_) => EXIT_USAGE,
            Refused::Unsupported(_) => EXIT_UNSUPPORTED,
        }
    }
}

/// An error type that decides the exit status of a chain it is part of.
pub trait ExitStatus: std::error::Error + 'static {
    /// The exit status this error ends a tool with.
    fn exit_status(&self) -> i32;
}

impl ExitStatus for Usage {
    fn exit_status(&self) -> i32 {
        EXIT_USAGE
    }
}

impl ExitStatus for Unsupported {
    fn exit_status(&self) -> i32 {
        EXIT_UNSUPPORTED
    }
}

/// An error chain as one line (`{:#}`: each cause after a colon), with the resource limit it
/// ran into named with its value, so it can be raised.
pub fn chain_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = chain_of(e).replace('\n', " ");
    if let Some(limit) = foundation::error::Limit::in_chain(e) {
        msg += &format!(" ({limit})");
    }
    msg
}

/// Any error with its causes, each after a colon (as `{:#}` shows an `anyhow` chain).
pub fn chain_of(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line += &format!(": {c}");
        cause = c.source();
    }
    line
}

/// Recognises one error type in a chain and gives its exit status ([`probe`]).
pub type ExitProbe = fn(&(dyn std::error::Error + 'static)) -> Option<i32>;

/// The [`ExitProbe`] of type `T`.
pub fn probe<T: ExitStatus>(e: &(dyn std::error::Error + 'static)) -> Option<i32> {
    e.downcast_ref::<T>().map(ExitStatus::exit_status)
}

/// The exit status of an error chain: a resource limit anywhere in it (too many open files,
/// no process or thread could start, no memory, the file-size limit, a full disk) is
/// [`EXIT_FAILED`], whatever was being done; otherwise the first cause that is a [`Usage`] or
/// [`Unsupported`] marker, or that one of `probes` recognises, decides; a chain of none is
/// [`EXIT_FAILED`].
pub fn exit_code_by(e: &(dyn std::error::Error + 'static), probes: &[ExitProbe]) -> i32 {
    if foundation::error::Limit::in_chain(e).is_some() {
        return EXIT_FAILED;
    }
    let mut next = Some(e);
    while let Some(cause) = next {
        next = cause.source();
        let known = [
            probe::<Usage> as ExitProbe,
            probe::<Unsupported>,
            probe::<Refused>,
        ];
        if let Some(code) = known.iter().chain(probes).find_map(|p| p(cause)) {
            return code;
        }
    }
    EXIT_FAILED
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a cause, as a library's context variant is.
    #[derive(Debug, thiserror::Error)]
    #[error("while doing x")]
    struct Context(#[source] Box<dyn std::error::Error + Send + Sync>);

    /// Taken as bad input where it is recognised (as a library's own usage error is).
    impl ExitStatus for Context {
        fn exit_status(&self) -> i32 {
            EXIT_USAGE
        }
    }

    #[test]
    fn markers_decide_and_the_rest_fails() {
        assert_eq!(exit_code_by(&Usage("x".into()), &[]), 2);
        let unsupported = Context(Box::new(Unsupported("x".into())));
        assert_eq!(exit_code_by(&unsupported, &[]), 3);
        assert_eq!(chain_line(&unsupported), "while doing x: x");
        assert_eq!(exit_code_by(&Context("plain".into()), &[]), 1);
        assert_eq!(
            exit_code_by(&Context("plain".into()), &[probe::<Context>]),
            2
        );
        // Bad input that failed on a resource limit is a failure, not bad input.
        let emfile = Context(Box::new(std::io::Error::from_raw_os_error(
            nix::libc::EMFILE,
        )));
        assert_eq!(exit_code_by(&emfile, &[probe::<Context>]), 1);
    }
}
