//! What the parent of a run does beside its children while it waits for them (the power
//! sampler), from its poll loop, so no thread is ever started in a process that forks. A leaf:
//! the harness calls it, the power sampler implements it, neither needs the other.

use std::time::Duration;

/// What the parent does beside its children while it waits for them (the power sampler),
/// from its poll loop, so no thread is ever started in a process that forks.
pub trait Beside {
    /// The timed window opens: called right before the first child is told to start.
    fn opened(&mut self);
    /// The timed window closes: called right after the last child said it is done.
    fn closed(&mut self);
    /// How long until [`Beside::tick`] is due; `None` while nothing is (the poll loop then
    /// waits as it would without it).
    fn due_in(&self) -> Option<Duration>;
    /// Does what is due.
    fn tick(&mut self);
}

/// Nothing beside the children (a run without a power source).
#[derive(Debug, Clone, Copy, Default)]
pub struct Nothing;

impl Beside for Nothing {
    fn opened(&mut self) {}
    fn closed(&mut self) {}
    fn due_in(&self) -> Option<Duration> {
        None
    }
    fn tick(&mut self) {}
}
