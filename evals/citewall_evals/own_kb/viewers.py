"""Who ``citewall eval kb`` asks each question as: a member of the run's ``--group`` groups
(none given: a member in no group), or of the question's own ``groups``.

The one viewer of a question serves both halves of its measurement: the pipeline answers it as
that member, and every retrieval path is scored with ``kb.audiences.retrievable_for`` of the
same viewer, the rule every member's request goes through. So the retrieval figures describe
the cards the answers could draw on, never a staff view the members do not have.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from citewall.errors import UserError
from citewall.kb.audiences import Viewer, audience_names, retrievable_for
from citewall_evals.own_kb.questions import KbQuestion


def run_groups(names: Sequence[str]) -> tuple[str, ...]:
    """The ``--group`` names as a sorted tuple without duplicates; ``UserError`` naming the first
    that is not a group name (``kb.audiences.audience_problem``).

    >>> run_groups(["partners", "enterprise", "partners"])
    ('enterprise', 'partners')
    """
    try:
        return audience_names(list(names))
    except ValueError as exc:
        raise UserError(f"--group: {exc}") from None


def member_label(groups: Iterable[str]) -> str:
    """How a report names a member of ``groups``.

    >>> member_label(["partners", "enterprise"]), member_label([])
    ('a member of enterprise, partners', 'a member in no group')
    """
    names = sorted(groups)
    return f"a member of {', '.join(names)}" if names else "a member in no group"


@dataclass(frozen=True, slots=True)
class RunViewers:
    """The run's groups (``--group``); a question with ``groups`` is asked with its own."""

    groups: tuple[str, ...] = ()

    def groups_of(self, q: KbQuestion) -> tuple[str, ...]:
        return self.groups if q.groups is None else q.groups

    def of(self, q: KbQuestion) -> Viewer:
        return Viewer.member(self.groups_of(q))

    def describe(self, questions: Sequence[KbQuestion]) -> str:
        """The report header's line: who the run measured as."""
        flag = "--group" if self.groups else "no --group"
        text = f"{member_label(self.groups)} ({flag})"
        own = sum(1 for q in questions if q.groups is not None and q.groups != self.groups)
        if own:
            text += f"; {own} question{'s' if own != 1 else ''} as their own groups (groups field)"
        return text


def outside_warning(
    q: KbQuestion,
    expected: Sequence[str],
    audiences: Mapping[str, Sequence[str]],
    viewers: RunViewers,
) -> str | None:
    """Why ``q`` cannot be answered from its expected cards by its viewer, or None: every
    expected card the viewer's filter refuses, with the groups it is for."""
    cards = retrievable_for(viewers.of(q))
    hidden = [c for c in expected if not cards.allows(audiences.get(c, ()))]
    if not hidden:
        return None
    named = ", ".join(f"{c} (for {', '.join(audiences[c])})" for c in hidden)
    noun = "card" if len(hidden) == 1 else "cards"
    verb = "is" if len(hidden) == 1 else "are"
    return (
        f"{q.id}: expected {noun} {named} {verb} outside the groups of this run "
        f"({member_label(viewers.groups_of(q))}): scored as a miss; run with --group, "
        "or give the question the asking member's groups"
    )
