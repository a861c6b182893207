"""Fault: the data dir is read-only (a full or read-only-remounted disk, a wrong volume mode).

``citewall serve`` runs in a private mount namespace (``unshare -m``) in which its data dir is
bind-mounted read-only, so nothing outside the test is affected and root's permission bypass
does not matter. It must refuse to start with one clear ``error:`` line naming what it cannot
write, and no traceback.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .rig import prepare_served_dir, served_env
from .services import ServeProcess

pytestmark = pytest.mark.slow


def _read_only_prefix(data_dir: Path) -> list[str]:
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0"', str(data_dir)],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a private read-only bind mount here: {probe.stderr.strip()}")
    return ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(data_dir)]


def _assert_clear_refusal(server: ServeProcess, names: str) -> None:
    assert server.returncode not in (None, 0), f"served from a read-only data dir:\n{server.log}"
    log = server.log
    assert "Traceback" not in log, log[-2000:]
    errors = [line for line in log.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, log[-2000:]
    assert names in errors[0], errors[0]


def test_read_only_data_dir_with_sqlite_refuses_to_start_clearly(
    rig_dir: Path, embedder: Any, tmp_path: Path
) -> None:
    prepare_served_dir(rig_dir, embedder)
    server = ServeProcess(
        served_env(rig_dir), log_path=tmp_path / "serve.log", prefix=_read_only_prefix(rig_dir)
    ).start()
    try:
        _assert_clear_refusal(server, str(rig_dir / "citewall.db"))
    finally:
        server.kill()


def test_read_only_data_dir_with_the_database_elsewhere_refuses_to_start_clearly(
    rig_dir: Path, embedder: Any, tmp_path: Path
) -> None:
    prepare_served_dir(rig_dir, embedder)
    elsewhere = tmp_path / "db"
    elsewhere.mkdir()
    shutil.move(rig_dir / "citewall.db", elsewhere / "citewall.db")
    for leftover in rig_dir.glob("citewall.db*"):
        leftover.unlink()
    env = served_env(rig_dir, CITEWALL_DATABASE_URL=f"sqlite:///{elsewhere / 'citewall.db'}")
    server = ServeProcess(
        env, log_path=tmp_path / "serve.log", prefix=_read_only_prefix(rig_dir)
    ).start()
    try:
        _assert_clear_refusal(server, str(rig_dir / "chroma"))
    finally:
        server.kill()
