"""The inflation rule and the DOCX size check, as pure functions of the stated sizes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citewall.ingest.documents.docx_package import DOCX_MAX_RATIO, MemberSize, size_problem
from citewall.ingest.documents.inflation import RATIO_FLOOR_BYTES, packed_too_tightly

sizes = st.integers(min_value=0, max_value=10**10)
members = st.lists(
    st.builds(MemberSize, st.text(min_size=1, max_size=20), sizes, sizes), max_size=8
)


@given(sizes, sizes, st.integers(min_value=1, max_value=1000))
def test_only_what_inflates_past_the_floor_and_the_ratio_is_too_tight(
    inflated: int, packed: int, ratio: int
) -> None:
    tight = packed_too_tightly(inflated, packed, ratio)
    assert tight == (inflated > RATIO_FLOOR_BYTES and inflated > ratio * packed)
    # Packing the same bytes less tightly never makes it worse.
    assert not tight or packed_too_tightly(inflated, packed // 2, ratio)


@given(members, st.integers(min_value=1, max_value=10**9))
def test_a_size_problem_names_a_member_and_exactly_the_bad_archives_have_one(
    listed: list[MemberSize], max_bytes: int
) -> None:
    problem = size_problem(listed, max_bytes)
    too_big = sum(m.inflated for m in listed) > max_bytes
    too_tight = any(packed_too_tightly(m.inflated, m.packed, DOCX_MAX_RATIO) for m in listed)
    assert (problem is not None) == (too_big or too_tight)
    if problem is not None:
        assert any(problem.startswith(f"{m.name} inflates to {m.inflated:,} bytes") for m in listed)
