"""The member's view of a streamed answer, side by side: what building it costs as an answer
grows, read whole on every delta (``prose_only`` and the hold-back rule's code-span scan over
everything so far) against read incrementally as the stream does (``IncrementalProse``, which
re-reads only the text after its last finished line, and ``OpenCode``, which scans only the new
text).

    python benchmarks/streaming.py                      # 250, 1,000 and 4,000 words
    python benchmarks/streaming.py --words 500 8000 --rounds 5

The answer is real text: sentences of the demo KB's cards, each followed by a ``[n]`` marker,
in paragraphs and a numbered list, streamed in deltas of ``--delta-chars`` characters (a model's
token is about four), through the product's ``ProseStream`` (``api/prose_stream.py``) both
times. Each cell is the median of ``--rounds`` rounds, the two interleaved in every round; the
last column is the incremental cost per thousand deltas, flat when the cost is linear in the
answer's length. The run fails (exit 1) if the two ever emit different prose.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from citewall.api.prose_stream import ProseStream, open_code_start
from citewall.boundary.prose import IncrementalProse, prose_only
from citewall.citations.sentences import split_sentences
from citewall.ingest.loaders import load_cards
from citewall_evals.data import DEMO_CARDS


def demo_sentences() -> list[str]:
    """Every sentence of the demo KB's cards, in file order."""
    return [s for card in load_cards([DEMO_CARDS]).cards for s in split_sentences(card.body)]


def answer_text(sentences: list[str], words: int) -> str:
    """About ``words`` words of answer: marked sentences, three to a paragraph, every fourth
    paragraph a numbered list."""
    paragraphs: list[str] = []
    count, i = 0, 0
    while count < words:
        group = [sentences[(i + k) % len(sentences)] for k in range(3)]
        marked = [f"{s} [{(i + k) % 5 + 1}]" for k, s in enumerate(group)]
        i += 3
        count += sum(len(s.split()) for s in group)
        if len(paragraphs) % 4 == 3:
            paragraphs.append("\n".join(f"{n}. {s}" for n, s in enumerate(marked, 1)))
        else:
            paragraphs.append(" ".join(marked))
    return "\n\n".join(paragraphs)


def deltas(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def stream_ms(text: str, size: int, *, incremental: bool) -> tuple[float, str]:
    """Milliseconds to feed the whole answer through a ``ProseStream``, and what it emitted."""
    if incremental:
        stream = ProseStream(IncrementalProse())
    else:
        stream = ProseStream(prose_only, lambda: open_code_start)
    shown: list[str] = []
    t0 = time.perf_counter()
    for delta in deltas(text, size):
        shown.append(stream.feed(delta))
    shown.append(stream.finish(prose_only(text)))
    return (time.perf_counter() - t0) * 1000.0, "".join(shown)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, nargs="+", default=[250, 1000, 4000])
    parser.add_argument("--delta-chars", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="write JSON here too")
    args = parser.parse_args()
    sentences = demo_sentences()
    rows: list[dict[str, float | int]] = []
    print(
        "| words | deltas | read whole, ms | read incrementally, ms | ratio | "
        "incremental, ms per 1,000 deltas |"
    )
    print("|---|---|---|---|---|---|")
    for words in args.words:
        text = answer_text(sentences, words)
        whole: list[float] = []
        incremental: list[float] = []
        for _ in range(args.rounds):
            ms_whole, shown_whole = stream_ms(text, args.delta_chars, incremental=False)
            ms_incr, shown_incr = stream_ms(text, args.delta_chars, incremental=True)
            if shown_whole != shown_incr:
                print(f"the two views differ at {words} words", file=sys.stderr)
                return 1
            whole.append(ms_whole)
            incremental.append(ms_incr)
        row = {
            "words": words,
            "deltas": -(-len(text) // args.delta_chars),
            "whole_ms": statistics.median(whole),
            "incremental_ms": statistics.median(incremental),
        }
        rows.append(row)
        print(
            f"| {words:,} | {row['deltas']:,} | {row['whole_ms']:,.1f} | "
            f"{row['incremental_ms']:,.1f} | {row['whole_ms'] / row['incremental_ms']:.1f}x | "
            f"{row['incremental_ms'] * 1000 / row['deltas']:,.1f} |",
            flush=True,
        )
    if args.out is not None:
        args.out.write_text(json.dumps({"delta_chars": args.delta_chars, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
