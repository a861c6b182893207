"""`citewall eval` options that stop before any measurement."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from citewall.cli.main import app
from citewall.errors import UserError
from citewall.evals.data import DATASETS, DEMO, Dataset


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
