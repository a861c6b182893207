"""Publishing a version behind a pointer: atomic, named as asked, the previous one kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citewall.retrieval.versioned_dir import POINTER, current_version, new_version, publish


def write_marker(text: str) -> Callable[[Path, str], None]:
    def write(tmp: Path, version: str) -> None:
        (tmp / "marker").write_text(f"{text} {version}", encoding="utf-8")

    return write


def test_each_publish_makes_a_new_version_live_and_keeps_only_the_one_before(
    tmp_path: Path,
) -> None:
    versions = [publish(tmp_path, write_marker(str(n))) for n in range(4)]
    assert current_version(tmp_path) == versions[-1]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == sorted(versions[-2:])


def test_a_failed_write_publishes_nothing(tmp_path: Path) -> None:
    first = publish(tmp_path, write_marker("first"))

    def fail(tmp: Path, version: str) -> None:
        (tmp / "half").write_text("half a build")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        publish(tmp_path, fail)
    assert current_version(tmp_path) == first
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")] == []


def test_a_copy_keeps_its_name_and_a_second_copy_only_moves_the_pointer(tmp_path: Path) -> None:
    version = new_version()
    assert publish(tmp_path, write_marker("copy"), version=version) == version
    assert (tmp_path / version / "marker").read_text() == f"copy {version}"

    def must_not_run(tmp: Path, version: str) -> None:
        raise AssertionError("the version is already here")

    (tmp_path / POINTER).unlink()
    assert publish(tmp_path, must_not_run, version=version) == version
    assert current_version(tmp_path) == version


@pytest.mark.parametrize("name", ["../escape", "v-1", "CURRENT", "v-123-XYZXYZ", "v-"])
def test_a_name_that_is_not_a_version_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="not a version name"):
        publish(tmp_path, write_marker("x"), version=name)
    assert not any(tmp_path.iterdir())
