"""The prose-link policy reads the shipped renderer: inert only while it disables every rule
that could make a link; otherwise prose link syntax fails the gate."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from citewall.evals.cli import run
from citewall.evals.gate import ui_policy
from citewall.evals.workspace import SAFE_MARKDOWN

SAFE = """
const parser = new MarkdownIt("commonmark", { html: false, linkify: false, typographer: false });
parser.disable(["link", "image", "autolink", "html_inline", "html_block", "reference"]);
"""


def test_shipped_renderer_keeps_prose_inert() -> None:
    policy = ui_policy(SAFE_MARKDOWN)
    assert policy.prose_inert, policy.reason


def test_reenabling_a_rule_or_linkify_makes_prose_links_fail(tmp_path: Path) -> None:
    f = tmp_path / "SafeMarkdown.tsx"
    f.write_text(SAFE)
    assert ui_policy(f).prose_inert
    f.write_text(SAFE.replace('"image", ', ""))
    policy = ui_policy(f)
    assert not policy.prose_inert and "image" in policy.reason
    f.write_text(SAFE.replace("linkify: false", "linkify: true"))
    assert not ui_policy(f).prose_inert
    assert not ui_policy(tmp_path / "missing.tsx").prose_inert


def test_cli_rejects_a_bad_split_before_any_work() -> None:
    app = typer.Typer()
    app.command()(run)
    result = CliRunner().invoke(app, ["--split", "train"])
    assert result.exit_code == 2
    assert "train" in result.output
