"""What a client could see as markup in text a member receives: an HTML parser's view and a
Markdown renderer's with raw HTML enabled. Shared by the boundary and streaming tests."""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt


class _MarkupSeen(HTMLParser):
    """Records everything an HTML parser treats as markup rather than text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.markup: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.markup.append(f"<{tag}>")

    def handle_endtag(self, tag: str) -> None:
        self.markup.append(f"</{tag}>")

    def handle_comment(self, data: str) -> None:
        self.markup.append("<!--")

    def handle_decl(self, decl: str) -> None:
        self.markup.append("<!decl")

    def handle_pi(self, data: str) -> None:
        self.markup.append("<?")

    def unknown_decl(self, data: str) -> None:
        self.markup.append("<![")


def html_markup(text: str) -> list[str]:
    """Markup an HTML parser finds in ``text``, also when text is placed after it."""
    parser = _MarkupSeen()
    parser.feed(text + "div>")  # a template's next characters must not complete a tag
    parser.close()
    return parser.markup


_MARKDOWN = MarkdownIt("commonmark", {"html": True})


def markdown_raw_html(text: str) -> list[str]:
    """Raw HTML a Markdown renderer with HTML enabled would pass through."""
    found = []
    for token in _MARKDOWN.parse(text):
        if token.type == "html_block":
            found.append(token.content)
        for child in token.children or []:
            if child.type == "html_inline":
                found.append(child.content)
    return found
