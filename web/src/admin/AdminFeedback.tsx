/**
 * Members' feedback (admin analytics): thumbs up and down in a look-back window, the helpful
 * rate of each card the rated answers cited, and the worst-rated answers, each linking to the
 * conversation it was given in.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { FeedbackCard, FeedbackReport, RatedAnswer } from "../api/types";
import { LoadState } from "../components/LoadState";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";
import { NavLink } from "../components/NavLink";
import { formatDate, formatRate, plural } from "../components/format";
import { useLoad } from "../components/useLoad";
import { CardLink } from "./AdminCard";
import { conversationPath } from "./AdminGaps";
import { DataTable, type Column } from "./DataTable";
import { EmptyState } from "./EmptyState";
import { StoredWords } from "./removed";
import { userName } from "./users";

/** How many of the worst-rated answers the page asks for. */
export const WORST_SHOWN = 20;
/** Characters of an answer shown in the worst-rated table (the conversation has the rest). */
export const ANSWER_PREVIEW = 240;

export const NO_FEEDBACK = "No answer was rated in this period.";

/** One line on the window's ratings: "12 ratings: 9 helpful, 3 unhelpful (75.0% helpful)." */
export function feedbackSummary(r: Pick<FeedbackReport, "up" | "down" | "helpful_rate">): string {
  return (
    `${plural(r.up + r.down, "rating", "ratings")}: ${r.up} helpful, ${r.down} unhelpful ` +
    `(${formatRate(r.helpful_rate)} helpful).`
  );
}

/** The start of an answer as one line of plain text (its `[n]` markers kept, as admins see them). */
export function answerPreview(answer: string, chars: number = ANSWER_PREVIEW): string {
  const text = answer.replace(/\s+/g, " ").trim();
  return text.length > chars ? `${text.slice(0, chars - 1).trimEnd()}…` : text;
}

export function AdminFeedback(props: { client: ApiClient }): ReactNode {
  const [lookback, setLookback] = useState<Lookback>("all");
  const state = useLoad(
    () => props.client.feedbackReport({ since: sinceFor(lookback), limit: WORST_SHOWN }),
    [props.client, lookback],
  );
  return (
    <section className="admin-feedback" aria-labelledby="feedback-heading">
      <h2 id="feedback-heading">Feedback</h2>
      <p className="muted">
        Members&apos; thumbs up and down on answers: how helpful the answers citing each card were,
        and the answers rated worst.
      </p>
      <div className="filters">
        <LookbackSelect
          id="feedback-window"
          label="Rated"
          value={lookback}
          onChange={setLookback}
        />
      </div>
      <LoadState state={state} what="feedback">
        {(report) => <FeedbackReportView report={report} />}
      </LoadState>
    </section>
  );
}

export function FeedbackReportView(props: { report: FeedbackReport }): ReactNode {
  const r = props.report;
  if (r.up + r.down === 0) return <EmptyState testId="feedback-empty">{NO_FEEDBACK}</EmptyState>;
  return (
    <>
      <p data-testid="feedback-summary">{feedbackSummary(r)}</p>
      <h3>Helpful rate per card</h3>
      <DataTable
        label="Helpful rate per card"
        className="feedback-cards"
        columns={CARD_COLUMNS}
        rows={r.cards}
        rowKey={(c) => c.card_id}
        rowClassName={() => "feedback-card"}
        rowData={(c) => ({ card: c.card_id })}
        empty="No rated answer cited a card."
      />
      <h3>Worst-rated answers</h3>
      <DataTable
        label="Worst-rated answers"
        className="worst-answers"
        columns={WORST_COLUMNS}
        rows={r.worst}
        rowKey={(a) => a.message_id}
        rowClassName={() => "rated-answer"}
        rowData={(a) => ({ message: a.message_id })}
        empty="No answer was rated unhelpful."
      />
    </>
  );
}

const CARD_COLUMNS: readonly Column<FeedbackCard>[] = [
  { header: "Card", cell: (c) => <CardLink id={c.card_id}>{c.title || c.card_id}</CardLink> },
  {
    header: "Kind",
    cell: (c) => (
      <span className={`badge badge-${c.external ? "external" : "internal"}`}>
        {c.external ? "external" : "internal"}
      </span>
    ),
  },
  { header: "Helpful", numeric: true, cell: (c) => c.up },
  { header: "Unhelpful", numeric: true, cell: (c) => c.down },
  {
    header: "Helpful rate",
    numeric: true,
    className: "helpful-rate",
    cell: (c) => formatRate(c.helpful_rate),
  },
];

const WORST_COLUMNS: readonly Column<RatedAnswer>[] = [
  {
    header: "Rating",
    cell: (a) => (
      <span
        className={a.rating === "down" ? "badge badge-flag" : "badge badge-external"}
        data-testid="rating"
      >
        {a.rating === "down" ? "unhelpful" : "helpful"}
      </span>
    ),
  },
  {
    header: "Question",
    className: "gap-question",
    cell: (a) => (
      <NavLink to={conversationPath(a.conversation_id)}>
        <StoredWords words={a.question} removed={a.removed} missing="(question missing)" />
      </NavLink>
    ),
  },
  { header: "Answer", className: "answer-preview", cell: (a) =>
      a.removed ? (
        <StoredWords words={null} removed={a.removed} />
      ) : (
        answerPreview(a.answer)
      ),
  },
  {
    header: "Comment",
    className: "comment-cell",
    cell: (a) => a.comment ?? <span className="muted">—</span>,
  },
  { header: "Member", cell: userName },
  { header: "Rated", cell: (a) => formatDate(a.updated_at ?? a.created_at) },
];
