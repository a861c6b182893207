"""`citewall eval kb` on a knowledge base and a questions file this test writes: it passes its
thresholds on the real deployment and fails them once the lexical index is gone.

The KB is a thermostat's error codes: cards alike in every word but their code and its fix, and
members who name the code in words no card uses ("my screen shows E4471"). Only the lexical
stage tells the codes apart (dense similarity sees ten near copies), so that is the deployment a
lost BM25 index breaks, and the gate must say so.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from citewall.cli.main import app
from citewall.config import get_settings, load_settings
from citewall.ingest.pipeline import ingest_paths

FIXES = [
    "the room sensor is unplugged; push its cable back into the socket marked S",
    "the boiler did not answer; check that the boiler is switched on",
    "the batteries are low; replace both AA batteries",
    "the Wi-Fi password changed; run the network setup again from the menu",
    "the frost guard is active; the heating comes on below 5 degrees",
    "the schedule is empty; add a heating period in the app",
    "the display board overheated; leave the thermostat off for ten minutes",
    "the firmware update failed; hold the dial for twenty seconds to retry it",
    "the relay is stuck; call an engineer to replace the wall plate",
    "the hot water sensor reads open; reseat the cylinder probe",
    "the outdoor probe is missing; pair it again from the menu",
    "the clock lost its time; set the date and hour again",
    "the child lock is on; hold both buttons for five seconds",
    "the pump overran; let the system cool for an hour",
    "the bridge is offline; restart the router and the bridge",
    "the valve motor stalled; turn the valve by hand once",
]
CODES = [
    f"E{c}"
    for c in (
        4471,
        4417,
        4714,
        4741,
        7144,
        7414,
        1447,
        1474,
        4147,
        7441,
        1744,
        1477,
        4177,
        7714,
        7147,
        4774,
    )
]


def cards() -> list[dict[str, Any]]:
    out = [
        {
            "id": f"kestrel-{code.lower()}",
            "title": f"Error {code}",
            "body": f"Error {code} on the Kestrel thermostat means {fix}.",
            "url": f"https://help.kestrel.test/errors/{code.lower()}",
        }
        for code, fix in zip(CODES, FIXES, strict=True)
    ]
    out.append(
        {
            "id": "kestrel-warranty",
            "title": "Kestrel warranty",
            "body": "Every Kestrel thermostat has a two-year warranty. Keep your receipt: "
            "we ask for it before we send a replacement.",
            "url": "https://help.kestrel.test/warranty",
        }
    )
    return out


def questions() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {
            "id": f"code-{code}",
            "question": f"My thermostat says {code}, what do I do?",
            "expected": [f"kestrel-{code.lower()}"],
        }
        for code in CODES[:12]
    ]
    rows[0]["facts"] = ["Push the sensor cable back into the socket marked S"]
    rows.append(
        {
            "id": "warranty",
            "question": "How long is the warranty on the thermostat?",
            "expected": ["https://help.kestrel.test/warranty"],
            "facts": ["The thermostat has a two-year warranty"],
        }
    )
    rows.append(
        {
            "id": "follow-up",
            "question": "And what does E7441 mean?",
            "expected": ["kestrel-e7441"],
            "conversation": [{"role": "user", "content": f"What does error {CODES[2]} mean?"}],
        }
    )
    rows.append(
        {"id": "mars", "question": "Can I pay for my order in bitcoin?", "unanswerable": True}
    )
    return rows


@pytest.fixture
def deployment(tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A deployment in ``tmp_path`` with the test's KB ingested by the real ingest; the CLI's
    environment points at it."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "CITEWALL_DATA_DIR": str(data),
        "CITEWALL_GENERATOR": "extractive",
        "CITEWALL_RERANKER_ENABLED": "false",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CITEWALL_DATABASE_URL", raising=False)
    monkeypatch.delenv("CITEWALL_CHROMA_URL", raising=False)
    get_settings.cache_clear()
    settings = load_settings()
    kb_file = tmp_path / "kestrel.jsonl"
    kb_file.write_text("".join(json.dumps(c) + "\n" for c in cards()), encoding="utf-8")
    report = ingest_paths([kb_file], settings, embedder=embedder, progress=False)
    assert not report.refused, report.summary()
    (tmp_path / "questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in questions()), encoding="utf-8"
    )
    yield settings
    get_settings.cache_clear()


#: What this KB reaches on its real deployment (served rrf_only: hit@1 0.714, hit@5 1.0, MRR 0.845
#: on the 14 answerable questions; served dense_only, without BM25: 0.571, 0.857, 0.687).
THRESHOLDS = [
    *("--min-hit-at-1", "0.6"),
    *("--min-hit-at-5", "1.0"),
    *("--min-mrr", "0.75"),
    *("--min-answered", "0.9"),
    *("--min-not-found-recall", "1.0"),
    *("--min-nugget-recall", "0.5"),
    *("--min-citation-precision", "0.8"),
    *("--max-dangling-rate", "0.0"),
]


def eval_kb(*argv: str) -> Any:
    result = CliRunner().invoke(app, ["eval", "kb", "questions.jsonl", *argv])
    assert "Traceback" not in result.output, result.output
    return result


def test_the_real_deployment_passes_and_one_without_its_lexical_index_fails(
    deployment: Any, tmp_path: Path
) -> None:
    real = eval_kb(*THRESHOLDS, "--save-baseline", "baseline.json", "--out", "real")
    assert real.exit_code == 0, real.output
    report = json.loads((tmp_path / "real" / "eval-kb.json").read_text(encoding="utf-8"))
    figures = report["metrics"]
    assert figures["retrieval.served.hit@5"] == 1.0
    assert report["retrieval"]["served"]["label"] == "rrf_only"
    assert figures["answers.answered_rate"] >= 0.9
    assert "answers.nugget_recall" in figures and "citations.citation_recall" in figures
    assert figures["dangling.rate"] == 0.0
    assert (
        (tmp_path / "real" / "eval-kb.md")
        .read_text(encoding="utf-8")
        .startswith("# citewall eval kb: PASS")
    )
    assert "default-src 'none'" in (tmp_path / "real" / "eval-kb.html").read_text("utf-8")
    # The same run against its own baseline: nothing moved.
    again = eval_kb("--baseline", "baseline.json", "--out", "again")
    assert again.exit_code == 0, again.output

    shutil.rmtree(deployment.bm25_dir)
    broken = eval_kb(*THRESHOLDS, "--baseline", "baseline.json", "--out", "broken")
    assert broken.exit_code == 1, broken.output
    assert "FAILED retrieval.served.hit@5" in broken.output
    assert "FAILED retrieval.served.mrr" in broken.output
    assert "REGRESSED retrieval.served.hit@5" in broken.output
    report = json.loads((tmp_path / "broken" / "eval-kb.json").read_text(encoding="utf-8"))
    assert report["retrieval"]["served"]["label"] == "dense_only"
    assert report["retrieval"]["bm25"]["label"].startswith(
        "unavailable: lexical index unavailable: no BM25 index"
    )


def test_a_malformed_questions_file_or_an_unknown_card_is_exit_2(
    deployment: Any, tmp_path: Path
) -> None:
    (tmp_path / "questions.jsonl").write_text(
        '{"question": "q", "expected": ["kestrel-warranty"]}\n{"question": "q", "expected": 3}\n',
        encoding="utf-8",
    )
    bad = eval_kb()
    assert bad.exit_code == 2
    assert "error: questions.jsonl:2: expected: must be a list of strings" in bad.output
    (tmp_path / "questions.jsonl").write_text(
        '{"question": "q", "expected": ["https://help.kestrel.test/nowhere"]}\n', encoding="utf-8"
    )
    missing = eval_kb("--baseline", "nowhere.json")
    assert missing.exit_code == 2
    assert "error: nowhere.json: no such baseline file" in missing.output
    unknown = eval_kb()
    assert unknown.exit_code == 2
    assert (
        "line 1: expected: 'https://help.kestrel.test/nowhere' is neither a card id"
        in unknown.output
    )
