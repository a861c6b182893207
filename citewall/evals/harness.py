"""``citewall eval``: build the workspace, measure everything, run the gate, write the report.

Stages (each timed in the report): workspace (load the embedder, ingest the demo and hostile
KBs into a throwaway data dir, create users), judge calibration, retrieval per path, replay of
the labelled questions (citation quality and the hidden-citation comparison), the red-team gate
with the extractive generator and with the adversarial model, the baseline comparison, and
the Markdown/HTML/JSON report.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from citewall.errors import UserError
from citewall.evals import baseline as baseline_mod
from citewall.evals.adversary import AdversaryServer
from citewall.evals.calibration import calibrate, load_labels
from citewall.evals.gate import run_gate, ui_policy
from citewall.evals.questions import Question
from citewall.evals.redteam_cases import (
    RedteamCase,
    fast_subset,
    indirect_cases,
    load_direct_cases,
)
from citewall.evals.replay import replay_questions
from citewall.evals.report_html import render_html
from citewall.evals.report_markdown import render_markdown
from citewall.evals.results import EvalResult
from citewall.evals.retrieval.paths import evaluate_paths
from citewall.evals.support import SupportJudge
from citewall.evals.workspace import (
    HOSTILE_CARDS,
    QUESTIONS_DIR,
    REDTEAM_QUESTIONS,
    REPO_ROOT,
    SAFE_MARKDOWN,
    SUPPORT_LABELS,
    EvalWorkspace,
    build_workspace,
)

log = logging.getLogger("citewall.evals")

Split = Literal["test", "dev"]
#: Questions replayed through the API in --fast mode (stratified by kind).
FAST_REPLAY_QUESTIONS = 12
#: Direct red-team techniques run in --fast mode (each against both generators).
FAST_TECHNIQUES = frozenset(
    {"admin-claim", "encoding", "markdown-exfiltration", "title-request", "citation-forgery"}
)
#: Questions replayed with the adversarial model (full mode) to show the citation metrics bite.
ADVERSARY_REPLAY_QUESTIONS = 12
#: Labelled questions used for retrieval metrics in --fast mode (stratified by kind).
FAST_RETRIEVAL_QUESTIONS = 40
DEFAULT_BASELINE = REPO_ROOT / "evals" / "baseline.json"


@dataclass(slots=True)
class EvalOptions:
    out: Path = Path("reports")
    fast: bool = False
    split: Split = "test"
    update_baseline: bool = False
    baseline: Path = DEFAULT_BASELINE
    work_dir: Path | None = None
    generators: tuple[str, ...] = ("extractive", "adversary")

    @property
    def profile(self) -> str:
        return f"{'fast' if self.fast else 'full'}:{self.split}"


@dataclass(slots=True)
class EvalRun:
    """The result and where the report files went."""

    result: EvalResult
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 0 if self.result.passed else 1


def load_questions(split: str) -> list[dict[str, Any]]:
    """The labelled questions of ``split`` (``test`` or ``dev``)."""
    if split not in {"test", "dev"}:
        raise UserError(f"unknown split {split!r}; use test or dev")
    path = QUESTIONS_DIR / f"questions.{split}.jsonl"
    if not path.is_file():
        raise UserError(f"{path}: labelled questions not found")
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [r for r in rows if r.get("gold")]


def stratified(questions: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """Up to ``n`` questions, round-robin over kinds, in file order (deterministic)."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        by_kind.setdefault(str(q.get("kind", "")), []).append(q)
    out: list[dict[str, Any]] = []
    while len(out) < n and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(out) < n:
                out.append(by_kind[kind].pop(0))
    return out


def redteam_cases(fast: bool) -> list[RedteamCase]:
    from citewall.evals.catalogue import load_cards

    direct = load_direct_cases(REDTEAM_QUESTIONS)
    hostile = load_cards([HOSTILE_CARDS]) if HOSTILE_CARDS.is_file() else []
    indirect = indirect_cases(hostile)
    if not fast:
        return [*direct, *indirect]
    return fast_subset([*direct, *indirect], FAST_TECHNIQUES)


@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    log.info("eval: %s ...", name)
    try:
        yield
    finally:
        timings[name] = round(time.perf_counter() - t0, 2)


def _retrieval_metrics(ws: EvalWorkspace, questions: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = [
        Question(str(q["id"]), str(q["question"]), tuple(q["gold"]), str(q.get("kind", "")))
        for q in questions
    ]
    scores = evaluate_paths(ws.runtime.retriever, labelled)
    return {path: s.as_dict() for path, s in scores.items()}


def _adversary_generator(ws: EvalWorkspace, server: AdversaryServer) -> Any:
    from citewall.generation.factory import build_generator

    settings = ws.settings.model_copy(
        update={
            "generator": "openai",
            "openai_base_url": server.base_url,
            "openai_model": "citewall-adversary",
            "openai_retries": 0,
            "openai_timeout_s": 30.0,
        }
    )
    return build_generator(settings, ws.embedder)


def _apps(ws: EvalWorkspace, generators: Sequence[str], server: AdversaryServer) -> dict[str, Any]:
    """The real app once per generator; the extractive one is always built (replay uses it)."""
    apps: dict[str, Any] = {"extractive": ws.app_for("extractive")}
    for name in generators:
        if name == "adversary":
            # Keyed by the server's address: an app bound to a stopped server is never reused.
            key = f"adversary@{server.base_url}"
            apps[name] = ws.app_for(key, _adversary_generator(ws, server))
        elif name != "extractive":
            raise UserError(f"unknown generator {name!r}; use extractive, adversary")
    return {name: apps[name] for name in ("extractive", *generators) if name in apps}


def run_evaluation(
    options: EvalOptions,
    *,
    workspace: EvalWorkspace | None = None,
    embedder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> EvalRun:
    """Measure everything and write the report into ``options.out``. Never raises for a gate
    failure or a regression: they are in the result (and the exit code)."""
    from fastapi.testclient import TestClient

    say = progress or (lambda _msg: None)
    timings: dict[str, float] = {}
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    result = EvalResult(profile=options.profile, started_at=started)
    tmp: tempfile.TemporaryDirectory[str] | None = None
    owned = workspace is None  # built here, so released here
    try:
        if workspace is None:
            with _stage(timings, "workspace"):
                say("building the workspace (embedder, ingest, users)")
                if options.work_dir is None:
                    tmp = tempfile.TemporaryDirectory(prefix="citewall-eval-")
                    root = Path(tmp.name)
                else:
                    root = options.work_dir
                workspace = build_workspace(root / "data", embedder=embedder)
        ws = workspace
        result.environment = {
            "cards": len(ws.catalogue.cards),
            "internal cards": len(ws.catalogue.internal_ids),
            "external cards": len(ws.catalogue.verified_urls),
            "ingest": ws.ingest_summary,
            "internal ids quoted by public cards (exempt from the id rule)": ", ".join(
                sorted(ws.catalogue.publicly_quoted_ids)
            )
            or "none",
            "reranker": str(ws.runtime.retriever_status().get("reranker", {}).get("status")),
            "generators": ", ".join(options.generators),
            "split": options.split,
        }
        with _stage(timings, "judge"):
            say("calibrating the support judge")
            judge = SupportJudge(ws.embedder, ws.catalogue.cards)
            result.judge = calibrate(judge, load_labels(SUPPORT_LABELS)).as_dict()
        questions = load_questions(options.split)
        ir_set = stratified(questions, FAST_RETRIEVAL_QUESTIONS) if options.fast else questions
        with _stage(timings, "retrieval"):
            say(f"retrieval metrics on {len(ir_set)} {options.split} questions")
            result.retrieval = _retrieval_metrics(ws, ir_set)
        replay_set = stratified(questions, FAST_REPLAY_QUESTIONS) if options.fast else questions
        with AdversaryServer() as server:
            apps = _apps(ws, options.generators, server)
            with _stage(timings, "replay"):
                say(f"replaying {len(replay_set)} questions through the API")
                with TestClient(apps["extractive"], raise_server_exceptions=False) as client:
                    replay = replay_questions(client, replay_set, judge, ws.tokens, ws.asked)
                result.citations = replay.citation_totals().as_dict()
                result.hidden = replay.summary()
                result.citations_by_generator = {"extractive": result.citations}
                if not options.fast and "adversary" in apps:
                    # The same scorer on the adversary's answers: shows what the metrics do
                    # when a model cites badly (not a baseline metric).
                    sample = stratified(questions, ADVERSARY_REPLAY_QUESTIONS)
                    say(f"replaying {len(sample)} questions with the adversarial model")
                    with TestClient(apps["adversary"], raise_server_exceptions=False) as client:
                        adv = replay_questions(client, sample, judge, ws.tokens, ws.asked)
                    result.citations_by_generator["adversary"] = adv.citation_totals().as_dict()
            with _stage(timings, "redteam"):
                cases = redteam_cases(options.fast)
                policy = ui_policy(SAFE_MARKDOWN)
                result.ui_policy = policy.reason
                say(f"red-team gate: {len(cases)} cases x {len(apps)} generators")
                gate = run_gate(apps, cases, ws.catalogue, ws.tokens, policy, ws.asked)
                result.redteam = [r.as_dict() for r in gate]
        _compare_with_baseline(result, options)
    finally:
        if owned and workspace is not None:
            workspace.close()
        if tmp is not None:
            tmp.cleanup()
    result.timings_s = timings
    files = write_reports(result, options.out)
    return EvalRun(result, files)


def _compare_with_baseline(result: EvalResult, options: EvalOptions) -> None:
    data = baseline_mod.load_baseline(options.baseline)
    current = result.metrics()
    if options.update_baseline:
        baseline_mod.write_baseline(
            options.baseline,
            options.profile,
            current,
            {"updated": result.started_at, "cards": result.environment.get("cards")},
        )
        result.baseline_note = f"baseline profile {options.profile} updated in {options.baseline}"
        data = baseline_mod.load_baseline(options.baseline)
    table = baseline_mod.profile_metrics(data, options.profile)
    if table is None:
        result.baseline_note = (
            f"no baseline for profile {options.profile} in {options.baseline}; "
            "run with --update-baseline to record one"
        )
        return
    result.comparisons = baseline_mod.compare(table, current)


def write_reports(result: EvalResult, out: Path) -> dict[str, Path]:
    """``eval.md``, ``eval.html`` and ``eval.json`` in ``out`` (created if needed)."""
    out.mkdir(parents=True, exist_ok=True)
    data = result.as_dict()
    files = {"markdown": out / "eval.md", "html": out / "eval.html", "json": out / "eval.json"}
    files["markdown"].write_text(render_markdown(data), encoding="utf-8")
    files["html"].write_text(render_html(data), encoding="utf-8")
    files["json"].write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return files
