"""The outline of a card: whole sentences and whole list items, Markdown removed, words kept."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from citewall.citations.outline import outline, plain
from citewall.citations.units import card_units

_WORDS = st.sampled_from(
    ["refund", "label", "carrier", "Settings", "click", "open", "menu", "the", "your", "days"]
)


@dataclass(frozen=True)
class _Sentence:
    words: tuple[str, ...]
    style: str  # how one word is marked up: "", "**", "*", "`"

    def _words(self) -> list[str]:
        return [self.words[0][:1].upper() + self.words[0][1:], *self.words[1:]]

    def markdown(self) -> str:
        ws = self._words()
        ws[-1] = f"{self.style}{ws[-1]}{self.style}"  # marked up, the last word
        return " ".join(ws) + "."

    def unit(self) -> str:
        return " ".join(self._words()) + "."


_SENTENCE = st.builds(
    _Sentence,
    st.lists(_WORDS, min_size=2, max_size=7).map(tuple),
    st.sampled_from(["", "**", "*", "`"]),
)
_BLOCK = st.one_of(
    st.tuples(st.just("heading"), st.lists(_WORDS, min_size=1, max_size=4)),
    st.tuples(st.just("label"), st.sampled_from(["Desktop/Web", "Mobile", "Via settings"])),
    st.tuples(st.just("steps"), st.lists(_SENTENCE, min_size=1, max_size=5)),
    st.tuples(st.just("bullets"), st.lists(_SENTENCE, min_size=1, max_size=4)),
    st.tuples(st.just("paragraph"), st.lists(_SENTENCE, min_size=1, max_size=4)),
)


def _render(blocks: list[tuple[str, object]]) -> tuple[str, list[tuple[str, str, str]]]:
    """Markdown for ``blocks`` and the units expected: (text, kind, heading)."""
    lines: list[str] = []
    expected: list[tuple[str, str, str]] = []
    heading = ""
    for kind, value in blocks:
        if kind == "heading":
            heading = " ".join(value).capitalize()  # type: ignore[arg-type]
            lines += [f"## {heading}", ""]
        elif kind == "label":
            lines += [f"**{value}:**", ""]
        elif kind in ("steps", "bullets"):
            for n, s in enumerate(value, start=1):  # type: ignore[arg-type]
                lines += [f"{n}. {s.markdown()}" if kind == "steps" else f"* {s.markdown()}", ""]
                expected.append((s.unit(), "step" if kind == "steps" else "item", heading))
        else:
            lines += [" ".join(s.markdown() for s in value), ""]  # type: ignore[attr-defined]
            expected += [(s.unit(), "sentence", heading) for s in value]  # type: ignore[attr-defined]
        # a paragraph right after a list would continue its last item: keep blocks apart
        lines.append("")
    return "\n".join(lines), expected


@given(st.lists(_BLOCK, min_size=1, max_size=8))
def test_units_are_whole_sentences_and_items_without_markup(blocks: list[tuple[str, object]]):
    text, expected = _render(blocks)
    units = outline(text).units
    assert [(u.text, u.kind, u.heading) for u in units] == expected
    assert [u.position for u in units] == list(range(len(units)))
    assert card_units(text) == [u.text for u in units]
    for u in units:
        assert "**" not in u.text and "`" not in u.text and not u.text.startswith(("#", "1."))


@given(st.lists(_BLOCK, min_size=1, max_size=8))
def test_items_of_one_list_share_it_and_keep_their_order(blocks: list[tuple[str, object]]):
    text, _ = _render(blocks)
    units = outline(text).units
    lists: dict[int, list[int]] = {}
    for u in units:
        if u.kind != "sentence":
            assert u.list_index is not None
            lists.setdefault(u.list_index, []).append(u.position)
    for positions in lists.values():
        assert positions == list(range(positions[0], positions[0] + len(positions)))


def test_a_step_is_one_unit_whatever_its_punctuation() -> None:
    """Before: "(?)" ended a sentence, and "icon in the upper right corner of the app, and
    select Search filters." was quoted on its own."""
    text = (
        "**Desktop/Web:**\n\n1. Click the **help** (?) icon in the upper right corner of the "
        "app, and select **Search filters**.\n\n3. Toggle your preferred option for **Press ... "
        "to send**.\n\n**Via personal settings:**\n\n1. Go to **Settings > Preferences**."
    )
    units = outline(text).units
    assert [u.text for u in units] == [
        "Click the help (?) icon in the upper right corner of the app, and select Search filters.",
        "Toggle your preferred option for Press ... to send.",
        "Go to Settings > Preferences.",
    ]
    assert [u.tab for u in units] == ["Desktop/Web", "Desktop/Web", "Via personal settings"]
    assert units[0].list_index == units[1].list_index != units[2].list_index


def test_wrapped_lines_and_sentence_cuts_inside_a_paragraph() -> None:
    text = "Click the **help**\n(?) icon to open it. Then pick\na filter.\n\n```\ncode. More.\n```"
    assert card_units(text) == ["Click the help (?) icon to open it.", "Then pick a filter."]


def test_web_links_keep_their_words_other_links_stay() -> None:
    assert plain("Pick a [role](https://x.example/roles) now.") == "Pick a role now."
    assert (
        plain("Click [here](javascript:alert(1)) now.") == "Click [here](javascript:alert(1)) now."
    )
    assert plain("![logo](https://x.example/a.png) Hi.") == "Hi."


def test_underscores_and_stars_inside_a_word_are_text_not_emphasis() -> None:
    """A key prefix or a card descriptor is quoted as written (an answer once said "pklive")."""
    assert plain("Live keys start with pk_live_.") == "Live keys start with pk_live_."
    assert plain("It reads PARCELRY*SUB or PARCELRY*POSTAGE.") == (
        "It reads PARCELRY*SUB or PARCELRY*POSTAGE."
    )
    assert plain("Use `snake_case` and **bold _words_**.") == "Use snake_case and bold words."
