"""The language of a question: no English question of the labelled sets is taken for another
language, translated questions are, and the reply is in the asker's language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.config import KbLanguage, load_settings
from citewall.errors import ConfigError
from citewall.text.language import (
    MIN_WORDS,
    NAMES,
    REPLIES,
    detect_language,
    other_language_reply,
    plain_words,
)

ROOT = Path(__file__).resolve().parents[2]
MULTILINGUAL = ROOT / "kb" / "eval" / "multilingual.dev.jsonl"


def english_questions() -> list[str]:
    """Every question asked in the labelled sets of the demo, Zulip and FastAPI KBs."""
    out: list[str] = []
    for path in sorted((ROOT / "kb" / "eval").rglob("*.jsonl")):
        if path == MULTILINGUAL:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            out.extend(row[k] for k in ("question", "first", "followup") if k in row)
    return out


def test_no_english_question_of_the_labelled_sets_is_taken_for_another_language() -> None:
    questions = english_questions()
    assert len(questions) > 900
    wrong = [q for q in questions if other_language_reply(q, "en") is not None]
    assert wrong == []


def test_translated_questions_are_recognised() -> None:
    rows = [json.loads(line) for line in MULTILINGUAL.read_text(encoding="utf-8").splitlines()]
    for lang, at_least in (("es", 0.9), ("fr", 1.0)):
        found = [detect_language(r[lang]) for r in rows]
        hits = sum(d is not None and d.language == lang for d in found)
        # A miss is a question retrieved as usual, never a wrong language's reply.
        assert all(d is None or d.language == lang for d in found)
        assert hits >= at_least * len(rows), (lang, hits)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("¿Cuánto tarda el reembolso de un pedido devuelto?", "es"),
        ("Combien de temps faut-il pour être remboursé d'une commande retournée ?", "fr"),
        ("Wie lange dauert eine Rückerstattung für eine zurückgesandte Bestellung?", "de"),
        ("Quanto tempo demora o reembolso de uma encomenda devolvida?", "pt"),
        ("Quanto tempo ci vuole per il rimborso di un ordine restituito?", "it"),
        ("Hoe lang duurt het voordat ik mijn geld terugkrijg voor een retour?", "nl"),
    ],
)
def test_the_reply_is_in_the_askers_language(question: str, language: str) -> None:
    assert other_language_reply(question, "en") == REPLIES[language].format(
        kb=NAMES[language]["en"]
    )


def test_a_language_without_a_reply_gets_the_english_one() -> None:
    reply = other_language_reply("注文の返金にはどれくらい時間がかかりますか？", "en")
    assert reply == REPLIES["en"].format(kb="English")


def test_the_reply_names_the_configured_kb_language() -> None:
    assert other_language_reply("How long does a refund take for a returned order?", "es") == (
        "I can only answer in Spanish, the language of the knowledge base. "
        "Please ask your question in Spanish."
    )
    assert other_language_reply("¿Cuánto tarda el reembolso de un pedido devuelto?", "es") is None


@pytest.mark.parametrize(
    "text",
    [
        "¿hola, qué tal?",
        "merci beaucoup",
        '`curl -X POST https://api.parcelry.com/v1/labels -d \'{"carrier": "swiftfreight"}\'`',
        "SwiftFreight NorthPost CartWise ShopLane IOSS DDP",
        "Shopify Zulip FastAPI Uvicorn Pydantic",
        "Was ist",
        "X [99]. Y [0]. Z [-1]. W [1]. V [4-5].",
    ],
)
def test_short_text_names_and_code_are_left_alone(text: str) -> None:
    assert other_language_reply(text, "en") is None


def test_plain_words_leave_out_code_addresses_and_identifiers() -> None:
    text = "Can `label_v2` reach https://x.io/a or me@x.io, SwiftFreight? IOSS v2 ok"
    assert plain_words(text) == ["Can", "reach", "or", "ok"]


@given(
    st.lists(
        st.text(st.characters(whitelist_categories=("Ll", "Lu")), min_size=1, max_size=12),
        max_size=MIN_WORDS - 1,
    )
)
def test_fewer_than_min_words_is_never_judged(parts: list[str]) -> None:
    assert detect_language(" ".join(parts)) is None


@given(st.text(max_size=200), st.sampled_from(sorted(NAMES["en"])))
def test_any_text_gets_a_table_reply_or_none(text: str, kb: KbLanguage) -> None:
    reply = other_language_reply(text, kb)
    assert reply is None or reply in {REPLIES[r].format(kb=NAMES[r][kb]) for r in REPLIES}


def test_a_kb_language_without_a_reply_is_a_clear_setting_error() -> None:
    with pytest.raises(ConfigError, match="CITEWALL_KB_LANGUAGE: Input should be 'en'"):
        load_settings(kb_language="xx")
