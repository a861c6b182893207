"""citewall.storage: SQLAlchemy 2 models, Alembic migrations, repositories and analytics SQL.

One concept per module (import from the module, not from this package):

- ``db``: ``make_engine(url)``, ``make_session_factory(engine)``, ``migrate(url_or_engine)``,
  ``downgrade(url_or_engine)``, ``check_database(engine)``, ``current_revision(engine)``,
  ``head_revision()``, ``open_database(url) -> Database(engine, sessions)``, ``begin_write``.
- ``models``: ``Base``, ``User``, ``ApiToken``, ``Conversation``, ``Message``,
  ``RetrievalEvent``, ``CardRow`` (its ``metadata`` column is the attribute ``meta``).
- ``users``: ``create_user``, ``add_token``, ``authenticate``, ``get_user``, ``list_users``,
  ``revoke_user``, ``revoke_token``.
- ``conversations``: ``get_conversation``, ``list_conversations`` (``ConversationSummary``,
  ``query`` search), ``rename_conversation``, ``hide_conversation``, ``list_messages``,
  ``list_events``.
- ``turns``: ``save_turn`` of one ``TurnRecord`` (its ``AnswerRecord``; events:
  ``RetrievalRecord``; creates the conversation with its first turn when given
  ``NewConversation``; ``regenerated_from`` answers the last question again), ``latest_turn``.
- ``sources``: ``StoredSource``, ``readable_sources`` (a stored row validated once, when read).
- ``exposure``: ``rows`` (exposure rows), ``reservations`` (``reserve_exposure``: the budget's
  locked count and a turn's reservation; ``release_exposure``), ``report`` (the admin
  report), ``answers`` (the answers behind one member's exposure).
- ``feedback``: ``put_feedback, ``delete_feedback``, ``feedback_of``; ``feedback_report``:
  the admin feedback report.
- ``cards``: ``card_hashes``, ``upsert_cards``, ``delete_cards``, ``get_card``, ``list_cards``,
  ``next_ingest_version`` (``upsert_cards`` returns ``UpsertCounts``).
- ``analytics``: ``retrieval_events``, ``entry_performance`` (with thumbs up/down per card).

Write functions commit (sessions come from ``make_session_factory``: objects stay readable
after commit) and raise ``StorageError`` after a rollback when the database fails.
"""
