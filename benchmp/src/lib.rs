//! benchmp (work in progress).
