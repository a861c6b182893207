"""Internal documents (HTML, PDF, DOCX, Markdown without front matter) as KB cards.

A document becomes one card, or one card per section when headings (or a PDF's outline or
pages) split it; cards are internal unless a sidecar names a URL that passes ``url_problem``.
``load.load_documents`` is the entry point; ``citewall.ingest.loaders`` dispatches to it.
"""
