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
import { DataTable, type Column } from "./DataTable";
import { EventsTable } from "./EventsTable";
import { JsonText } from "./JsonText";
import { StoredWords, removalOf, REMOVED_TEXT, type Removal } from "./removed";
import { SaveTestQuestion, type SaveQuestion } from "./SaveTestQuestion";
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
              {conv.messages.map((m, i) => (
                <AdminTurn
                  key={m.id}
                  message={m}
                  removed={removalOf(m.content, conv)}
                  questionRemoved={questionRemoval(conv.messages, i, conv)}
                  onSaveQuestion={(body) => props.client.saveEvalQuestion(body)}
                />
              ))}
            </ol>
            <section aria-labelledby="conv-events">
              <h2 id="conv-events">Retrieval events</h2>
              <EventsTable
                events={conv.retrieval_events}
                empty="Nothing was retrieved in this conversation."
              />
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

/** The answer's cited cards, in order, each once: what "Save as test question" offers first. */
export function citedCards(sources: AdminMessage["sources"]): string[] {
  const ids = sources
    .map((s) => (s as Partial<StoredSource>).card_id)
    .filter((c): c is string => typeof c === "string" && c.length > 0);
  return [...new Set(ids)];
}

/** Why the question an answer (at `index`) replies to has no words (null: it has them). */
export function questionRemoval(
  messages: readonly AdminMessage[],
  index: number,
  owner: { user_name: string },
): Removal | null {
  const question = messages
    .slice(0, index)
    .reverse()
    .find((m) => m.role === "user");
  return question ? removalOf(question.content, owner) : null;
}

/** Where "Save as test question" would be: why a question without words cannot be saved. */
export function notSaveable(removed: Removal): string {
  return `Not offered as a test question: its question was ${REMOVED_TEXT[removed]}.`;
}

export function AdminTurn(props: {
  message: AdminMessage;
  /** Why this message has no words (null or absent: it has them). */
  removed?: Removal | null;
  /** Why the question this answer replies to has no words: it cannot be saved as a test
   * question (the questions file needs the question's words). */
  questionRemoved?: Removal | null;
  /** Offer "Save as test question" on an answer (absent: not offered). */
  onSaveQuestion?: SaveQuestion;
}): ReactNode {
  const m = props.message;
  if (m.role === "user") {
    return (
      <li className="turn turn-user">
        <h2 className="visually-hidden">Question</h2>
        <p className="question">
          <StoredWords words={m.content} removed={props.removed} />
        </p>
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
        {props.removed ? (
          <p>
            <StoredWords words={null} removed={props.removed} />
          </p>
        ) : (
          <SafeMarkdown source={m.content} stripCitationMarkers={false} />
        )}
      </div>
      {stripMarkers(m.content) !== m.content && (
        <p className="hint" data-testid="markers-explained">
          {MARKERS_EXPLAINED}
        </p>
      )}
      {m.feedback && <AnswerFeedback feedback={m.feedback} />}
      {props.onSaveQuestion && props.questionRemoved && (
        <p className="hint" data-testid="save-question-unavailable">
          {notSaveable(props.questionRemoved)}
        </p>
      )}
      {props.onSaveQuestion && !props.questionRemoved && (
        <SaveTestQuestion
          messageId={m.id}
          cards={citedCards(sources)}
          source={m.feedback ? "feedback" : "conversation"}
          onSave={props.onSaveQuestion}
        />
      )}
      <details className="raw">
        <summary>Stored text</summary>
        <pre>{m.content}</pre>
      </details>
      <SourcesTable sources={sources} />
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

/** A stored source as its table row reads it: the stored object, or an unreadable one's
 * placeholder (drawn as one row across the columns). */
type SourceRow = { index: number; source: StoredSource; unreadable: UnreadableStored | null };

function sourceCell(read: (s: StoredSource, href: string | null, i: number) => ReactNode) {
  return (row: SourceRow): ReactNode =>
    read(row.source, safeHttpUrl(row.source.source_url), row.index);
}

const SOURCE_COLUMNS: readonly Column<SourceRow>[] = [
  { header: "[n]", numeric: true, cell: sourceCell((s) => s.n ?? "—") },
  {
    header: "Card",
    cell: sourceCell((s) => (
      <>
        <strong>{s.title || "—"}</strong>
        <br />
        <CardLink id={s.card_id} />
      </>
    )),
  },
  {
    header: "Kind",
    cell: sourceCell((_, href) =>
      href ? (
        <span className="badge badge-external">external</span>
      ) : (
        <span className="badge badge-internal">internal</span>
      ),
    ),
  },
  {
    header: "Link",
    cell: sourceCell((_, href) =>
      href ? (
        <a href={href} target="_blank" rel="noopener noreferrer">
          {new URL(href).host}
        </a>
      ) : (
        <span className="muted">internal</span>
      ),
    ),
  },
  { header: "Licence", cell: sourceCell((s) => s.source_license || "—") },
  { header: "Score", numeric: true, cell: sourceCell((s) => formatNumber(s.retrieved_score, 1)) },
  {
    header: "Attributed",
    cell: sourceCell((s) => (s.attributed === true ? "yes" : s.attributed === false ? "no" : "—")),
  },
  { header: "Span", className: "span-cell", cell: sourceCell((s) => s.span || s.text || "—") },
  {
    header: "Metadata",
    cell: sourceCell((s, _, i) => (
      <JsonText value={s.metadata} label={`Metadata of source ${s.n ?? i + 1}`} />
    )),
  },
];

function unreadableRow(row: SourceRow): ReactNode {
  const bad = row.unreadable;
  if (!bad) return null;
  return (
    <tr className="unreadable" data-testid="unreadable-source">
      <td className="num">—</td>
      <td colSpan={SOURCE_COLUMNS.length - 1}>
        <span className="badge badge-unreadable">unreadable</span> <strong>{bad.title}</strong>
        <pre className="raw-value">{bad.raw}</pre>
      </td>
    </tr>
  );
}

export function SourcesTable(props: { sources: AdminMessage["sources"] }): ReactNode {
  const rows = props.sources.map((item, index): SourceRow => ({
    index,
    source: item as StoredSource,
    unreadable: unreadableOf(item),
  }));
  return (
    <DataTable
      label="Sources as stored"
      caption
      className="sources-table"
      columns={SOURCE_COLUMNS}
      rows={rows}
      rowKey={(r) => (r.unreadable ? `unreadable-${r.index}` : `${r.source.card_id}-${r.index}`)}
      rowClassName={(r) => (safeHttpUrl(r.source.source_url) ? "external" : "internal")}
      wholeRow={unreadableRow}
      empty="No sources."
      emptyTestId="no-sources"
    />
  );
}
