/**
 * One conversation as stored (admin): answers with their `[n]` markers, each answer's status
 * and support, every source the pipeline kept (internal ones marked), and the turn's retrieval
 * events with the query retrieval ran with.
 */
import type { ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { AdminFeedback, AdminMessage, StoredSource, UnreadableStored } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, formatNumber } from "../components/format";
import { useLoad } from "../components/useLoad";
import { stripMarkers } from "../markdown/markers";
import { SafeMarkdown } from "../markdown/SafeMarkdown";
import { safeHttpUrl } from "../security/safeUrl";
import { CardLink } from "./AdminCard";
import { EmptyState } from "./EmptyState";
import { EventsTable } from "./EventsTable";
import { JsonText } from "./JsonText";
import { ScrollBox } from "./ScrollBox";
import { userName } from "./users";

/** Beside a stored answer that cites: what its `[n]` markers are, and that members never see
 * them. */
export const MARKERS_EXPLAINED =
  "[n] marks a sentence drawn from source n in the table below. Members see the answer " +
  "without these markers.";

export function AdminConversationView(props: { client: ApiClient; id: string }): ReactNode {
  const state = useLoad(() => props.client.adminConversation(props.id), [props.client, props.id]);
  return (
    <section className="admin-page">
      <LoadState state={state} what="the conversation">
        {(conv) => (
          <>
            <h1>{conv.title || "Untitled conversation"}</h1>
            <p className="muted">
              <span data-testid="conversation-user">{userName(conv)}</span> · started{" "}
              {formatDate(conv.created_at)}
            </p>
            {conv.hidden_at && (
              <p className="flag" data-testid="conversation-hidden">
                The member deleted this conversation on {formatDate(conv.hidden_at)}: they no longer
                see it; its answers stay stored.
              </p>
            )}
            <ol className="turns admin-turns">
              {conv.messages.map((m) => (
                <AdminTurn key={m.id} message={m} />
              ))}
            </ol>
            <section aria-labelledby="conv-events">
              <h2 id="conv-events">Retrieval events</h2>
              {conv.retrieval_events.length > 0 ? (
                <EventsTable events={conv.retrieval_events} />
              ) : (
                <EmptyState>Nothing was retrieved in this conversation.</EmptyState>
              )}
            </section>
          </>
        )}
      </LoadState>
    </section>
  );
}

/** An assistant message's status and support as shown to an admin. */
export function answerMeta(m: Pick<AdminMessage, "answer_status" | "support">): {
  status: string;
  notFound: boolean;
  support: string;
} {
  const status = m.answer_status || "unknown";
  return {
    status,
    notFound: status === "not_found",
    support: formatNumber(m.support, 3),
  };
}

export function AdminTurn(props: { message: AdminMessage }): ReactNode {
  const m = props.message;
  if (m.role === "user") {
    return (
      <li className="turn turn-user">
        <h2 className="visually-hidden">Question</h2>
        <p className="question">{m.content}</p>
      </li>
    );
  }
  const sources = m.sources ?? [];
  const meta = answerMeta(m);
  return (
    <li className="turn turn-assistant">
      <h2 className="visually-hidden">Answer</h2>
      <p className="muted" data-testid="admin-answer-meta">
        status:{" "}
        <span
          className={meta.notFound ? "badge badge-not-found" : "badge"}
          data-testid="answer-status"
        >
          {meta.status}
        </span>{" "}
        {m.restricted ? (
          <>
            {" "}
            <span className="badge badge-not-found" data-testid="answer-restricted">
              restricted:{" "}
              {m.restricted === "exposure_budget" ? "exposure budget spent" : m.restricted}
            </span>
          </>
        ) : null}{" "}
        · support <span data-testid="answer-support">{meta.support}</span> · path:{" "}
        <code>{m.hybrid_path ?? "none"}</code>
        {m.generator ? (
          <>
            {" "}
            · generator <code>{m.generator}</code>
          </>
        ) : null}{" "}
        · {formatDate(m.created_at)}
      </p>
      {m.regenerated_from && (
        <p className="muted" data-testid="answer-regenerated">
          Regenerated: the member asked for a new answer; the one it replaced is above.
        </p>
      )}
      <div className="answer" data-testid="admin-answer">
        <SafeMarkdown source={m.content} stripCitationMarkers={false} />
      </div>
      {stripMarkers(m.content) !== m.content && (
        <p className="hint" data-testid="markers-explained">
          {MARKERS_EXPLAINED}
        </p>
      )}
      {m.feedback && <AnswerFeedback feedback={m.feedback} />}
      <details className="raw">
        <summary>Stored text</summary>
        <pre>{m.content}</pre>
      </details>
      {sources.length > 0 ? (
        <SourcesTable sources={sources} />
      ) : (
        <p className="muted">No sources.</p>
      )}
    </li>
  );
}

/** The member's thumbs on an answer, and their comment. */
export function AnswerFeedback(props: { feedback: AdminFeedback }): ReactNode {
  const f = props.feedback;
  const helpful = f.rating === "up";
  return (
    <p className="answer-feedback" data-testid="answer-feedback">
      <span className={helpful ? "badge badge-external" : "badge badge-flag"}>
        {helpful ? "rated helpful" : "rated unhelpful"}
      </span>{" "}
      {f.comment ? <q className="feedback-comment">{f.comment}</q> : null}{" "}
      <span className="muted">· {formatDate(f.updated_at)}</span>
    </p>
  );
}

/** The placeholder for a source row that is not a readable object (also from an older server). */
function unreadableOf(s: unknown): UnreadableStored | null {
  if (typeof s !== "object" || s === null || Array.isArray(s)) {
    return { unreadable: true, title: "stored source is not an object", raw: JSON.stringify(s) };
  }
  return (s as Partial<UnreadableStored>).unreadable === true ? (s as UnreadableStored) : null;
}

export function SourcesTable(props: { sources: AdminMessage["sources"] }): ReactNode {
  return (
    <ScrollBox label="Sources as stored">
      <table className="sources-table">
        <caption>Sources as stored</caption>
        <thead>
          <tr>
            <th scope="col">[n]</th>
            <th scope="col">Card</th>
            <th scope="col">Kind</th>
            <th scope="col">Link</th>
            <th scope="col">Licence</th>
            <th scope="col">Score</th>
            <th scope="col">Attributed</th>
            <th scope="col">Span</th>
            <th scope="col">Metadata</th>
          </tr>
        </thead>
        <tbody>
          {props.sources.map((item, i) => {
            const bad = unreadableOf(item);
            if (bad) {
              return (
                <tr key={`unreadable-${i}`} className="unreadable" data-testid="unreadable-source">
                  <td className="num">—</td>
                  <td colSpan={8}>
                    <span className="badge badge-unreadable">unreadable</span>{" "}
                    <strong>{bad.title}</strong>
                    <pre className="raw-value">{bad.raw}</pre>
                  </td>
                </tr>
              );
            }
            const s = item as StoredSource;
            const href = safeHttpUrl(s.source_url);
            return (
              <tr key={`${s.card_id}-${i}`} className={href ? "external" : "internal"}>
                <td className="num">{s.n ?? "—"}</td>
                <td>
                  <strong>{s.title || "—"}</strong>
                  <br />
                  <CardLink id={s.card_id} />
                </td>
                <td>
                  {href ? (
                    <span className="badge badge-external">external</span>
                  ) : (
                    <span className="badge badge-internal">internal</span>
                  )}
                </td>
                <td>
                  {href ? (
                    <a href={href} target="_blank" rel="noopener noreferrer">
                      {new URL(href).host}
                    </a>
                  ) : (
                    <span className="muted">internal</span>
                  )}
                </td>
                <td>{s.source_license || "—"}</td>
                <td className="num">{formatNumber(s.retrieved_score, 1)}</td>
                <td>{s.attributed === true ? "yes" : s.attributed === false ? "no" : "—"}</td>
                <td className="span-cell">{s.span || s.text || "—"}</td>
                <td>
                  <JsonText value={s.metadata} label={`Metadata of source ${s.n ?? i + 1}`} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
