"""Handoff to a person: the payload a helpdesk receives, its signature, and its delivery from
the stored outbox (docs/handoff.md)."""
