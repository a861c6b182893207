"""Small KB fixtures for ingest and retrieval tests (a dozen cards, embedded in ~1 s)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARDS: list[dict[str, Any]] = [
    {
        "id": "refund-annual",
        "title": "Refunds on annual plans",
        "body": "Annual plans can be refunded within 30 days of purchase. After that the unused "
        "months are credited to the account.",
        "url": "https://help.example.com/refunds",
        "license": "CC-BY-4.0",
    },
    {
        "id": "password-reset",
        "title": "Resetting your password",
        "body": "Click Forgot password on the sign-in page. A reset link valid for one hour is "
        "emailed to you.",
        "url": "https://help.example.com/password",
    },
    {
        "id": "label-printer",
        "title": "Thermal label printers",
        "body": "Switch the label format to 4x6 inches under Settings, Printing, to use a "
        "thermal printer such as a Zebra.",
    },
    {
        "id": "pb-angry-merchant",
        "title": "Playbook: calming an angry merchant CWLEAKT-x1",
        "body": "Acknowledge the delay, offer a shipping credit of up to 20 dollars and escalate "
        "to tier 2 if the parcel is lost.",
        "metadata": {"author": "ops", "team": "t2"},
    },
    {
        "id": "customs-forms",
        "title": "Customs forms for international parcels",
        "body": "International parcels need a CN22 form under 300 dollars and a CN23 form "
        "above that value. Parcelry fills them from the product catalogue.",
        "url": "https://help.example.com/customs",
    },
    {
        "id": "pickup-schedule",
        "title": "Scheduling a carrier pickup",
        "body": "Pickups can be booked until 2 pm for the same day. Open Shipments and choose "
        "Schedule pickup.",
        "url": "https://help.example.com/pickup",
    },
    {
        "id": "api-keys",
        "title": "Creating API keys",
        "body": "Admins create API keys under Settings, Developers. Keys are shown once; store "
        "them in a secret manager.",
    },
    {
        "id": "void-label",
        "title": "Voiding a shipping label",
        "body": "Unused labels can be voided within 28 days and the postage is refunded to the "
        "balance.",
        "url": "https://help.example.com/void",
    },
]


def write_jsonl(path: Path, cards: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cards), encoding="utf-8")
    return path
