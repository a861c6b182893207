/**
 * The KB card catalogue (admin): search by text, filter external/internal, page through. The
 * search is in the address (`/admin/cards?q=refund`): a reload and a link show the same. A
 * disabled card (served to nobody) carries a "disabled" badge.
 */
import { useState, type FormEvent, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { Card, CardPage } from "../api/types";
import { LoadState } from "../components/LoadState";
import { Pager } from "../components/Pager";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { safeHttpUrl } from "../security/safeUrl";
import { CardLink, replyPreview, updatedAt } from "./AdminCard";
import { DataTable, type Column } from "./DataTable";
import { JsonText } from "./JsonText";

const PAGE = 25;

type Kind = "all" | "external" | "internal";

/** What the empty state says: why nothing is listed. */
export function noCardsText(q: string, kind: Kind): string {
  const which = kind === "all" ? "cards" : `${kind} cards`;
  if (q) return `No ${which} match “${q}”.`;
  return kind === "all" ? "The knowledge base has no cards yet." : `There are no ${which}.`;
}

/** The search text in the page's address (`?q=`), trimmed. */
export function searchFromAddress(search: string): string {
  return (new URLSearchParams(search).get("q") ?? "").trim();
}

export function AdminCards(props: { client: ApiClient }): ReactNode {
  const [q, setQ] = useState(() => searchFromAddress(window.location.search));
  const [draft, setDraft] = useState(q);
  const [kind, setKind] = useState<Kind>("all");
  const [offset, setOffset] = useState(0);
  const external = kind === "all" ? null : kind === "external";
  const state = useLoad(
    () => props.client.adminCards({ q, external, limit: PAGE, offset }),
    [props.client, q, external, offset],
  );
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    setOffset(0);
    const text = draft.trim();
    setQ(text);
    const query = text ? `?${new URLSearchParams({ q: text }).toString()}` : "";
    window.history.replaceState(window.history.state, "", `${window.location.pathname}${query}`);
  };
  return (
    <section className="admin-page">
      <h1>Knowledge base cards</h1>
      <form className="filters" role="search" onSubmit={submit}>
        <label htmlFor="card-q">Search</label>
        <input id="card-q" type="search" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <label htmlFor="card-kind">Kind</label>
        <select
          id="card-kind"
          value={kind}
          onChange={(e) => {
            setOffset(0);
            setKind(e.target.value as Kind);
          }}
        >
          <option value="all">All</option>
          <option value="external">External</option>
          <option value="internal">Internal</option>
        </select>
        <button type="submit">Search</button>
      </form>
      <LoadState state={state} what="cards">
        {(page) => <CardsTable page={page} empty={noCardsText(q, kind)} onPage={setOffset} />}
      </LoadState>
    </section>
  );
}

const CARD_COLUMNS: readonly Column<Card>[] = [
  { header: "Title", cell: (c) => <CardLink id={c.id}>{c.title || c.id}</CardLink> },
  { header: "Id", cell: (c) => <code>{c.id}</code> },
  {
    header: "Kind",
    cell: (c) => (
      <>
        <span className={`badge badge-${c.external ? "external" : "internal"}`}>
          {c.external ? "external" : "internal"}
        </span>
        {c.disabled_at && (
          <>
            {" "}
            <span
              className="badge badge-disabled"
              title={`Disabled ${formatDate(c.disabled_at)}: served to nobody`}
              data-testid="card-disabled"
            >
              disabled
            </span>
          </>
        )}
      </>
    ),
  },
  {
    header: "Link",
    cell: (c) => {
      const href = safeHttpUrl(c.url);
      return href ? (
        <a href={href} target="_blank" rel="noopener noreferrer">
          {new URL(href).host}
        </a>
      ) : (
        <span className="muted">—</span>
      );
    },
  },
  { header: "Licence", cell: (c) => c.license || "—" },
  {
    header: "Tell the member",
    cell: (c) =>
      c.external ? (
        <span className="muted">—</span>
      ) : c.reply ? (
        <span className="reply-preview">{replyPreview(c.reply)}</span>
      ) : (
        <span className="muted">none</span>
      ),
  },
  { header: "Updated", cell: (c) => formatDate(updatedAt(c)) },
  {
    header: "Metadata",
    cell: (c) => <JsonText value={c.metadata} label={`Metadata of ${c.id}`} />,
  },
];

export function CardsTable(props: {
  page: CardPage;
  empty: string;
  onPage: (offset: number) => void;
}): ReactNode {
  const page = props.page;
  return (
    <DataTable
      label="Cards"
      className="cards-table"
      columns={CARD_COLUMNS}
      rows={page.cards}
      rowKey={(c) => c.id}
      empty={props.empty}
      header={
        <p className="muted" role="status">
          {page.total} card{page.total === 1 ? "" : "s"}
        </p>
      }
      footer={
        <Pager
          offset={page.offset}
          pageSize={page.limit}
          total={page.total}
          onChange={props.onPage}
        />
      }
    />
  );
}
