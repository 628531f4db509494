//! Android atrace-format trace_marker writer (work in progress).
