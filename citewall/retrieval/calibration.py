"""Abstention thresholds fitted on each knowledge base, from the KB itself.

At ingest (``ingest.calibrate``) the KB's own probes (``retrieval.probes``: answerable
pseudo-questions from its cards; the shipped off-domain questions and the KB's near misses as
unanswerable) go through the real retriever; ``fit`` then places the thresholds of
``retrieval.answerability`` on their signals:

1. for each key-coverage threshold ``c`` (0, or a value some pseudo-question has, at most
   ``MAX_KEY_COVERAGE``), the highest dense threshold that still answers ``TARGET_ANSWERED``
   of the pseudo-questions, taken ``WORDING_GAP`` lower than they score, is the ceiling;
2. below that ceiling, the dense threshold goes just high enough to refuse every probe it can:
   halfway between the highest refused probe and the next signal above it, so nothing is
   refused that the probes do not ask to refuse;
3. the pair with the most probes refused wins (ties: the higher answered rate, then the lower
   dense threshold, since members' wording scores lower than the pseudo-questions', then the
   lower key-coverage threshold).

Both thresholds are plain numbers an operator can read on ``/readyz``; no weights.

Which signals separate (AUC, answerable vs unanswerable, measured by
``benchmarks/abstention.py``): on the demo's dev split (91 answerable, 36 unanswerable) dense
0.78, coverage of all terms in the top three cards 0.64, key-term coverage in the best card
0.62; on Zulip's dev split 0.52 / 0.65 / 0.67. Dense is the best single signal on the demo; key
coverage separates the KB's own probes almost perfectly (near misses name a term the KB never
uses) but members' questions far less, since they word things unlike the card. So the fit
combines the two, with the key threshold capped (``MAX_KEY_COVERAGE``); on the demo, Zulip and
FastAPI sets it chooses 0 for it, and dense decides.

Small KBs: with fewer than ``SMALL_KB_CARDS`` cards, a handful of pseudo-questions cannot say
how far below them members' own wording scores, and one refused pseudo-question is already
more than the 5 % the target allows. There the dense threshold is capped at the lowest
pseudo-question's score minus ``SMALL_KB_MARGIN``, so the site does not refuse its own
content; the key-coverage threshold still refuses questions about things it never names.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from citewall.retrieval.answerability import Signals, Thresholds, Vocabulary

#: The share of pseudo-questions the fitted decision must answer.
TARGET_ANSWERED = 0.95
#: How much lower members' own questions score than pseudo-questions made from the card
#: (tuned on the dev splits of the demo and Zulip sets: the 5th percentile of dense similarity
#: is 0.44 for the demo's real dev questions and 0.52 for its pseudo-questions).
WORDING_GAP = 0.08
#: The key-coverage threshold a fit may choose at most: pseudo-questions copy their card's
#: words, members do not, so a higher one refuses members' answerable questions (dev: the
#: demo's answered rate falls from 0.96 to 0.56 at 0.34).
MAX_KEY_COVERAGE = 0.25
#: Below this many sampled cards the small-KB guard applies (module docstring).
SMALL_KB_CARDS = 20
SMALL_KB_MARGIN = 0.15
#: The dense threshold when nothing needs refusing (cosine similarity's floor).
NO_DENSE = -1.0
FORMAT = "citewall-calibration/1"


@dataclass(frozen=True, slots=True)
class Fit:
    """Fitted thresholds and how they do on the probes they were fitted on."""

    thresholds: Thresholds
    answered_rate: float
    refusal_rate: float


def _answered(t: Thresholds, signals: Sequence[Signals]) -> int:
    return sum(t.answerable(s) for s in signals)


def _dense_for(answerable: Sequence[float], probes: Sequence[float], needed: int) -> float | None:
    """The lowest dense threshold that refuses as many ``probes`` as the ceiling allows
    (``needed`` of ``answerable`` stay answered), or None when ``needed`` cannot be met."""
    if needed > len(answerable):
        return None
    ceiling = math.inf if needed == 0 else sorted(answerable, reverse=True)[needed - 1]
    below = [p for p in probes if p < ceiling]
    if not below:
        return NO_DENSE
    top = max(below)
    above = [v for v in (*answerable, *probes) if v > top]
    nxt = min(above) if above else top
    return min(ceiling, (top + nxt) / 2) if nxt > top else math.nextafter(top, math.inf)


def fit(
    answerable: Sequence[Signals],
    unanswerable: Sequence[Signals],
    *,
    target: float = TARGET_ANSWERED,
    wording_gap: float = 0.0,
    max_key_coverage: float = 1.0,
) -> Fit:
    """The thresholds that refuse the most ``unanswerable`` probes while answering ``target``
    of ``answerable`` (module docstring). Always feasible: answering everything is a
    candidate.

    >>> s = lambda d, k=1.0: Signals(dense=d, coverage=1.0, key_coverage=k)
    >>> fit([s(0.7), s(0.6), s(0.8)], [s(0.2), s(0.5, 0.0)]).thresholds
    Thresholds(min_dense=0.4, min_coverage=0.0, min_key_coverage=1.0)
    """
    # Members' own wording scores lower than a question made from the card: the answerable
    # probes are taken ``wording_gap`` lower (module docstring).
    answerable = [Signals(s.dense - wording_gap, s.coverage, s.key_coverage) for s in answerable]
    needed = math.ceil(target * len(answerable) - 1e-9)
    keys = sorted(
        {0.0, *(s.key_coverage for s in answerable if s.key_coverage <= max_key_coverage)}
    )
    best: tuple[int, int, float, float] | None = None
    for c in keys:
        passing = [s.dense for s in answerable if s.key_coverage >= c]
        probes = [s.dense for s in unanswerable if s.key_coverage >= c]
        d = _dense_for(passing, probes, needed)
        if d is None:
            continue
        t = Thresholds(min_dense=d, min_coverage=0.0, min_key_coverage=c)
        key = (len(unanswerable) - _answered(t, unanswerable), _answered(t, answerable), -d, -c)
        if best is None or key > best:
            best = key
    assert best is not None  # c = 0 with needed <= len(answerable) is always feasible
    refused, answered, d, c = best[0], best[1], -best[2], -best[3]
    return Fit(
        thresholds=Thresholds(min_dense=round(d, 6), min_coverage=0.0, min_key_coverage=c),
        answered_rate=answered / len(answerable) if answerable else 1.0,
        refusal_rate=refused / len(unanswerable) if unanswerable else 0.0,
    )


def guard_small_kb(fitted: Fit, answerable: Sequence[Signals]) -> Thresholds:
    """The small-KB guard (module docstring): the dense threshold capped below the KB's own
    pseudo-questions."""
    t = fitted.thresholds
    floor = min((s.dense for s in answerable), default=NO_DENSE) - SMALL_KB_MARGIN
    return Thresholds(
        min_dense=round(min(t.min_dense, floor), 6),
        min_coverage=t.min_coverage,
        min_key_coverage=t.min_key_coverage,
    )


def signal_aucs(answerable: Sequence[Signals], unanswerable: Sequence[Signals]) -> dict[str, float]:
    """Each signal's AUC (answerable vs unanswerable; 0.5: no signal)."""
    return {
        name: round(
            auc([getattr(s, name) for s in answerable], [getattr(s, name) for s in unanswerable]),
            4,
        )
        for name in ("dense", "coverage", "key_coverage")
    }


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Probability that a positive outscores a negative (ties count half).

    >>> auc([0.9, 0.8], [0.1, 0.8])
    0.875
    """
    if not positive or not negative:
        return 0.5
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


@dataclass(frozen=True, slots=True)
class Calibration:
    """A fitted decision for one KB version, with what it was fitted on and how it did."""

    thresholds: Thresholds
    vocabulary: Vocabulary
    #: ISO 8601 UTC time of the fit.
    fitted_at: str
    #: The lexical index version the probes ran against (the KB version).
    kb_version: str | None
    kb_cards: int
    sampled_cards: int
    #: Probes per kind (answerable, off_domain, near_miss).
    probes: dict[str, int]
    #: On the probes: the answered rate of the pseudo-questions, the refusal rate of the rest
    #: (all, and per kind).
    answered_rate: float
    refusal_rate: float
    refusal_by_kind: dict[str, float] = field(default_factory=dict)
    signal_auc: dict[str, float] = field(default_factory=dict)
    #: Why a guard changed the fit (None: the fit as it came).
    guard: str | None = None

    def to_json(self) -> str:
        body = asdict(self)
        body["vocabulary"] = sorted(self.vocabulary.common)
        return json.dumps({"format": FORMAT, **body}, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        """Parse a stored calibration; ``ValueError`` (or ``KeyError``/``TypeError``) when it is
        not one."""
        body: dict[str, Any] = json.loads(text)
        if body.pop("format", None) != FORMAT:
            raise ValueError(f"not a {FORMAT} file")
        t = body.pop("thresholds")
        return cls(
            thresholds=Thresholds(
                min_dense=float(t["min_dense"]),
                min_coverage=float(t["min_coverage"]),
                min_key_coverage=float(t["min_key_coverage"]),
            ),
            vocabulary=Vocabulary(frozenset(str(w) for w in body.pop("vocabulary"))),
            **body,
        )

    def summary(self) -> dict[str, Any]:
        """What /readyz and the admin page show: every field, the vocabulary only as its size
        (``common_terms``)."""
        body = asdict(self)
        del body["vocabulary"]
        body["common_terms"] = len(self.vocabulary.common)
        return body
