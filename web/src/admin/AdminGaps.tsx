/**
 * Knowledge gaps (admin): the questions the knowledge base did not answer (`not_found`) or
 * answered with low support, grouped by similar question, with counts per day, week or month.
 * Each group's example questions link to the conversation they were asked in.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type {
  GapPeriod,
  KnowledgeGap,
  KnowledgeGapPeriod,
  KnowledgeGapQuestion,
  KnowledgeGapReport,
} from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate, formatNumber } from "../components/format";
import { useLoad } from "../components/useLoad";
import { AbstentionCalibration } from "./AbstentionCalibration";
import { ScrollBox } from "./ScrollBox";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";

const PERIODS: { value: GapPeriod; label: string }[] = [
  { value: "day", label: "Per day" },
  { value: "week", label: "Per week" },
  { value: "month", label: "Per month" },
];

/** Per-period counts shown in a row before the rest are summarised. */
export const PERIODS_SHOWN = 6;

export const EMPTY_GAPS = "No unanswered questions in this period.";

/**
 * The newest `max` periods of a group, oldest first, and what the earlier ones add up to (the
 * server sends periods oldest first).
 */
export function compactPeriods(
  periods: readonly KnowledgeGapPeriod[],
  max: number = PERIODS_SHOWN,
): { shown: KnowledgeGapPeriod[]; earlierPeriods: number; earlierCount: number } {
  const sorted = [...periods].sort((a, b) => (a.period_start < b.period_start ? -1 : 1));
  const cut = Math.max(0, sorted.length - Math.max(1, max));
  const earlier = sorted.slice(0, cut);
  return {
    shown: sorted.slice(cut),
    earlierPeriods: earlier.length,
    earlierCount: earlier.reduce((n, p) => n + p.count, 0),
  };
}

/** An example question's status for an admin: "not found" or "support 0.412". */
export function exampleStatus(q: Pick<KnowledgeGapQuestion, "answer_status" | "support">): string {
  if (q.answer_status === "not_found") return "not found";
  return `low support (${formatNumber(q.support, 3)})`;
}

export function conversationPath(conversationId: string): string {
  return `/admin/conversations/${encodeURIComponent(conversationId)}`;
}

export function AdminGaps(props: { client: ApiClient }): ReactNode {
  const [period, setPeriod] = useState<GapPeriod>("week");
  const [lookback, setLookback] = useState<Lookback>("all");
  const state = useLoad(
    () => props.client.knowledgeGaps({ period, since: sinceFor(lookback) }),
    [props.client, period, lookback],
  );
  return (
    <section className="admin-page">
      <h1>Knowledge gaps</h1>
      <p className="muted">
        Questions the knowledge base could not answer, or answered with low support, grouped by
        similar question: the articles to write next.
      </p>
      <AbstentionCalibration client={props.client} />
      <div className="filters">
        <label htmlFor="gaps-period">Period</label>
        <select
          id="gaps-period"
          value={period}
          onChange={(e) => setPeriod(e.target.value as GapPeriod)}
        >
          {PERIODS.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
        <LookbackSelect id="gaps-window" label="Asked" value={lookback} onChange={setLookback} />
      </div>
      <LoadState state={state} what="knowledge gaps">
        {(report) => <GapsReport report={report} />}
      </LoadState>
    </section>
  );
}

/** One line on what the table holds; says so when the server sent only the largest groups. */
export function gapsSummary(r: KnowledgeGapReport): string {
  const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
  const shown = r.groups.reduce((n, g) => n + g.count, 0);
  const what = `not found, or answered with support below ${formatNumber(r.low_support_below, 3)}`;
  if (shown < r.questions) {
    return `${plural(r.questions, "question", "questions")} (${what}); the ${plural(r.groups.length, "largest group", "largest groups")} shown ${r.groups.length === 1 ? "holds" : "hold"} ${shown}.`;
  }
  return `${plural(r.questions, "question", "questions")} in ${plural(r.groups.length, "group", "groups")} (${what}).`;
}

export function GapsReport(props: { report: KnowledgeGapReport }): ReactNode {
  const r = props.report;
  if (r.groups.length === 0) {
    return (
      <p className="muted" data-testid="gaps-empty">
        {EMPTY_GAPS}
      </p>
    );
  }
  return (
    <>
      <p className="muted" role="status">
        {gapsSummary(r)}
      </p>
      <ScrollBox label="Knowledge gaps">
        <table className="gaps-table">
          <thead>
            <tr>
              <th scope="col">Question</th>
              <th scope="col">Asked</th>
              <th scope="col">Not found</th>
              <th scope="col">Low support</th>
              <th scope="col">Last asked</th>
              <th scope="col">Per {r.period}</th>
            </tr>
          </thead>
          <tbody>
            {r.groups.map((g, i) => (
              <GapRow key={`${i}-${g.question}`} gap={g} />
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}

function GapRow(props: { gap: KnowledgeGap }): ReactNode {
  const g = props.gap;
  const periods = compactPeriods(g.per_period);
  return (
    <tr className="gap-row">
      <td className="gap-question">
        <span className="question-text">{g.question}</span>
        {g.examples.length > 0 && (
          <details className="gap-examples">
            <summary>
              {g.examples.length < g.count
                ? `${g.examples.length} of ${g.count} questions`
                : g.count === 1
                  ? "1 question"
                  : `${g.count} questions`}
            </summary>
            <ul>
              {g.examples.map((q) => (
                <li key={q.message_id}>
                  <NavLink to={conversationPath(q.conversation_id)}>{q.question}</NavLink>{" "}
                  <span className="muted">
                    · {exampleStatus(q)} · {formatDate(q.asked_at)}
                  </span>
                </li>
              ))}
            </ul>
          </details>
        )}
      </td>
      <td className="num gap-count">{g.count}</td>
      <td className="num">{g.not_found}</td>
      <td className="num">{g.low_support}</td>
      <td>{formatDate(g.last_asked)}</td>
      <td>
        <ul className="period-counts">
          {periods.earlierPeriods > 0 && (
            <li className="muted">
              earlier: {periods.earlierCount} in {periods.earlierPeriods}
            </li>
          )}
          {periods.shown.map((p) => (
            <li key={p.period_start}>
              <span className="period-start">{p.period_start}</span>:{" "}
              <span className="num">{p.count}</span>
            </li>
          ))}
        </ul>
      </td>
    </tr>
  );
}
