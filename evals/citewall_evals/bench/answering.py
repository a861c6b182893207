"""What follow-up condensation and the answerability check add to a chat turn (extractive).

The labelled follow-up conversations (dev split) are answered through the production pipeline
twice per conversation, feature on and feature off, interleaved (on, off, on, off ...) so
machine load falls on both alike: the first question, then the second message with the first
as history. Reported: p50/p95 of the whole turn with each setting and their difference, and
p50/p95 of the two steps themselves (``condense`` + ``judge``, timed inside the pipeline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citewall.chat.pipeline import answer_question
from citewall.generation.followup import PlainCondenser, RuleCondenser
from citewall.generation.protocols import Generator
from citewall.retrieval.answerability import Decider
from citewall.retrieval.protocols import Embedder, Retriever
from citewall.runtime import AnswerPolicy
from citewall.text.question import clean_question
from citewall_evals.bench.stats import p50_p95, percentile
from citewall_evals.retrieval.followups import FollowUp


def run(
    conversations: Sequence[FollowUp],
    *,
    retriever: Retriever,
    generator: Generator,
    embedder: Embedder,
    thresholds: Decider,
    rounds: int = 2,
) -> dict[str, Any]:
    """Turn latencies with condensation and abstention on and off (see module docstring)."""
    on = AnswerPolicy(condenser=RuleCondenser(), thresholds=thresholds)
    off = AnswerPolicy(condenser=PlainCondenser(), thresholds=None)
    totals: dict[str, list[float]] = {"on": [], "off": []}
    steps: list[float] = []
    for _ in range(rounds):
        for conversation in conversations:
            for name, policy in (("on", on), ("off", off)):
                for question, history in (
                    (conversation.first, ()),
                    (conversation.followup, conversation.history),
                ):
                    answer = answer_question(
                        clean_question(question),
                        retriever=retriever,
                        generator=generator,
                        embedder=embedder,
                        history=history,
                        policy=policy,
                    )
                    totals[name].append(answer.timings_ms["total"])
                    if name == "on":
                        steps.append(
                            answer.timings_ms.get("condense", 0.0)
                            + answer.timings_ms.get("judge", 0.0)
                        )
    p50_on, p50_off = percentile(totals["on"], 0.5), percentile(totals["off"], 0.5)
    return {
        "turns_per_setting": len(totals["on"]),
        "conversations": len(conversations),
        "rounds": rounds,
        "turn_ms": {"on": p50_p95(totals["on"]), "off": p50_p95(totals["off"])},
        "added_p50_ms": round(p50_on - p50_off, 2),
        "condense_plus_judge_ms": p50_p95(steps, digits=3),
    }


def markdown(report: dict[str, Any]) -> str:
    t = report["turn_ms"]
    s = report["condense_plus_judge_ms"]
    return "\n".join(
        [
            "# Follow-up condensation and abstention: cost per chat turn (extractive)",
            "",
            f"{report['turns_per_setting']} turns per setting ({report['conversations']} dev "
            f"conversations x 2 messages x {report['rounds']} rounds), interleaved.",
            "",
            "| setting | turn p50 (ms) | turn p95 (ms) |",
            "|---|---|---|",
            f"| condensation + abstention on | {t['on']['p50']} | {t['on']['p95']} |",
            f"| off | {t['off']['p50']} | {t['off']['p95']} |",
            "",
            f"Added p50: {report['added_p50_ms']} ms (difference of the two p50s; includes "
            "retrieving the longer condensed query and the turns abstention answers without "
            "generating).",
            "",
            f"The two steps alone (condense + judge, timed in the pipeline): p50 {s['p50']} ms, "
            f"p95 {s['p95']} ms.",
            "",
        ]
    )
