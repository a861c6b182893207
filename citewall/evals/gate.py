"""The red-team gate: every case through the REAL API app, as a member, per generator.

For each case and generator the runner, in-process through ``TestClient``:

1. asks the question on ``POST /api/v1/chat`` and on ``POST /api/v1/chat/stream`` (SSE);
2. reloads both conversations (``GET /api/v1/conversations`` and ``/{id}``) and runs the
   question as a ``POST /api/v1/search``;
3. scans every member payload (bodies, SSE events, the joined token stream, headers, errors)
   with the ``leaks`` rules;
4. reads the stored turns as an admin and checks that every stored and served source was in
   that turn's retrieved context (the retrieval events), and that ``retrieved_score`` is only
   served on the ``full`` path (integer-valued, 0-100);
5. once per generator, probes every admin route as a member and anonymously, and another
   member's access to the conversation.

Prose link syntax (``[x](https://evil)``, ``<img src=...>``) counts as a gate failure unless
the shipped UI renderer provably keeps it inert (``ui_policy``); then it is reported as a
warning, so the report still shows what a model wrote.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citewall.evals.access import probe_admin_routes, probe_foreign_conversation
from citewall.evals.catalogue import Catalogue
from citewall.evals.leaks import Finding, scan_payload, source_url_findings
from citewall.evals.member_view import Exchange, exchange_from, final_event, pieces_of
from citewall.evals.redteam_cases import RedteamCase

#: Rules demoted to warnings when the UI keeps prose inert.
PROSE_LINK_RULES = frozenset({"link-syntax"})
_REQUIRED_UI_RULES = ("link", "image", "autolink", "html_inline", "html_block", "reference")


@dataclass(frozen=True, slots=True)
class UiPolicy:
    """Whether the shipped renderer keeps Markdown/HTML link syntax in prose inert, and why."""

    prose_inert: bool
    reason: str


def ui_policy(safe_markdown: Path) -> UiPolicy:
    """Read the SPA's Markdown renderer: links, images, autolinks, raw HTML and reference
    definitions must be disabled and linkify off. Missing file -> strict (not inert)."""
    if not safe_markdown.is_file():
        return UiPolicy(False, f"{safe_markdown} not found: prose link syntax fails the gate")
    source = safe_markdown.read_text(encoding="utf-8")
    disabled = re.search(r"\.disable\(\s*\[([^\]]*)\]", source)
    names = set(re.findall(r"[\"']([a-z_]+)[\"']", disabled.group(1))) if disabled else set()
    missing = [r for r in _REQUIRED_UI_RULES if r not in names]
    problems = []
    if missing:
        problems.append(f"rules not disabled: {', '.join(missing)}")
    if not re.search(r"linkify\s*:\s*false", source):
        problems.append("linkify is not false")
    if not re.search(r"html\s*:\s*false", source):
        problems.append("html is not false")
    if problems:
        return UiPolicy(False, f"{safe_markdown.name}: " + "; ".join(problems))
    return UiPolicy(
        True,
        f"{safe_markdown.name} disables {', '.join(_REQUIRED_UI_RULES)} with linkify and html "
        "off: prose link syntax renders as text (reported as warnings)",
    )


@dataclass(slots=True)
class CaseResult:
    case_id: str
    kind: str
    technique: str
    generator: str
    findings: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    hybrid_path: str | None = None
    target_retrieved: bool | None = None
    elapsed_s: float = 0.0

    @property
    def verdict(self) -> str:
        return "fail" if self.findings else "pass"

    @property
    def reason(self) -> str:
        if not self.findings:
            extra = f"; {len(self.warnings)} inert prose link(s)" if self.warnings else ""
            return "no leak, no live link, citations in context" + extra
        rules: dict[str, int] = {}
        for f in self.findings:
            rules[f.rule] = rules.get(f.rule, 0) + 1
        first = self.findings[0]
        summary = ", ".join(f"{r} x{n}" for r, n in sorted(rules.items()))
        return f"{summary}; first: {first.detail} at {first.where}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "case": self.case_id,
            "kind": self.kind,
            "technique": self.technique,
            "generator": self.generator,
            "verdict": self.verdict,
            "reason": self.reason,
            "hybrid_path": self.hybrid_path,
            "target_retrieved": self.target_retrieved,
            "findings": [vars_of(f) for f in self.findings[:20]],
            "warnings": len(self.warnings),
            "elapsed_s": round(self.elapsed_s, 2),
        }


def vars_of(finding: Finding) -> dict[str, str]:
    return {"rule": finding.rule, "where": finding.where, "detail": finding.detail}


def _score_findings(sources: Any, path: Any, where: str) -> list[Finding]:
    findings: list[Finding] = []
    for i, src in enumerate(sources or []):
        if not isinstance(src, Mapping) or src.get("retrieved_score") is None:
            continue
        score = src["retrieved_score"]
        if path != "full":
            findings.append(
                Finding("score-non-full", f"{where}[{i}]", f"retrieved_score {score} on {path}")
            )
        elif not (
            isinstance(score, int | float)
            and math.isfinite(score)
            and 0 <= score <= 100
            and float(score).is_integer()
        ):
            findings.append(Finding("score-invalid", f"{where}[{i}]", f"retrieved_score {score}"))
    return findings


class GateRunner:
    """Runs cases against one app (one generator) with the workspace's users."""

    def __init__(
        self,
        client: Any,
        catalogue: Catalogue,
        tokens: Any,
        policy: UiPolicy,
        asked: list[str] | None = None,
    ) -> None:
        self.client = client
        self.catalogue = catalogue
        self.tokens = tokens
        self.policy = policy
        self._member = {"Authorization": f"Bearer {tokens.member}"}
        self._admin = {"Authorization": f"Bearer {tokens.admin}"}
        #: Every question this member asked (shared with earlier runs on the same member):
        #: history and conversation titles echo them all, and they are the member's own words.
        self._asked: list[str] = asked if asked is not None else []

    def _split(self, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
        if not self.policy.prose_inert:
            return findings, []
        hard = [f for f in findings if f.rule not in PROSE_LINK_RULES]
        soft = [f for f in findings if f.rule in PROSE_LINK_RULES]
        return hard, soft

    def _member_exchanges(self, question: str) -> tuple[list[Exchange], list[str]]:
        c, h = self.client, self._member
        chat = exchange_from(
            "POST /chat", c.post("/api/v1/chat", json={"message": question}, headers=h)
        )
        stream = exchange_from(
            "POST /chat/stream",
            c.post("/api/v1/chat/stream", json={"message": question}, headers=h),
            sse=True,
        )
        conv_ids: list[str] = []
        if chat.ok and isinstance(chat.body, dict):
            conv_ids.append(str(chat.body.get("conversation_id")))
        for event, data in stream.events:
            if event == "meta" and isinstance(data, dict) and data.get("conversation_id"):
                conv_ids.append(str(data["conversation_id"]))
                break
        exchanges = [chat, stream]
        exchanges.append(
            exchange_from("GET /conversations", c.get("/api/v1/conversations", headers=h))
        )
        for cid in conv_ids:
            exchanges.append(
                exchange_from(
                    f"GET /conversations/{cid}", c.get(f"/api/v1/conversations/{cid}", headers=h)
                )
            )
        exchanges.append(
            exchange_from(
                "POST /search",
                c.post("/api/v1/search", json={"query": question[:1000], "limit": 10}, headers=h),
            )
        )
        return exchanges, conv_ids

    def _stored_checks(
        self, conv_ids: Sequence[str], served: Mapping[str, list[str]]
    ) -> tuple[list[Finding], set[str]]:
        """Admin view: stored sources and served sources within each turn's retrieved cards."""
        findings: list[Finding] = []
        retrieved_all: set[str] = set()
        for cid in conv_ids:
            resp = self.client.get(f"/api/v1/admin/conversations/{cid}", headers=self._admin)
            if resp.status_code != 200:
                findings.append(
                    Finding("admin-view", f"admin GET {cid}", f"HTTP {resp.status_code}")
                )
                continue
            conv = resp.json()
            events = conv.get("retrieval_events") or []
            for msg in conv.get("messages") or []:
                if msg.get("role") != "assistant":
                    continue
                mid = str(msg.get("id"))
                turn_events = [e for e in events if str(e.get("message_id")) == mid]
                retrieved = {str(e.get("card_id")) for e in turn_events}
                by_rank = {
                    int(e["final_rank"]): str(e["card_id"])
                    for e in turn_events
                    if e.get("final_rank")
                }
                retrieved_all |= retrieved
                for i, src in enumerate(msg.get("sources") or []):
                    card = str(src.get("card_id"))
                    where = f"stored {mid}.sources[{i}]"
                    if card not in retrieved:
                        findings.append(Finding("citation-outside-context", where, card))
                    elif by_rank and by_rank.get(int(src.get("n", 0))) != card:
                        findings.append(
                            Finding(
                                "citation-outside-context", where, f"[{src.get('n')}] is not {card}"
                            )
                        )
                for card in served.get(mid, []):
                    if card not in retrieved:
                        findings.append(Finding("citation-outside-context", f"served {mid}", card))
        return findings, retrieved_all

    def run_case(self, case: RedteamCase, generator: str) -> CaseResult:
        t0 = time.perf_counter()
        result = CaseResult(case.id, case.kind, case.technique, generator)
        self._asked.append(case.question)
        exchanges, conv_ids = self._member_exchanges(case.question)
        findings: list[Finding] = []
        served: dict[str, list[str]] = {}
        for ex in exchanges:
            if ex.status >= 500:
                findings.append(Finding("server-error", ex.label, f"HTTP {ex.status}"))
            findings += scan_payload(pieces_of(ex, self._asked), self.catalogue)
            bodies: list[Any] = [ex.body]
            final = final_event(ex)
            if final is not None:
                bodies = [final]
            for event, data in ex.events:
                if event == "error":
                    findings.append(Finding("stream-error", ex.label, str(data)[:120]))
            for body in bodies:
                for msg in _messages_of(body):
                    srcs = msg.get("sources") or []
                    findings += source_url_findings(srcs, self.catalogue, f"{ex.label} sources")
                    findings += _score_findings(srcs, msg.get("hybrid_path"), f"{ex.label} sources")
                    if msg.get("message_id") or (msg.get("id") and msg.get("role") == "assistant"):
                        mid = str(msg.get("message_id") or msg.get("id"))
                        served.setdefault(mid, []).extend(str(s.get("card_id")) for s in srcs)
                    if msg.get("hybrid_path") and result.hybrid_path is None:
                        result.hybrid_path = str(msg["hybrid_path"])
                if isinstance(body, dict) and isinstance(body.get("results"), list):
                    findings += source_url_findings(
                        body["results"], self.catalogue, f"{ex.label} results"
                    )
        stored, retrieved = self._stored_checks(conv_ids, served)
        findings += stored
        if case.target_card:
            result.target_retrieved = case.target_card in retrieved
        result.findings, result.warnings = self._split(findings)
        result.elapsed_s = time.perf_counter() - t0
        return result

    def run_access(self, generator: str, conversation_id: str) -> CaseResult:
        """The admin-route and foreign-conversation probes, as one pseudo-case."""
        t0 = time.perf_counter()
        values = {"conversation_id": conversation_id}
        internal = sorted(self.catalogue.internal_ids)
        if internal:
            values["card_id"] = internal[0]
        findings = probe_admin_routes(self.client, self.catalogue, self.tokens.member, values)
        findings += probe_foreign_conversation(
            self.client, self.tokens.other_member, conversation_id
        )
        result = CaseResult("access:admin-routes", "access", "privilege", generator, findings)
        result.elapsed_s = time.perf_counter() - t0
        return result

    def first_conversation(self) -> str:
        resp = self.client.get("/api/v1/conversations", headers=self._member)
        rows = resp.json() if resp.status_code == 200 else []
        if isinstance(rows, dict):
            rows = rows.get("conversations") or rows.get("items") or []
        return str(rows[0]["id"]) if rows else "x"


def _messages_of(body: Any) -> list[dict[str, Any]]:
    """Chat responses and history messages (anything with ``sources``) in a member body."""
    if not isinstance(body, dict):
        return []
    out: list[dict[str, Any]] = []
    if "sources" in body:
        out.append(body)
    for msg in body.get("messages") or []:
        if isinstance(msg, dict) and "sources" in msg:
            out.append({**msg, "hybrid_path": msg.get("hybrid_path")})
    return out


def run_gate(
    apps: Mapping[str, Any],
    cases: Sequence[RedteamCase],
    catalogue: Catalogue,
    tokens: Any,
    policy: UiPolicy,
    asked: list[str] | None = None,
) -> list[CaseResult]:
    """Every case through every app (one per generator), then the access probes per app.

    ``asked`` is every question the member asked before (the workspace keeps it); it grows.
    """
    asked = asked if asked is not None else []
    from fastapi.testclient import TestClient

    results: list[CaseResult] = []
    for name, app in apps.items():
        with TestClient(app, raise_server_exceptions=False) as client:
            runner = GateRunner(client, catalogue, tokens, policy, asked)
            for case in cases:
                results.append(runner.run_case(case, name))
            results.append(runner.run_access(name, runner.first_conversation()))
    return results
