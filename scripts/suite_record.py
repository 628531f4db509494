"""The record of what was made in a results folder (`.socbench-suite.json`, kept by `benchmp
suite`; `.socbench-efficiency.json`, kept by `benchmp efficiency`). The scripts that add files
to such a folder (the plots) add them to the record too, so `--force` removes them with the
command's own files, and never a file of anyone else's.
"""
import fcntl
import json
import os
import pathlib

RECORD = ".socbench-suite.json"
EFFICIENCY_RECORD = ".socbench-efficiency.json"


def record(folder, paths, name=RECORD):
    """Adds `paths` (files or folders inside `folder`) to its record `name`. Returns None, or
    why nothing was recorded: a folder without the record is not the command's, and one whose
    lock is held has a command writing into it."""
    folder = pathlib.Path(folder)
    path = folder / name
    if not path.is_file():
        return f"{folder} has no {name} (not a folder of the command that keeps it)"
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
            return f"a command is writing into {folder}"
        data = json.loads(path.read_text())
        made = data.setdefault("made", [])
        added = [n for n in names if n not in made]
        if not added:
            return None
        made.extend(added)
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
    finally:
        os.close(fd)
    return None
