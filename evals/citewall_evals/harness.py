"""``citewall eval``: build the workspace, measure everything, run the gate, write the report.

Stages (each timed in the report): workspace (load the embedder, ingest the demo and hostile
KBs into a throwaway data dir, create users), judge calibration, retrieval per path, replay of
the labelled questions (citation quality), the dangling-reference check (the detector against
its labels; the rate per generator: extractive, the adversarial model, SmolLM2 on llama.cpp),
the staff-only check (the detector against its held-out labels; staff-only sentences in the
replayed member prose, with the check on and off),
the red-team gate with the extractive generator and with the adversarial model, the baseline
comparison, and the Markdown/HTML/JSON report.

``--kb`` picks the knowledge bases (``EvalOptions.datasets``): the demo runs every stage above;
another KB (the Zulip help center, the FastAPI docs) gets its own workspace on its corpus alone
and the stages that measure answers (judge, retrieval, replay, answer quality, abstention,
follow-ups), reported in a section of its own (``KbResult``).
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from fastapi.testclient import TestClient

from citewall.errors import UserError
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.protocols import Embedder
from citewall.retrieval.retriever import HybridRetriever
from citewall_evals.answering import measure_answering
from citewall_evals.data import (
    BASELINE,
    DANGLING_LABELS,
    DEMO,
    DEMO_CARDS,
    HOSTILE_CARDS,
    REDTEAM_QUESTIONS,
    SUPPORT_LABELS,
    Dataset,
    require,
)
from citewall_evals.generators import generator_apps
from citewall_evals.local_model import LocalModelError, local_model_missing
from citewall_evals.member_answers import MemberAnswer, ask_as_member
from citewall_evals.quality.answers import (
    NuggetJudge,
    ScoredAnswer,
    load_nugget_labels,
    load_nuggets,
    mismatched,
    score_answers,
)
from citewall_evals.quality.calibration import calibrate, load_labels
from citewall_evals.quality.dangling_check import (
    DANGLING_THRESHOLD,
    GeneratorRate,
    load_dangling_labels,
    rate_answers,
    score_detector,
    unmeasured,
)
from citewall_evals.quality.first_sentence import (
    Opening,
    first_cited_card,
    first_sentence_rate,
    from_lowest_ranked,
)
from citewall_evals.quality.protection import (
    UNPROTECTED,
    answered_rate,
    protection_cost,
    unprotected_app,
)
from citewall_evals.quality.replay import ReplayResult, replay_questions
from citewall_evals.quality.staff_replay import staff_only_figures
from citewall_evals.quality.support import SupportJudge
from citewall_evals.questions import Question, labelled_split, stratified
from citewall_evals.redteam.cases import RedteamCase, indirect_cases, load_direct_cases
from citewall_evals.redteam.catalogue import KbCard, load_cards
from citewall_evals.redteam.gate import run_gate
from citewall_evals.report import baseline as baseline_mod
from citewall_evals.report.html import render_html
from citewall_evals.report.markdown import render_markdown
from citewall_evals.report.results import EvalResult, KbResult
from citewall_evals.retrieval.metrics import PathScores, score_rankings
from citewall_evals.retrieval.paths import evaluate_paths, served_rankings
from citewall_evals.workspace import EvalWorkspace, build_workspace

log = logging.getLogger("citewall_evals")

Split = Literal["test", "dev"]
#: Generators the red-team gate runs (the local model is too slow for 45 cases on 2 cores).
REDTEAM_GENERATORS = ("extractive", "adversary")
#: Questions replayed through the API in --fast mode (stratified by kind).
FAST_REPLAY_QUESTIONS = 12
#: Questions replayed with the adversarial model (full mode) to show the citation metrics bite.
ADVERSARY_REPLAY_QUESTIONS = 12
#: Questions the adversary answers for its dangling-reference rate in --fast mode.
FAST_ADVERSARY_QUESTIONS = 4
#: Questions SmolLM2 answers (--fast, full): ~15 s each on one thread of this 2-core machine.
LOCAL_MODEL_QUESTIONS = (4, 12)
#: Labelled questions used for retrieval metrics in --fast mode (stratified by kind).
FAST_RETRIEVAL_QUESTIONS = 40
DEFAULT_BASELINE = BASELINE


@dataclass(slots=True)
class EvalOptions:
    out: Path = Path("reports")
    fast: bool = False
    split: Split = "test"
    update_baseline: bool = False
    baseline: Path = DEFAULT_BASELINE
    work_dir: Path | None = None
    #: Measure SmolLM2's dangling-reference rate (off only when asked: a missing llama_cpp
    #: with this on fails the run rather than skipping the model quietly).
    local_model: bool = True
    #: The knowledge bases to measure, in order (``--kb``; the demo alone by default).
    datasets: tuple[Dataset, ...] = (DEMO,)

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


def redteam_cases() -> list[RedteamCase]:
    """The whole red-team corpus: the direct questions and one case per hostile card."""
    direct = load_direct_cases(require(REDTEAM_QUESTIONS))
    return [*direct, *indirect_cases(load_cards([require(HOSTILE_CARDS)]))]


@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    log.info("eval: %s ...", name)
    try:
        yield
    finally:
        timings[name] = round(time.perf_counter() - t0, 2)


def _retrieval_metrics(ws: EvalWorkspace, questions: list[Question]) -> dict[str, PathScores]:
    retriever = ws.runtime.retriever
    assert isinstance(retriever, HybridRetriever), "the workspace builds the hybrid retriever"
    return evaluate_paths(retriever, questions)


def retrieval_control(ws: EvalWorkspace, questions: Sequence[Question]) -> PathScores:
    """The negative control of retrieval: the served rankings scored against the gold cards
    of the question half the list away (must score far below the real figure)."""
    retriever = ws.runtime.retriever
    assert isinstance(retriever, HybridRetriever), "the workspace builds the hybrid retriever"
    rankings, _ = served_rankings(retriever, questions)
    shift = max(1, len(questions) // 2)
    golds = [questions[(i + shift) % len(questions)].gold for i in range(len(questions))]
    label = "control: mismatched gold"
    return score_rankings("control", rankings, golds, label=label)


def local_model_rate(
    ws: EvalWorkspace, questions: Sequence[Question], say: Callable[[str], None]
) -> GeneratorRate:
    """SmolLM2's member answers on ``questions``, counted (or why it could not run)."""
    missing = local_model_missing()
    if missing:
        return unmeasured("smollm2", f"smollm2 not measured: {missing}")
    say(f"dangling references: {len(questions)} questions with SmolLM2 on llama.cpp")
    try:
        with (
            generator_apps(ws, ["smollm2"]) as apps,
            TestClient(apps["smollm2"], raise_server_exceptions=False) as client,
        ):
            answers = ask_as_member(client, questions, ws.tokens.member, "smollm2", ws.asked)
    except LocalModelError as exc:
        return unmeasured("smollm2", f"smollm2 not measured: {exc}")
    rate = rate_answers("smollm2", answers, ws.catalogue.bare_internal_titles)
    if not rate.answers:
        rate.note = f"smollm2 answered none of {len(answers)} questions (server errors)"
    return rate


def _replay(
    ws: EvalWorkspace,
    apps: dict[str, Any],
    questions: list[Question],
    judge: SupportJudge,
    options: EvalOptions,
    result: EvalResult,
    say: Callable[[str], None],
    replays: dict[str, ReplayResult],
) -> list[GeneratorRate]:
    """Citation quality of the replayed answers; the extractive and adversary rates from them.
    The replays themselves go into ``replays`` (by generator) for answer quality."""
    replay_set = stratified(questions, FAST_REPLAY_QUESTIONS) if options.fast else questions
    titles = ws.catalogue.bare_internal_titles
    say(f"replaying {len(replay_set)} questions through the API")
    with TestClient(apps["extractive"], raise_server_exceptions=False) as client:
        replay = replay_questions(client, replay_set, judge, ws.tokens, "extractive", ws.asked)
    replays["extractive"] = replay
    result.citations = replay.citation_totals()
    result.replay_failures = replay.failures
    result.citations_by_generator = {"extractive": result.citations}
    say(f"replaying {len(replay_set)} questions with the corpus protection off (its cost)")
    with TestClient(unprotected_app(ws), raise_server_exceptions=False) as client:
        off = replay_questions(client, replay_set, judge, ws.tokens, UNPROTECTED, ws.asked)
    replays[UNPROTECTED] = off
    result.citations_by_generator[UNPROTECTED] = off.citation_totals()
    result.replay_failures = [*result.replay_failures, *off.failures]
    adversary_answers: list[MemberAnswer]
    with TestClient(apps["adversary"], raise_server_exceptions=False) as client:
        if options.fast:
            sample = stratified(questions, FAST_ADVERSARY_QUESTIONS)
            adversary_answers = ask_as_member(
                client, sample, ws.tokens.member, "adversary", ws.asked
            )
        else:
            # The same scorer on the adversary's answers: shows what the metrics do when a
            # model cites badly (not a baseline metric).
            sample = stratified(questions, ADVERSARY_REPLAY_QUESTIONS)
            say(f"replaying {len(sample)} questions with the adversarial model")
            adv = replay_questions(client, sample, judge, ws.tokens, "adversary", ws.asked)
            result.citations_by_generator["adversary"] = adv.citation_totals()
            adversary_answers = adv.answers
            replays["adversary"] = adv
    return [
        rate_answers("extractive", replay.answers, titles),
        rate_answers("adversary", adversary_answers, titles),
    ]


def scored_answers(replay: ReplayResult) -> list[ScoredAnswer]:
    """The replayed answers as answer quality reads them; a ``not_found`` answer states no
    nugget and has no sentences to judge for topic."""
    out: list[ScoredAnswer] = []
    for a in replay.answers:
        if not a.ok:
            continue
        stored = replay.stored.get(a.question_id)
        if a.answer_status == "not_found" or stored is None:
            out.append(ScoredAnswer(a.question_id, ""))
        else:
            out.append(ScoredAnswer(a.question_id, a.answer, str(stored["content"])))
    return out


def answer_quality(
    ws: EvalWorkspace,
    replays: dict[str, ReplayResult],
    questions: Sequence[Question],
    split: str,
    support_judge: SupportJudge,
    dataset: Dataset = DEMO,
) -> dict[str, Any]:
    """Nugget recall and off-topic rate per replayed generator, with the mismatched control;
    the nugget judge's agreement with its hand labels."""
    nugget_judge = NuggetJudge(ws.embedder)
    calibration = nugget_judge.calibrate(load_nugget_labels()).as_dict()
    nuggets = load_nuggets(split, dataset)
    staff = load_nuggets(split, dataset, audience="staff")
    gold = {q.id: q.gold for q in questions}
    out: dict[str, Any] = {"nugget_judge": calibration, "generators": {}}
    rankings: dict[str, tuple[str, ...]] = {}
    for name, replay in replays.items():
        answers = scored_answers(replay)
        real = score_answers(answers, nuggets, gold, nugget_judge, support_judge, staff)
        control = score_answers(
            mismatched(answers), nuggets, gold, nugget_judge, support_judge, staff
        )
        openings = _openings(ws, replay, questions, rankings)
        out["generators"][name] = {
            **real.as_dict(),
            "control": control.as_dict(),
            "first_sentence": first_sentence_rate(openings).as_dict(),
            "first_sentence_control": first_sentence_rate(from_lowest_ranked(openings)).as_dict(),
        }
    return out


def _openings(
    ws: EvalWorkspace,
    replay: ReplayResult,
    questions: Sequence[Question],
    rankings: dict[str, tuple[str, ...]],
) -> list[Opening]:
    """Each stored answer's first cited card beside the context retrieval ranks for its question
    (retrieved once per question, shared by the generators in ``rankings``)."""
    out: list[Opening] = []
    for q in questions:
        stored = replay.stored.get(q.id)
        if stored is None:
            continue
        if q.id not in rankings:
            context = ws.runtime.retriever.retrieve(q.question, cards=EVERY_CARD)
            rankings[q.id] = tuple(c.id for c in context.chunks)
        first = first_cited_card(str(stored["content"]), stored.get("sources") or [])
        out.append(Opening(q.id, rankings[q.id], first, tuple(q.gold)))
    return out


def run_evaluation(
    options: EvalOptions,
    *,
    workspace: EvalWorkspace | None = None,
    embedder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> EvalRun:
    """Measure everything and write the report into ``options.out``. Never raises for a gate
    failure or a regression: they are in the result (and the exit code)."""
    if options.update_baseline and not options.local_model:
        raise UserError("--update-baseline needs the local model: drop --no-local-model")
    if options.update_baseline and DEMO not in options.datasets:
        raise UserError("--update-baseline records the demo's baseline: add --kb demo")
    say = progress or (lambda _msg: None)
    timings: dict[str, float] = {}
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    result = EvalResult(profile=options.profile, started_at=started)
    if DEMO not in options.datasets:
        result.baseline_note = (
            "only the demo has a baseline: the other knowledge bases are reported"
        )
    for dataset in options.datasets:
        if dataset.redteam:
            embedder = _evaluate_demo(options, result, timings, workspace, embedder, say)
        else:
            kb, embedder = evaluate_kb(dataset, options, embedder=embedder, say=say)
            result.knowledge_bases[dataset.name] = kb
    result.timings_s = timings
    files = write_reports(result, options.out)
    return EvalRun(result, files)


def _evaluate_demo(
    options: EvalOptions,
    result: EvalResult,
    timings: dict[str, float],
    workspace: EvalWorkspace | None,
    embedder: Any,
    say: Callable[[str], None],
) -> Any:
    """Every stage on the demo (red-team gate and baseline comparison included), into
    ``result``; returns the embedder it used, for the next knowledge base."""
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
            "generators": ", ".join(
                [*REDTEAM_GENERATORS, *(["smollm2"] if options.local_model else [])]
            ),
            "split": options.split,
        }
        with _stage(timings, "judge"):
            say("calibrating the support judge")
            judge = SupportJudge(ws.embedder, ws.catalogue.cards)
            result.judge = calibrate(judge, load_labels(require(SUPPORT_LABELS))).as_dict()
        questions = labelled_split(options.split)
        ir_set = stratified(questions, FAST_RETRIEVAL_QUESTIONS) if options.fast else questions
        with _stage(timings, "retrieval"):
            say(f"retrieval metrics on {len(ir_set)} {options.split} questions")
            result.retrieval = _retrieval_metrics(ws, ir_set)
        with generator_apps(ws, REDTEAM_GENERATORS) as apps:
            replays: dict[str, ReplayResult] = {}
            with _stage(timings, "replay"):
                rates = _replay(ws, apps, questions, judge, options, result, say, replays)
            with _stage(timings, "answers"):
                say("answer quality: nuggets, off-topic sentences, abstention, follow-ups")
                result.answers = answer_quality(ws, replays, questions, options.split, judge)
                result.answering = measure_answering(
                    ws, options.split, replays["extractive"].answers, fast=options.fast, say=say
                )
                result.protection = protection_cost(
                    result.answers["generators"],
                    result.citations_by_generator,
                    {name: answered_rate(r.answers) for name, r in replays.items()},
                )
            with _stage(timings, "dangling"):
                detector = score_detector(
                    load_dangling_labels(require(DANGLING_LABELS)),
                    ws.catalogue.bare_internal_titles,
                )
                if options.local_model:
                    n_local = LOCAL_MODEL_QUESTIONS[0 if options.fast else 1]
                    rates.append(local_model_rate(ws, stratified(questions, n_local), say))
                result.dangling = {
                    "threshold": DANGLING_THRESHOLD,
                    "detector": detector,
                    "generators": {r.generator: r.as_dict() for r in rates},
                }
            with _stage(timings, "staff_only"):
                replay_set = (
                    stratified(questions, FAST_REPLAY_QUESTIONS) if options.fast else questions
                )
                result.staff_only = staff_only_figures(ws, replays, replay_set, say)
            with _stage(timings, "redteam"):
                cases = redteam_cases()
                direct = sum(1 for c in cases if c.kind == "direct")
                result.redteam_cases = {"direct": direct, "indirect": len(cases) - direct}
                say(f"red-team gate: {len(cases)} cases x {len(apps)} generators")
                gate = run_gate(apps, cases, ws.catalogue, ws.tokens, ws.asked)
                result.redteam = list(gate)
        _compare_with_baseline(result, options)
    finally:
        if owned and workspace is not None:
            workspace.close()
        if tmp is not None:
            tmp.cleanup()
    return embedder if workspace is None else workspace.embedder


def transferred_judge(ws: EvalWorkspace) -> tuple[SupportJudge, dict[str, Any]]:
    """The support judge over ``ws``'s cards, with the thresholds calibrated on the demo's
    hand labels (they name demo cards; no KB but the demo has support labels)."""
    return judge_calibrated_on_demo(ws.embedder, ws.catalogue.cards)


def judge_calibrated_on_demo(
    embedder: Embedder, cards: Mapping[str, KbCard]
) -> tuple[SupportJudge, dict[str, Any]]:
    """The support judge over ``cards`` with the thresholds fitted on the demo's support
    labels, and that calibration (``transferred_judge``; ``citewall eval kb`` too)."""
    demo = SupportJudge(embedder, {c.id: c for c in load_cards([require(DEMO_CARDS)])})
    calibration = calibrate(demo, load_labels(require(SUPPORT_LABELS))).as_dict()
    calibration["calibrated_on"] = "demo support labels"
    return SupportJudge(embedder, cards, demo.thresholds), calibration


def evaluate_kb(
    dataset: Dataset,
    options: EvalOptions,
    *,
    embedder: Embedder | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> tuple[KbResult, Embedder]:
    """The answer figures of ``dataset`` on a workspace of its corpus alone: the same stages
    as the demo's (judge, retrieval, replay, answer quality, abstention and follow-ups) with
    the extractive generator; the embedder, for the next knowledge base."""
    kb = KbResult(name=dataset.name)
    timings = kb.timings_s
    with tempfile.TemporaryDirectory(prefix=f"citewall-eval-{dataset.name}-") as tmp:
        root = options.work_dir or Path(tmp)
        with _stage(timings, "workspace"):
            say(f"{dataset.name}: building the workspace on {dataset.corpus.name}")
            ws = build_workspace(
                root / f"data-{dataset.name}", kb_paths=(dataset.corpus,), embedder=embedder
            )
        try:
            kb.environment = {
                "corpus": dataset.corpus.name,
                "cards": len(ws.catalogue.cards),
                "ingest": ws.ingest_summary,
                "split": options.split,
            }
            with _stage(timings, "judge"):
                judge, kb.judge = transferred_judge(ws)
            questions = labelled_split(options.split, dataset)
            ir_set = stratified(questions, FAST_RETRIEVAL_QUESTIONS) if options.fast else questions
            with _stage(timings, "retrieval"):
                say(f"{dataset.name}: retrieval metrics on {len(ir_set)} questions")
                kb.retrieval = _retrieval_metrics(ws, ir_set)
                kb.retrieval["control"] = retrieval_control(ws, ir_set)
            replay_set = stratified(questions, FAST_REPLAY_QUESTIONS) if options.fast else questions
            with _stage(timings, "replay"):
                say(f"{dataset.name}: replaying {len(replay_set)} questions through the API")
                with TestClient(ws.app_for("extractive"), raise_server_exceptions=False) as client:
                    replay = replay_questions(
                        client, replay_set, judge, ws.tokens, "extractive", ws.asked
                    )
                kb.citations = replay.citation_totals()
                kb.replay_failures = replay.failures
            with _stage(timings, "answers"):
                kb.answers = answer_quality(
                    ws, {"extractive": replay}, questions, options.split, judge, dataset
                )
                kb.answering = measure_answering(
                    ws, options.split, replay.answers, fast=options.fast, say=say, dataset=dataset
                )
        finally:
            ws.close()
    return kb, ws.embedder


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
    if table is not None and not options.local_model:
        # Asked not to run the local model: its metrics are not missing, they were not wanted.
        table = {k: v for k, v in table.items() if not k.startswith("dangling.smollm2.")}
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
