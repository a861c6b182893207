"""Document card ids: valid card ids, stable (the same set of files gives the same ids in any
order), distinct for distinct (path, anchor), even when slugs collide or run long."""

from __future__ import annotations

import re
from random import Random

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.ingest.documents.ids import MAX_ID_LENGTH, SectionKey, anchors, assign_ids

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

#: Path parts that slug alike ("A" and "a", "é" and "e", "日" and nothing) and run long.
_part = st.text(alphabet=st.sampled_from("aAbB-_. éeü日1"), min_size=1, max_size=60)
_paths = st.lists(_part, min_size=1, max_size=5).map("/".join)
_anchors = st.one_of(st.none(), st.text(max_size=80).map(lambda heading: anchors([heading])[0]))
_keys = st.lists(st.builds(SectionKey, _paths, _anchors), max_size=30)


@hsettings(max_examples=examples(200))
@given(_keys, st.randoms())
def test_ids_are_valid_stable_and_distinct(keys: list[SectionKey], rnd: Random) -> None:
    ids = assign_ids(keys)
    assert set(ids) == set(keys)
    for card_id in ids.values():
        assert ID_PATTERN.match(card_id) and len(card_id) <= MAX_ID_LENGTH, card_id
    assert len(set(ids.values())) == len(ids)
    shuffled = list(keys)
    rnd.shuffle(shuffled)
    assert assign_ids(shuffled) == ids


def test_collisions_and_long_paths_get_a_hash_and_the_rest_stay_plain() -> None:
    long_path = "/".join(["a-very-long-folder-name"] * 12) + "/guide.md"
    keys = [
        SectionKey("Guide.pdf", None),
        SectionKey("guide.pdf", None),
        SectionKey("guide.pdf", "steps"),
        SectionKey(long_path, None),
    ]
    ids = assign_ids(keys)
    assert ids[keys[2]] == "guide-pdf--steps"
    assert ids[keys[0]] != ids[keys[1]]
    assert all(re.fullmatch(r"guide-pdf_[0-9a-f]{10}", ids[k]) for k in keys[:2])
    assert len(ids[keys[3]]) == MAX_ID_LENGTH and ids[keys[3]][-11] == "_"
