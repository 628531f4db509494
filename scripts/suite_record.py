"""The suite's record of what was made in its results folder (`.socbench-suite.json`, kept by
`benchmp suite`). The scripts that add files to a suite's folder (the plots, the gathered
comparison of `suite.sh --ab`) add them to the record too, so `benchmp suite --force` removes
them with the suite's own files, and never a file of anyone else's.
"""
import fcntl
import json
import os
import pathlib

RECORD = ".socbench-suite.json"


def record(folder, paths):
    """Adds `paths` (files or folders inside `folder`) to its record. Returns None, or why
    nothing was recorded: a folder without a record is no suite's, and one whose lock is held
    has a suite writing into it."""
    folder = pathlib.Path(folder)
    path = folder / RECORD
    if not path.is_file():
        return f"{folder} has no {RECORD} (not a suite's folder)"
    top = os.path.abspath(folder)
    names = []
    for p in paths:
        rel = os.path.relpath(os.path.abspath(p), top)
        if rel.startswith("..") or os.path.isabs(rel) or rel == ".":
            continue
        names.append(rel + ("/" if os.path.isdir(p) and not os.path.islink(p) else ""))
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return f"a suite is writing into {folder}"
        data = json.loads(path.read_text())
        made = data.setdefault("made", [])
        added = [n for n in names if n not in made]
        if not added:
            return None
        made.extend(added)
        tmp = folder / f".{RECORD}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
    finally:
        os.close(fd)
    return None
