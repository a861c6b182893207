"""The language a question is written in, and the honest reply to one the assistant cannot
answer in.

A knowledge base has one language (``CITEWALL_KB_LANGUAGE``, English by default), and retrieval
and the extractive answer only work in it: a question in Spanish finds nothing and would be
told "not found", and its asker could not tell why. A question confidently detected in another
language gets instead one sentence in the asker's language (English when the table below has
none for it) saying which language the assistant answers in.

Detection is py3langid (langid.py's model, shipped inside its wheel: nothing is downloaded),
restricted to ``LANGUAGES``, widely written languages: among all 97 of the model's, English
support questions ("how do i turn on gzip") read as Nigerian Pidgin at up to 0.75, and Spanish
ones spread over Galician and Portuguese. Short text, product names and code are where a
detector errs, and a wrong verdict would refuse an English question, so only a confident
verdict on enough words counts: the words checked leave out code spans, addresses and words
that look like names or identifiers (``SwiftFreight``, ``api_key``, ``v2``); at least
``MIN_WORDS`` words of two letters or more must remain (in a script written without spaces,
two characters count as a word), and the detector's probability must reach
``MIN_CONFIDENCE``. Both were chosen so that no English question of the labelled sets of the
demo, Zulip and FastAPI knowledge bases is taken for another language
(``tests/text/test_language.py`` holds that as a test; docs/answering.md has the figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from py3langid.langid import MODEL_FILE, LanguageIdentifier

from citewall.config import KbLanguage

#: Plain words a question must keep (after code, addresses and names are left out).
MIN_WORDS = 4
#: The detector's probability (normalised over ``LANGUAGES``) a verdict must reach. English
#: questions of the labelled sets reach at most 0.34 for another language; Spanish and French
#: ones of ``kb/eval/multilingual.dev.jsonl`` at least 0.72 and 0.99 for their own.
MIN_CONFIDENCE = 0.9
#: The languages a verdict may name (ISO 639-1).
LANGUAGES: tuple[str, ...] = (
    "en",
    "es",
    "fr",
    "de",
    "pt",
    "it",
    "nl",
    "ru",
    "zh",
    "ja",
    "ko",
    "ar",
    "pl",
    "tr",
    "sv",
    "da",
    "no",
    "fi",
    "cs",
    "uk",
    "el",
    "he",
    "hi",
    "id",
    "vi",
    "th",
    "ro",
    "hu",
)
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u0e00-\u0e7f]")

_CODE = re.compile(r"`[^`]*`|```.*?```", re.DOTALL)
_ADDRESS = re.compile(r"\S+://\S+|\S+@\S+|/\S+|\S+\.\S+\S")
#: A plain word: letters only (any script), lower-case after an optional capital.
_PLAIN = re.compile(r"^[^\W\d_][^\W\d_A-Z]*$")
_TOKEN = re.compile(r"[\w'’-]+")

#: Each language's name, in each language the replies are written in: ``NAMES[reply][kb]``.
NAMES: dict[str, dict[KbLanguage, str]] = {
    "en": {
        "en": "English",
        "es": "Spanish",
        "fr": "French",
        "de": "German",
        "pt": "Portuguese",
        "it": "Italian",
        "nl": "Dutch",
    },
    "es": {
        "en": "inglés",
        "es": "español",
        "fr": "francés",
        "de": "alemán",
        "pt": "portugués",
        "it": "italiano",
        "nl": "neerlandés",
    },
    "fr": {
        "en": "anglais",
        "es": "espagnol",
        "fr": "français",
        "de": "allemand",
        "pt": "portugais",
        "it": "italien",
        "nl": "néerlandais",
    },
    "de": {
        "en": "Englisch",
        "es": "Spanisch",
        "fr": "Französisch",
        "de": "Deutsch",
        "pt": "Portugiesisch",
        "it": "Italienisch",
        "nl": "Niederländisch",
    },
    "pt": {
        "en": "inglês",
        "es": "espanhol",
        "fr": "francês",
        "de": "alemão",
        "pt": "português",
        "it": "italiano",
        "nl": "neerlandês",
    },
    "it": {
        "en": "inglese",
        "es": "spagnolo",
        "fr": "francese",
        "de": "tedesco",
        "pt": "portoghese",
        "it": "italiano",
        "nl": "olandese",
    },
    "nl": {
        "en": "Engels",
        "es": "Spaans",
        "fr": "Frans",
        "de": "Duits",
        "pt": "Portugees",
        "it": "Italiaans",
        "nl": "Nederlands",
    },
}
#: The reply, per the asker's language; ``{kb}`` is the knowledge base's language.
REPLIES: dict[str, str] = {
    "en": "I can only answer in {kb}, the language of the knowledge base. "
    "Please ask your question in {kb}.",
    "es": "Solo puedo responder en {kb}, el idioma de la base de conocimientos. "
    "Por favor, haz tu pregunta en {kb}.",
    "fr": "Je ne peux répondre qu'en {kb}, la langue de la base de connaissances. "
    "Merci de poser votre question en {kb}.",
    "de": "Ich kann nur auf {kb} antworten, in der Sprache der Wissensdatenbank. "
    "Bitte stellen Sie Ihre Frage auf {kb}.",
    "pt": "Só consigo responder em {kb}, o idioma da base de conhecimento. "
    "Por favor, faça a sua pergunta em {kb}.",
    "it": "Posso rispondere solo in {kb}, la lingua della base di conoscenza. "
    "Per favore, fai la tua domanda in {kb}.",
    "nl": "Ik kan alleen in het {kb} antwoorden, de taal van de kennisbank. "
    "Stel je vraag alsjeblieft in het {kb}.",
}


@dataclass(frozen=True, slots=True)
class Detected:
    """The detector's verdict: an ISO 639-1 code and its probability."""

    language: str
    confidence: float


@cache
def load_detector() -> LanguageIdentifier:
    """The detector, loaded once per process (a second or so on a busy machine; the runtime
    loads it with the other models) and only read after that."""
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def plain_words(text: str) -> list[str]:
    """The words detection looks at: no code spans, addresses, names or identifiers.

    >>> plain_words("Can SwiftFreight void `label_v2` at https://x.io/a? ¿Cómo?")
    ['Can', 'void', 'at', 'Cómo']
    """
    text = _ADDRESS.sub(" ", _CODE.sub(" ", text))
    return [w for w in _TOKEN.findall(text) if _PLAIN.match(w.strip("'’-"))]


def _word_count(word: str) -> int:
    """How many words ``word`` counts for: none for a single letter ("X [1]. Y [2]." is no
    sentence), one per two characters of a script written without spaces."""
    return len(_UNSPACED.findall(word)) // 2 or int(len(word) > 1)


def detect_language(text: str) -> Detected | None:
    """The language of ``text``, or None when the verdict is not safe to act on (too few plain
    words, or a probability under ``MIN_CONFIDENCE``).

    >>> detect_language("¿Cuánto tarda el reembolso de un pedido devuelto?").language
    'es'
    >>> detect_language("Can I void a SwiftFreight label?") is None
    True
    """
    found = plain_words(text)
    if sum(_word_count(w) for w in found) < MIN_WORDS:
        return None
    language, confidence = load_detector().classify(" ".join(found).lower())
    if confidence < MIN_CONFIDENCE:
        return None
    return Detected(str(language), float(confidence))


def other_language_reply(text: str, kb_language: KbLanguage) -> str | None:
    """The honest reply to a question confidently written in a language other than the
    knowledge base's, in the asker's language where the table has it; None otherwise.

    >>> other_language_reply("¿Cuánto tarda el reembolso de un pedido devuelto?", "en")
    'Solo puedo responder en inglés, el idioma de la base de conocimientos. Por favor, ...'
    >>> other_language_reply("How long does a refund take?", "en") is None
    True
    """
    detected = detect_language(text)
    if detected is None or detected.language == kb_language:
        return None
    reply = detected.language if detected.language in REPLIES else "en"
    return REPLIES[reply].format(kb=NAMES[reply][kb_language])
