/** The retrieval-event browser (admin): filter by path, card and period, page through rows. */
import { useState, type FormEvent, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { RetrievalEventFilter } from "../api/types";
import { LoadState } from "../components/LoadState";
import { Pager } from "../components/Pager";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";
import { useLoad } from "../components/useLoad";
import { EventsTable } from "./EventsTable";

const PAGE = 50;

type PathFilter = NonNullable<RetrievalEventFilter["hybrid_path"]> | "";

export function AdminEvents(props: { client: ApiClient }): ReactNode {
  const [cardDraft, setCardDraft] = useState("");
  const [cardId, setCardId] = useState("");
  const [path, setPath] = useState<PathFilter>("");
  const [lookback, setLookback] = useState<Lookback>("all");
  const [offset, setOffset] = useState(0);
  const state = useLoad(
    () =>
      props.client.retrievalEvents({
        card_id: cardId || undefined,
        hybrid_path: path || undefined,
        since: sinceFor(lookback),
        limit: PAGE,
        offset,
      }),
    [props.client, cardId, path, lookback, offset],
  );
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    setOffset(0);
    setCardId(cardDraft.trim());
  };
  return (
    <section className="admin-page">
      <h1>Retrieval events</h1>
      <form className="filters" onSubmit={submit}>
        <label htmlFor="ev-card">Card id</label>
        <input id="ev-card" value={cardDraft} onChange={(e) => setCardDraft(e.target.value)} />
        <label htmlFor="ev-path">Path</label>
        <select
          id="ev-path"
          value={path}
          onChange={(e) => {
            setOffset(0);
            setPath(e.target.value as PathFilter);
          }}
        >
          <option value="">Any</option>
          <option value="full">full</option>
          <option value="rrf_only">rrf_only</option>
          <option value="dense_only">dense_only</option>
          <option value="none">none (nothing retrieved)</option>
        </select>
        <LookbackSelect
          id="ev-window"
          label="Period"
          value={lookback}
          onChange={(value) => {
            setOffset(0);
            setLookback(value);
          }}
        />
        <button type="submit">Apply</button>
      </form>
      <LoadState state={state} what="retrieval events">
        {(events) => (
          <>
            <EventsTable
              events={events}
              linkConversations
              empty={
                offset > 0
                  ? "No more retrieval events."
                  : cardId || path || lookback !== "all"
                    ? "No retrieval events match these filters."
                    : "No retrieval events yet: they are recorded as members ask questions."
              }
            />
            <Pager
              offset={offset}
              pageSize={PAGE}
              total={null}
              shown={events.length}
              onChange={setOffset}
            />
          </>
        )}
      </LoadState>
    </section>
  );
}
