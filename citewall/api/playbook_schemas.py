"""Wire schemas of the playbooks written in the admin pages and their versions.

The form's fields are checked by the ingest's own card validation (``ingest.playbooks``), not
here, so a refused playbook gets the same reasons as a refused card file: a 422 whose
``detail`` lists ``{"loc": ["body", field], "msg", "type": "card"}`` problems, the shape of
every other 422.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from citewall.storage.card_versions import PlaybookVersion

_STRICT = ConfigDict(extra="forbid")


class PlaybookWrite(BaseModel):
    """A playbook's fields as the form sends them (internal: a playbook has no url)."""

    model_config = _STRICT

    title: str = Field(max_length=500)
    #: Staff notes in Markdown; a ``## Tell the member`` section becomes the reply.
    body: str
    #: What a member may be told (plain prose), or None.
    reply: str | None = None
    audiences: list[str] = Field(default_factory=list, max_length=20)


class PlaybookCreate(PlaybookWrite):
    id: str = Field(max_length=200)


class PlaybookUpdate(PlaybookWrite):
    #: The version the edit began from: a save on top of a newer one is refused (409).
    base_version: int = Field(ge=1)


class PlaybookRollback(BaseModel):
    model_config = _STRICT

    #: The earlier version whose fields become the next version.
    version: int = Field(ge=1)


class PlaybookVersionPublic(BaseModel):
    """One saved version, with who saved it and when."""

    model_config = _STRICT

    id: str
    version: int
    title: str
    body: str
    reply: str | None
    audiences: list[str]
    saved_by: str
    saved_at: datetime | None
    #: The version a rollback restored (None: written in the form).
    restored_from: int | None


class PlaybookPublic(PlaybookVersionPublic):
    """A playbook's newest version and whether it is served."""

    disabled: bool
    #: Whether the catalogue holds it (False: its source was removed; saving serves it again).
    in_catalogue: bool


def version_public(version: PlaybookVersion) -> PlaybookVersionPublic:
    return PlaybookVersionPublic(
        id=version.card_id,
        version=version.version,
        title=version.title,
        body=version.body,
        reply=version.reply,
        audiences=list(version.audiences),
        saved_by=version.author,
        saved_at=version.created_at,
        restored_from=version.restored_from,
    )


def playbook_public(
    version: PlaybookVersion, *, disabled: bool, in_catalogue: bool
) -> PlaybookPublic:
    return PlaybookPublic(
        **version_public(version).model_dump(), disabled=disabled, in_catalogue=in_catalogue
    )
