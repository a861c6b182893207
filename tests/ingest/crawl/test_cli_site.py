"""`citewall ingest --site`: the summary on stdout, each refused URL with its reason on stderr,
exit 1 when a URL was refused, exit 2 for a usage mistake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from citewall.cli.main import app
from citewall.config import get_settings
from citewall_evals.helpsite import XML, HelpSite, Route, page, sitemap
from ingest.crawl.helpcenter import VOID


@pytest.fixture
def env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CITEWALL_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CITEWALL_CRAWL_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("CITEWALL_CRAWL_DELAY_S", "0")
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_cli_crawls_a_site_file_and_lists_refusals(env: None, tmp_path: Path) -> None:
    with HelpSite() as site:
        site.routes.update(
            {
                "/sitemap.xml": Route(sitemap([site.url("/void"), site.url("/gone")]), XML),
                "/void": Route(page("Void a shipping label", VOID)),
            }
        )
        urls = tmp_path / "sites.txt"
        urls.write_text(f"# our help center\n\n{site.url('/sitemap.xml')}\n")
        args = ["ingest", "--site-file", str(urls), "--license", "CC-BY-4.0", "--no-progress"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1, result.output
        assert "added 1, updated 0, unchanged 0 (0 not modified), deleted 0" in result.stdout
        assert f"refused: {site.url('/gone')}: HTTP 404 (Not Found)" in result.stderr
        again = CliRunner().invoke(app, [*args, "--prune"])
        assert "unchanged 1 (1 not modified)" in again.stdout, again.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "kb/", "--site", "https://help.example.com/sitemap.xml"], "not both"),
        (["ingest"], "nothing to ingest"),
        (["ingest", "--site", "javascript:alert(1)"], "not a URL the crawler can read"),
        (["ingest", "kb/", "--license", "MIT"], "--license applies to --site"),
    ],
)
def test_usage_mistakes_exit_2(env: None, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_a_site_url_httpx_cannot_send_is_one_clear_line(env: None) -> None:
    """``0177.0.0.1`` reads as 127.0.0.1 to some parsers and as no address to others."""
    result = CliRunner().invoke(
        app, ["ingest", "--site", "http://0177.0.0.1:8123/", "--no-progress"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "error: http://0177.0.0.1:8123/: not a URL the crawler can read: "
        "malformed (Invalid IPv4 address: '0177.0.0.1')\n"
    )


def test_a_refused_site_is_reported_without_loading_the_model(
    env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing was read, so nothing is embedded: the model (seconds to load) is not loaded,
    here proven by a model path that does not exist."""
    monkeypatch.setenv("CITEWALL_CRAWL_ALLOW_PRIVATE", "0")
    monkeypatch.setenv("CITEWALL_EMBEDDING_MODEL", str(tmp_path / "no-such-model"))
    get_settings.cache_clear()
    with HelpSite() as site:
        result = CliRunner().invoke(app, ["ingest", "--site", site.url("/"), "--no-progress"])
        assert not site.requests
    assert result.exit_code == 1, result.output
    assert "resolves to a loopback address 127.0.0.1" in result.stderr
    assert "added 0, updated 0, unchanged 0 (0 not modified), deleted 0" in result.stdout
