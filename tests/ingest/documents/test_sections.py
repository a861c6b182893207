"""How headings cut a long document: H1/H2 first, H3 only inside a section over the cap,
paragraph parts when there is no heading left, small sections joined to a neighbour."""

from __future__ import annotations

from citewall.ingest.documents.markdown_sections import split_markdown
from citewall.ingest.documents.sections import MAX_WORDS, MIN_WORDS
from ingest.documents.files import words


def _shape(markdown: str) -> list[tuple[str | None, str | None, int]]:
    return [
        (a.anchor, a.section.heading, a.section.words) for a in split_markdown(markdown).sections
    ]


def test_a_long_section_is_cut_at_its_h3_headings_and_a_short_one_is_not() -> None:
    md = (
        f"## Short\n\n{words('short', 100)}\n\n### Kept inside\n\n{words('kept', 100)}\n\n"
        f"## Long\n\n{words('lead', 100)}\n\n### One\n\n{words('one', 400)}\n\n"
        f"### Two\n\n{words('two', 400)}\n"
    )
    assert _shape(md) == [
        ("short", "Short", 100 + 3 + 100),  # "### Kept inside" stays a line of its text
        ("long", "Long", 100),
        ("long-one", "Long / One", 400),
        ("long-two", "Long / Two", 400),
    ]


def test_a_section_without_sub_headings_is_cut_at_paragraphs_into_parts() -> None:
    paragraphs = "\n\n".join(words(f"p{i}", 250) for i in range(5))
    shape = _shape(f"## Steps\n\n{paragraphs}\n\n## Next\n\n{words('next', 100)}\n")
    assert shape == [
        ("steps", "Steps", 500),
        ("steps-part-2", "Steps (part 2)", 500),
        ("steps-part-3", "Steps (part 3)", 250),
        ("next", "Next", 100),
    ]
    assert all(n <= MAX_WORDS for _, _, n in shape)


def test_small_sections_join_a_neighbour_and_empty_headings_vanish() -> None:
    md = (
        f"Intro line.\n\n## Part A\n\n## A1\n\n{words('a', 400)}\n\n"
        f"## Footnote\n\nTiny.\n\n## B\n\n{words('b', 400)}\n"
    )
    shape = _shape(md)
    assert [a for a, _, _ in shape] == ["a1", "b"]
    assert all(n >= MIN_WORDS for _, _, n in shape)
    first = split_markdown(md).sections[0].section.body
    assert first.startswith("Intro line.\n\n") and first.endswith("## Footnote\n\nTiny.")
