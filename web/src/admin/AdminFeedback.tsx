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
import { EmptyState } from "./EmptyState";
import { ScrollBox } from "./ScrollBox";
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
      {r.cards.length === 0 ? (
        <EmptyState>No rated answer cited a card.</EmptyState>
      ) : (
        <FeedbackCards cards={r.cards} />
      )}
      <h3>Worst-rated answers</h3>
      {r.worst.length === 0 ? (
        <EmptyState>No answer was rated unhelpful.</EmptyState>
      ) : (
        <WorstAnswers answers={r.worst} />
      )}
    </>
  );
}

function FeedbackCards(props: { cards: readonly FeedbackCard[] }): ReactNode {
  return (
    <ScrollBox label="Helpful rate per card">
      <table className="feedback-cards">
        <thead>
          <tr>
            <th scope="col">Card</th>
            <th scope="col">Kind</th>
            <th scope="col" className="num">
              Helpful
            </th>
            <th scope="col" className="num">
              Unhelpful
            </th>
            <th scope="col" className="num">
              Helpful rate
            </th>
          </tr>
        </thead>
        <tbody>
          {props.cards.map((c) => (
            <tr key={c.card_id} className="feedback-card" data-card={c.card_id}>
              <td>
                <CardLink id={c.card_id}>{c.title || c.card_id}</CardLink>
              </td>
              <td>
                <span className={`badge badge-${c.external ? "external" : "internal"}`}>
                  {c.external ? "external" : "internal"}
                </span>
              </td>
              <td className="num">{c.up}</td>
              <td className="num">{c.down}</td>
              <td className="num helpful-rate">{formatRate(c.helpful_rate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

function WorstAnswers(props: { answers: readonly RatedAnswer[] }): ReactNode {
  return (
    <ScrollBox label="Worst-rated answers">
      <table className="worst-answers">
        <thead>
          <tr>
            <th scope="col">Rating</th>
            <th scope="col">Question</th>
            <th scope="col">Answer</th>
            <th scope="col">Comment</th>
            <th scope="col">Member</th>
            <th scope="col">Rated</th>
          </tr>
        </thead>
        <tbody>
          {props.answers.map((a) => (
            <tr key={a.message_id} className="rated-answer" data-message={a.message_id}>
              <td>
                <span
                  className={a.rating === "down" ? "badge badge-flag" : "badge badge-external"}
                  data-testid="rating"
                >
                  {a.rating === "down" ? "unhelpful" : "helpful"}
                </span>
              </td>
              <td className="gap-question">
                <NavLink to={conversationPath(a.conversation_id)}>
                  {a.question ?? "(question missing)"}
                </NavLink>
              </td>
              <td className="answer-preview">{answerPreview(a.answer)}</td>
              <td className="comment-cell">{a.comment ?? <span className="muted">—</span>}</td>
              <td>{userName(a)}</td>
              <td>{formatDate(a.updated_at ?? a.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
