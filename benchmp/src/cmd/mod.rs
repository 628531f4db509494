//! The `benchmp` binary's commands that are more than a call into the framework.

pub mod ab;
pub mod suite;
pub mod summary;
