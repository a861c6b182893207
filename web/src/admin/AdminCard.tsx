/**
 * One knowledge-base card in full (admin): title, link, licence, external or internal, the
 * catalogue's other columns, every metadata key and the body, all shown as text. An internal
 * card shows its staff notes (the body) and, apart, what the member may be told ("Tell the
 * member": its reply, the only part an answer quotes).
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { Card } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { safeHttpUrl } from "../security/safeUrl";
import { ConfirmButton } from "./ConfirmButton";
import { JsonText } from "./JsonText";

export function cardPath(cardId: string): string {
  return `/admin/cards/${encodeURIComponent(cardId)}`;
}

/** The catalogue's update time, kept among the card's other columns. */
export function updatedAt(card: Pick<Card, "extra">): string | null {
  const value = card.extra?.updated_at ?? card.extra?.ingested_at;
  return typeof value === "string" ? value : null;
}

/** The start of a reply, for a table cell. */
export function replyPreview(reply: string, words = 16): string {
  const all = reply.split(/\s+/).filter(Boolean);
  return all.length > words ? `${all.slice(0, words).join(" ")}…` : all.join(" ");
}

/** A card id as a link to its page. */
export function CardLink(props: { id: string; children?: ReactNode }): ReactNode {
  return <NavLink to={cardPath(props.id)}>{props.children ?? <code>{props.id}</code>}</NavLink>;
}

export function AdminCard(props: { client: ApiClient; id: string }): ReactNode {
  const [changed, setChanged] = useState<Card | null>(null);
  const state = useLoad(() => props.client.adminCard(props.id), [props.client, props.id]);
  return (
    <section className="admin-page">
      <p>
        <NavLink to="/admin/cards">All cards</NavLink>
      </p>
      <LoadState state={state} what="the card">
        {(loaded) => {
          const card = changed?.id === loaded.id ? changed : loaded;
          return (
            <>
              <ServeControl
                card={card}
                onChange={(enabled) => props.client.setCardEnabled(card.id, enabled)}
                onChanged={setChanged}
              />
              <CardDetail card={card} />
            </>
          );
        }}
      </LoadState>
    </section>
  );
}

/** Disable / Enable: a disabled card is kept here and served on no path, by no replica. */
export function ServeControl(props: {
  card: Card;
  onChange: (enabled: boolean) => Promise<Card>;
  onChanged: (card: Card) => void;
}): ReactNode {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const disabled = Boolean(props.card.disabled_at);
  const change = async (): Promise<void> => {
    setBusy(true);
    setProblem(null);
    try {
      props.onChanged(await props.onChange(disabled));
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="serve-control" data-testid="serve-control">
      {disabled ? (
        <p>
          <span className="badge badge-disabled">disabled</span>{" "}
          <span className="muted">
            since {formatDate(props.card.disabled_at ?? null)} by {props.card.disabled_by}: no
            answer, search or event draws on it.
          </span>
        </p>
      ) : (
        <p className="muted">Served: answers may draw on this card.</p>
      )}
      <ConfirmButton
        label={disabled ? "Enable" : "Disable"}
        question={
          disabled
            ? "Enable this card? Answers may draw on it again."
            : "Disable this card? No answer, search or event will draw on it."
        }
        confirm={disabled ? "Enable" : "Disable"}
        disabled={busy}
        onConfirm={() => void change()}
      />
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

export function CardDetail(props: { card: Card }): ReactNode {
  const c = props.card;
  const href = safeHttpUrl(c.url);
  const kind = c.external ? "external" : "internal";
  return (
    <article className="card-detail" data-testid="card-detail">
      <h1>{c.title || c.id}</h1>
      <dl className="card-facts">
        <dt>Id</dt>
        <dd>
          <code>{c.id}</code>
        </dd>
        <dt>Kind</dt>
        <dd>
          <span className={`badge badge-${kind}`} data-testid="card-kind">
            {kind}
          </span>{" "}
          <span className="muted">
            {c.external
              ? "members may see it as a source"
              : "never shown to members; answers may draw on it"}
          </span>
        </dd>
        <dt>Link</dt>
        <dd data-testid="card-url">
          {href ? (
            <a href={href} target="_blank" rel="noopener noreferrer">
              {href}
            </a>
          ) : c.url ? (
            <span className="muted">not a safe web link: {c.url}</span>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        <dt>Licence</dt>
        <dd data-testid="card-license">{c.license || <span className="muted">Not stated</span>}</dd>
        <dt>Updated</dt>
        <dd>{formatDate(updatedAt(c))}</dd>
      </dl>
      <h2>Metadata</h2>
      <div data-testid="card-metadata">
        <JsonText value={c.metadata} label={`Metadata of ${c.id}`} />
      </div>
      <h2>{c.external ? "Body" : "Staff notes"}</h2>
      <div className="card-body" data-testid="card-body">
        {c.body ? c.body : <span className="muted">No body stored.</span>}
      </div>
      {!c.external && (
        <>
          <h2>Tell the member</h2>
          <div className="card-body card-reply" data-testid="card-reply">
            {c.reply ? (
              c.reply
            ) : (
              <span className="muted">
                No reply: answers rank this card but quote nothing from it.
              </span>
            )}
          </div>
        </>
      )}
      <h2>Other columns</h2>
      <JsonText value={c.extra} label={`Catalogue columns of ${c.id}`} />
    </article>
  );
}
