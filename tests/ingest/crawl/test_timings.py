"""A crawl's stage times are wall time: with pages on several threads at once, a stage never
exceeds the crawl's wall time, and the summary never shows a stage longer than its total."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from citewall.ingest.crawl.run import SiteIngestReport
from citewall.ingest.crawl.site import CrawlResult
from citewall.ingest.crawl.timings import CrawlTimings, covered_seconds
from citewall.ingest.pipeline import IngestReport

intervals = st.lists(
    st.tuples(st.floats(0, 100, allow_nan=False), st.floats(0, 50, allow_nan=False)).map(
        lambda p: (p[0], p[0] + p[1])
    ),
    max_size=30,
)


@given(intervals)
def test_covered_time_counts_overlaps_once(spans: list[tuple[float, float]]) -> None:
    covered = covered_seconds(spans)
    total = sum(end - start for start, end in spans)
    assert covered <= total + 1e-9
    assert covered >= max((end - start for start, end in spans), default=0.0) - 1e-9
    if spans:
        assert covered <= max(e for _, e in spans) - min(s for s, _ in spans) + 1e-9
    # Order does not matter, and a span inside another adds nothing.
    assert covered_seconds(reversed(spans)) == covered
    if spans:
        start, end = spans[0]
        assert abs(covered_seconds([*spans, (start, (start + end) / 2)]) - covered) < 1e-9


def test_the_summary_never_shows_a_stage_longer_than_the_total() -> None:
    """Four threads extracting 4.5 s each inside 6 s summed to "extraction 18.0 s" beside
    "total 8.3 s". The summary shows wall time: 6.0 s."""
    timings = CrawlTimings(wall_s=8.0, pages=4)
    for i in range(4):
        timings.fetched(0.1 * i, 0.1 * i + 1.0)
        timings.extracted(1.0 + 0.5 * i, 5.5 + 0.5 * i)
    assert timings.extract_s == 18.0  # thread-seconds, as the crawl benchmark reports them
    report = SiteIngestReport(CrawlResult([], timings), IngestReport(), total_s=8.3)
    summary = report.summary()
    stages = {
        name: float(seconds)
        for name, seconds in re.findall(r"(fetching|extraction|total) ([\d.]+) s", summary)
    }
    assert stages == {"fetching": 1.3, "extraction": 6.0, "total": 8.3}, summary
    assert all(seconds <= stages["total"] for seconds in stages.values())
