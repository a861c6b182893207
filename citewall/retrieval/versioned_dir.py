"""Publishing a built artifact atomically: version directories behind a one-line pointer.

Layout of an artifact directory::

    CURRENT            # one line: the name of the live version directory
    v-<stamp>/         # the files of one complete build

``publish`` writes a new version into a temporary directory, renames it into place, then
replaces ``CURRENT`` with ``os.replace`` (atomic on POSIX), then removes older versions. A build
interrupted at any point leaves ``CURRENT`` naming a complete, older version. Readers check the
pointer (a tiny file read) to notice a new version without a restart.

A replica that copies a version another process built (``shared_artifacts.pull``) publishes it
under the same name (``version=``), so every replica reports the same version of the KB.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

POINTER = "CURRENT"
#: What a version name looks like (``new_version``); anything else is refused as a name.
VERSION_RE = re.compile(r"v-[0-9]{1,24}-[0-9a-f]{6}")


def new_version() -> str:
    """A fresh version name: ordered by time, unique across processes."""
    return f"v-{time.time_ns()}-{uuid.uuid4().hex[:6]}"


def publish(
    directory: Path, write: Callable[[Path, str], None], *, version: str | None = None
) -> str:
    """Call ``write(tmp_dir, version)`` to fill a new version, then make it live; returns its
    name. If ``write`` raises, nothing is published and the previous version stays live.

    ``version`` names the version (a copy of one built elsewhere); by default a new name. If a
    directory of that name is already here (another worker of this host copied it first), it is
    made live as it is.
    """
    version = version or new_version()
    if not VERSION_RE.fullmatch(version):
        raise ValueError(f"not a version name: {version!r}")
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / version).is_dir():
        tmp = directory / f".tmp-{version}-{uuid.uuid4().hex[:6]}"
        tmp.mkdir()
        try:
            write(tmp, version)
            os.replace(tmp, directory / version)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (directory / version).is_dir():  # not a concurrent copy of the same version
                raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    pointer_tmp = directory / f".{POINTER}.{version}.{uuid.uuid4().hex[:6]}"
    pointer_tmp.write_text(version + "\n", encoding="utf-8")
    os.replace(pointer_tmp, directory / POINTER)  # the atomic switch
    _remove_older(directory, keep=version)
    return version


def _remove_older(directory: Path, *, keep: str) -> None:
    """Remove every version but ``keep`` and the one before it (a reader that read the old
    pointer a moment ago still finds its files)."""
    versions = sorted(
        (d.name for d in directory.iterdir() if d.is_dir() and VERSION_RE.fullmatch(d.name)),
        key=_version_order,
    )
    older = [v for v in versions if _version_order(v) < _version_order(keep)]
    for name in [v for v in versions if v != keep and v not in older[-1:]]:
        shutil.rmtree(directory / name, ignore_errors=True)


def _version_order(version: str) -> int:
    return int(version.split("-")[1])


def current_version(directory: Path) -> str | None:
    """The live version name, or None when nothing has been published."""
    try:
        return (directory / POINTER).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
