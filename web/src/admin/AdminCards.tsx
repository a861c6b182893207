/** The KB card catalogue (admin): search by text, filter external/internal, page through. */
import { useState, type FormEvent, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { CardPage } from "../api/types";
import { LoadState } from "../components/LoadState";
import { Pager } from "../components/Pager";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { safeHttpUrl } from "../security/safeUrl";
import { CardLink, updatedAt } from "./AdminCard";
import { EmptyState } from "./EmptyState";
import { JsonText } from "./JsonText";
import { ScrollBox } from "./ScrollBox";

const PAGE = 25;

type Kind = "all" | "external" | "internal";

/** What the empty state says: why nothing is listed. */
export function noCardsText(q: string, kind: Kind): string {
  const which = kind === "all" ? "cards" : `${kind} cards`;
  if (q) return `No ${which} match “${q}”.`;
  return kind === "all" ? "The knowledge base has no cards yet." : `There are no ${which}.`;
}

export function AdminCards(props: { client: ApiClient }): ReactNode {
  const [draft, setDraft] = useState("");
  const [q, setQ] = useState("");
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
    setQ(draft.trim());
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

export function CardsTable(props: {
  page: CardPage;
  empty: string;
  onPage: (offset: number) => void;
}): ReactNode {
  const page = props.page;
  if (page.total === 0) {
    return <EmptyState>{props.empty}</EmptyState>;
  }
  return (
    <>
      <p className="muted" role="status">
        {page.total} card{page.total === 1 ? "" : "s"}
      </p>
      <ScrollBox label="Cards">
        <table className="cards-table">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Id</th>
              <th scope="col">Kind</th>
              <th scope="col">Link</th>
              <th scope="col">Licence</th>
              <th scope="col">Updated</th>
              <th scope="col">Metadata</th>
            </tr>
          </thead>
          <tbody>
            {page.cards.map((c) => {
              const href = safeHttpUrl(c.url);
              return (
                <tr key={c.id}>
                  <td>
                    <CardLink id={c.id}>{c.title || c.id}</CardLink>
                  </td>
                  <td>
                    <code>{c.id}</code>
                  </td>
                  <td>
                    <span className={`badge badge-${c.external ? "external" : "internal"}`}>
                      {c.external ? "external" : "internal"}
                    </span>
                  </td>
                  <td>
                    {href ? (
                      <a href={href} target="_blank" rel="noopener noreferrer">
                        {new URL(href).host}
                      </a>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td>{c.license || "—"}</td>
                  <td>{formatDate(updatedAt(c))}</td>
                  <td>
                    <JsonText value={c.metadata} label={`Metadata of ${c.id}`} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
      <Pager
        offset={page.offset}
        pageSize={page.limit}
        total={page.total}
        onChange={props.onPage}
      />
    </>
  );
}
