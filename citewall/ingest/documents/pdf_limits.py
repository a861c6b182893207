"""What pypdf may inflate and parse for one PDF: its limits, set here and nowhere else.

pypdf (7.x) bounds each stream through ``pypdf.Configuration``, applied per read with
``apply_configuration`` (a context variable, so nothing outside ingest changes). Its defaults
(75 MB per decompressed stream, 2,000,000 tokens per content stream) let a 640 KB file of
three FlateDecode content streams cost 7 s of CPU and 340 MB; text extraction reads about
1.8 MB of content per second, so the limits below are set for text, not print production:

* 8 MiB per decoded stream, whatever the filter: a page of dense text is about 7 KB of
  content, so this is a thousand pages' worth on one page.
* 200,000 tokens per content stream (about 0.5 s to parse): dense text is about 2,000 a page.
* 50 form XObjects per page: headers, footers and logos are a handful; past 50, pypdf skips
  the rest of the page's forms (logged) rather than parse one form thousands of times.

A document's pages together may hold ``CITEWALL_DOCUMENT_MAX_BYTES`` of decoded content (the
same limit as its file size and a DOCX's inflated members), and at most ``PDF_MAX_RATIO`` times
the file's size once past a MiB; ``convert_pdf`` counts that page by page, before each page's
text is extracted.
"""

from __future__ import annotations

from pypdf import Configuration

#: Decoded bytes one stream may inflate to, for every filter pypdf decodes.
STREAM_MAX_BYTES = 8 * 1024 * 1024
#: Tokens (operands, operators, array and dictionary elements) one content stream may hold.
STREAM_MAX_TOKENS = 200_000
#: Form XObjects drawn per page whose text is extracted.
FORMS_PER_PAGE = 50

#: Highest ratio of the pages' decoded content to the file's size. Text and drawing operators
#: deflate about 3-10:1 and the file also holds fonts and images (a reportlab text PDF is
#: about 3:1); parsing costs about 1 s per MB of operators, so 20:1 keeps a small file's read
#: to about a second per 50 KB of file.
PDF_MAX_RATIO = 20

PDF_LIMITS = Configuration(
    zlib_maximum_output_length=STREAM_MAX_BYTES,
    lzw_maximum_output_length=STREAM_MAX_BYTES,
    run_length_maximum_output_length=STREAM_MAX_BYTES,
    brotli_maximum_output_length=STREAM_MAX_BYTES,
    jbig2_maximum_output_length=STREAM_MAX_BYTES,
    array_based_stream_maximum_output_length=STREAM_MAX_BYTES,
    image_maximum_buffer_size=STREAM_MAX_BYTES,
    # Chained filters: the bytes all of one stream's filters may produce together.
    stream_decoding_work_maximum_length=4 * STREAM_MAX_BYTES,
    stream_parsing_work_maximum_count=STREAM_MAX_TOKENS,
    xform_maximum_invocations_per_extraction=FORMS_PER_PAGE,
    # No legacy module constants are changed anywhere: skip pypdf's check for them.
    disable_legacy_handling=True,
)
