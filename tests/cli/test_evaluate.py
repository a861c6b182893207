"""`citewall eval` options that stop before any measurement."""

from __future__ import annotations

import sys

import pytest
import typer
from typer.testing import CliRunner

from citewall.cli import evaluate
from citewall.cli.evals_package import MISSING, require_evals
from citewall.cli.main import app
from citewall.errors import UserError
from citewall_evals.data import DATASETS, DEMO, Dataset


def test_an_unknown_knowledge_base_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["eval", "--kb", "helpdesk"])
    assert result.exit_code == 2
    assert "--kb must be demo, zulip, fastapi or all" in result.output


def test_every_knowledge_base_names_files_that_ship_with_the_checkout() -> None:
    for dataset in DATASETS.values():
        assert dataset.corpus.is_file(), dataset
        for kind in ("questions", "nuggets", "unanswerable", "followups"):
            for split in ("dev", "test"):
                assert dataset.label_file(kind, split).is_file()
    assert [d.name for d in DATASETS.values() if d.redteam] == [DEMO.name]


def test_a_missing_label_file_is_a_clear_error() -> None:
    empty = Dataset("empty", DEMO.corpus, DEMO.labels / "nowhere")
    with pytest.raises(UserError, match=r"questions\.test\.jsonl not found"):
        empty.label_file("questions", "test")
    with pytest.raises(UserError, match="unknown split"):
        DEMO.label_file("questions", "train")


def test_the_kb_help_names_every_knowledge_base() -> None:
    command = typer.main.get_command(evaluate.app)
    kb = next(p for p in command.params if p.name == "kb")
    assert f"{', '.join(DATASETS)} or all" in str(getattr(kb, "help", ""))


COMMANDS = [
    ["eval"],
    ["eval", "--fast"],
    ["eval", "retrieval"],
    ["eval", "extraction", "--fast"],
    ["eval", "kb", "questions.jsonl"],
    ["bench", "retrieval"],
    ["bench", "api"],
    ["bench", "models"],
    ["bench", "answering"],
    ["bench", "crawl"],
    ["bench", "capacity"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_without_the_evals_package_the_command_says_how_to_install_it(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # How Python sees a package that is not installed: its import finds nothing.
    for name in [n for n in sys.modules if n.split(".")[0] == "citewall_evals"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "citewall_evals", None)
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert f"error: {MISSING}" in result.output
    assert "pip install -e evals/" in result.output
    assert "Traceback" not in result.output


def test_with_the_evals_package_installed_nothing_is_said() -> None:
    # Negative control: the check passes where the package is importable (the test command
    # installs it), so the message above comes from its absence.
    require_evals()
