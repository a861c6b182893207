"""Decompression bombs: a DOCX or PDF that is small on disk and huge once inflated is refused
with the file and the reason, before it inflates, and the rest of the folder still loads.

Memory and CPU are measured on a child process that loads the folder (``os.wait4`` gives that
child's own peak RSS and CPU time), against the same child's figures once its imports are done.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from citewall.config import DEFAULT_DOCUMENT_MAX_BYTES
from citewall.ingest.loaders import load_cards
from ingest.documents.files import (
    docx_bomb,
    docx_bytes,
    flate_bomb,
    lying_docx_bomb,
    pdf_bytes,
    pdf_with_contents,
    text_ops,
    write,
)

GOOD_TEXT = "Carriers refund a voided label within 21 days."
GOOD_PAGE = zlib.compress(text_ops(GOOD_TEXT))
MIB = 1024 * 1024
#: What a refusal may cost over the loader's own footprint, and its CPU time.
MAX_EXTRA_RSS_BYTES = 300 * MIB
MAX_CPU_S = 3.0
#: A runaway child (the unfixed code) is stopped here rather than hanging the suite.
_CHILD_CPU_LIMIT_S = 60

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from citewall.ingest.loaders import load_cards
print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "cpu_s": time.process_time()}), flush=True)
result = load_cards([Path(sys.argv[1])])
print(json.dumps({"cards": sorted(c.id for c in result.cards),
                  "errors": {Path(e.path).name: str(e) for e in result.errors}}), flush=True)
"""


@dataclass(frozen=True)
class ChildLoad:
    cards: list[str]
    errors: dict[str, str]
    extra_rss_bytes: int
    cpu_s: float


def _cpu_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (_CHILD_CPU_LIMIT_S, _CHILD_CPU_LIMIT_S))


def load_in_child(folder: Path) -> ChildLoad:
    """``load_cards([folder])`` in a fresh interpreter, with what it cost past its imports."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(folder)],
        stdout=subprocess.PIPE,
        env=env,
        preexec_fn=_cpu_limit,
    )
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, f"child exited {proc.returncode}: {out}"
    before, after = (json.loads(line) for line in out.splitlines())
    return ChildLoad(
        cards=after["cards"],
        errors=after["errors"],
        extra_rss_bytes=(usage.ru_maxrss - before["rss_kb"]) * 1024,
        cpu_s=usage.ru_utime + usage.ru_stime - before["cpu_s"],
    )


def _assert_bounded(load: ChildLoad) -> None:
    assert load.extra_rss_bytes < MAX_EXTRA_RSS_BYTES, f"{load.extra_rss_bytes / MIB:.0f} MiB"
    assert load.cpu_s < MAX_CPU_S, f"{load.cpu_s:.1f} s of CPU"


@pytest.fixture(scope="module")
def docx_512_mib() -> bytes:
    """About 550 KB on disk; word/document.xml inflates to 512 MiB."""
    return docx_bomb(512 * MIB)


def _with_good_documents(folder: Path) -> Path:
    write(folder / "good.docx", docx_bytes([(1, "Good"), (0, GOOD_TEXT)]))
    write(folder / "good.pdf", pdf_bytes([GOOD_TEXT], title="Good"))
    return folder


def test_a_docx_zip_bomb_is_refused_before_it_inflates(tmp_path: Path, docx_512_mib: bytes) -> None:
    kb = _with_good_documents(tmp_path / "kb")
    write(kb / "bomb.docx", docx_512_mib)
    assert len(docx_512_mib) < MIB

    load = load_in_child(kb)
    assert load.cards == ["good-docx", "good-pdf"]
    [why] = load.errors.values()
    assert why.startswith(f"{kb / 'bomb.docx'}: ")
    assert "word/document.xml inflates to 536,8" in why
    assert f"over the {DEFAULT_DOCUMENT_MAX_BYTES:,} byte limit" in why
    assert "CITEWALL_DOCUMENT_MAX_BYTES" in why
    _assert_bounded(load)


def test_a_docx_whose_central_directory_lies_is_cut_at_the_cap(
    tmp_path: Path, docx_512_mib: bytes
) -> None:
    kb = _with_good_documents(tmp_path / "kb")
    write(kb / "liar.docx", lying_docx_bomb(docx_512_mib, claimed_bytes=2000))

    load = load_in_child(kb)
    assert load.cards == ["good-docx", "good-pdf"]
    [why] = load.errors.values()
    assert why.startswith(f"{kb / 'liar.docx'}: ")
    assert "word/document.xml" in why and "2,000 bytes" in why, why
    _assert_bounded(load)


def test_a_docx_member_packed_past_the_ratio_cap_is_refused(tmp_path: Path) -> None:
    # 8 MiB of XML is well under the size limit, but no Word file packs its text 1000:1.
    write(tmp_path / "dense.docx", docx_bomb(8 * MIB))
    result = load_cards([tmp_path])
    assert result.cards == []
    [err] = result.errors
    assert "word/document.xml inflates to 8,38" in str(err)
    assert "more than 100 times its packed size" in str(err)


def test_a_pdf_flate_bomb_is_refused_before_it_inflates(tmp_path: Path) -> None:
    kb = _with_good_documents(tmp_path / "kb")
    # Content streams of text operators, each just under pypdf's own 75 MB default cap.
    streams = [GOOD_PAGE] + [flate_bomb(text_ops("refund"), 70 * MIB)] * 3
    write(kb / "streams.pdf", pdf_with_contents(streams))
    # One stream of 512 MiB of zeros: about 500 KB on disk.
    write(kb / "zeros.pdf", pdf_with_contents([GOOD_PAGE, flate_bomb(b"\0", 512 * MIB)]))

    load = load_in_child(kb)
    assert load.cards == ["good-docx", "good-pdf"]
    assert set(load.errors) == {"streams.pdf", "zeros.pdf"}
    for name, why in load.errors.items():
        assert why.startswith(f"{kb / name}: a PDF stream inflates or parses past ")
        assert "(pypdf: " in why
    _assert_bounded(load)


def test_pdf_pages_that_inflate_past_the_ratio_are_refused(tmp_path: Path) -> None:
    # Each stream is under the per-stream caps (8 MiB, 200,000 tokens) and the pages together
    # (20 MiB) under the document's 50 MiB, but they inflate from about 55 KB on disk.
    kb = _with_good_documents(tmp_path / "kb")
    page = flate_bomb(text_ops("refund"), MIB // 2)
    write(kb / "pages.pdf", pdf_with_contents([GOOD_PAGE] + [page] * 40))

    load = load_in_child(kb)
    assert load.cards == ["good-docx", "good-pdf"]
    [why] = load.errors.values()
    assert why.startswith(f"{kb / 'pages.pdf'}: page ")
    assert "more than 20 times the file's " in why and "a decompression bomb" in why
    _assert_bounded(load)


def test_pdf_content_past_the_document_limit_is_refused(tmp_path: Path) -> None:
    # Each page shows one long string of hex (one token; it packs about 2:1), so the ratio
    # rule holds and only the document's limit refuses it.
    page = zlib.compress(text_ops(random.Random(4).randbytes(2 * MIB).hex()))
    write(tmp_path / "pages.pdf", pdf_with_contents([GOOD_PAGE] + [page] * 3))
    result = load_cards([tmp_path], document_max_bytes=10 * MIB)
    assert result.cards == []
    [err] = result.errors
    assert "page 4's content brings the pages to 12,58" in str(err), str(err)
    assert f"over the {10 * MIB:,} byte limit (CITEWALL_DOCUMENT_MAX_BYTES)" in str(err)
