"""Publishing a built artifact atomically: version directories behind a one-line pointer.

Layout of an artifact directory::

    CURRENT            # one line: the name of the live version directory
    v-<stamp>/         # the files of one complete build

``publish`` writes a new version into a temporary directory, renames it into place, then
replaces ``CURRENT`` with ``os.replace`` (atomic on POSIX), then removes older versions. A build
interrupted at any point leaves ``CURRENT`` naming a complete, older version. Readers check the
pointer (a tiny file read) to notice a new version without a restart.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

POINTER = "CURRENT"


def publish(directory: Path, write: Callable[[Path, str], None]) -> str:
    """Call ``write(tmp_dir, version)`` to fill a new version, then make it live; returns its
    name. If ``write`` raises, nothing is published and the previous version stays live."""
    directory.mkdir(parents=True, exist_ok=True)
    version = f"v-{time.time_ns()}-{uuid.uuid4().hex[:6]}"
    tmp = directory / f".tmp-{version}"
    tmp.mkdir()
    try:
        write(tmp, version)
        os.replace(tmp, directory / version)
        pointer_tmp = directory / f".{POINTER}.{version}"
        pointer_tmp.write_text(version + "\n", encoding="utf-8")
        os.replace(pointer_tmp, directory / POINTER)  # the atomic switch
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for old in directory.iterdir():
        if old.name not in {version, POINTER} and old.is_dir() and old.name.startswith("v-"):
            shutil.rmtree(old, ignore_errors=True)
    return version


def current_version(directory: Path) -> str | None:
    """The live version name, or None when nothing has been published."""
    try:
        return (directory / POINTER).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
