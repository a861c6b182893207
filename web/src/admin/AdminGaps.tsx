/**
 * Knowledge gaps (admin), two lists grouped by similar question, with counts per day, week or
 * month: the questions the knowledge base does not cover (`not_found`, or answered although no
 * retrieved card holds the question's terms: the articles to write), and the covered questions
 * answered badly (rated "Not helpful", or answered with low support: the cards to fix). Each
 * group's example questions link to the conversation they were asked in. An audience narrows
 * both lists to the questions of the members of one group.
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
import { DataTable, type Column } from "./DataTable";
import { StoredWords } from "./removed";
import { SaveTestQuestion, type SaveQuestion } from "./SaveTestQuestion";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";

const PERIODS: { value: GapPeriod; label: string }[] = [
  { value: "day", label: "Per day" },
  { value: "week", label: "Per week" },
  { value: "month", label: "Per month" },
];

/** Per-period counts shown in a row before the rest are summarised. */
export const PERIODS_SHOWN = 6;

export const EMPTY_GAPS = "No unanswered questions in this period.";
export const EMPTY_BADLY = "No covered question was answered badly in this period.";

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

/** Why an example question is listed, for an admin: "not found", "low coverage (0.333)",
 * "rated Not helpful" or "low support (0.412)". */
export function exampleStatus(
  q: Pick<KnowledgeGapQuestion, "reason" | "support" | "coverage">,
): string {
  switch (q.reason) {
    case "not_found":
      return "not found";
    case "low_coverage":
      return `low coverage (${formatNumber(q.coverage, 3)})`;
    case "rated_down":
      return "rated Not helpful";
    case "low_support":
      return `low support (${formatNumber(q.support, 3)})`;
  }
}

export function conversationPath(conversationId: string): string {
  return `/admin/conversations/${encodeURIComponent(conversationId)}`;
}

export function AdminGaps(props: { client: ApiClient }): ReactNode {
  const [period, setPeriod] = useState<GapPeriod>("week");
  const [lookback, setLookback] = useState<Lookback>("all");
  const [audience, setAudience] = useState("");
  const group = audience.trim() || undefined;
  const state = useLoad(
    () => props.client.knowledgeGaps({ period, since: sinceFor(lookback), audience: group }),
    [props.client, period, lookback, group],
  );
  return (
    <section className="admin-page">
      <h1>Knowledge gaps</h1>
      <p className="muted">
        Questions the knowledge base does not cover, and covered questions that were answered badly,
        each grouped by similar question.
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
        <label htmlFor="gaps-audience">Audience</label>
        <input
          id="gaps-audience"
          value={audience}
          placeholder="every member"
          onChange={(e) => setAudience(e.target.value)}
        />
      </div>
      <LoadState state={state} what="knowledge gaps">
        {(report) => (
          <GapsReport
            report={report}
            onSaveQuestion={(body) => props.client.saveEvalQuestion(body)}
          />
        )}
      </LoadState>
    </section>
  );
}

type GapList = "gaps" | "answered-badly";

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** One line on what a list holds; says so when the server sent only the largest groups. */
function listSummary(total: number, groups: readonly KnowledgeGap[], what: string): string {
  const shown = groups.reduce((n, g) => n + g.count, 0);
  if (shown < total) {
    return `${plural(total, "question", "questions")} (${what}); the ${plural(groups.length, "largest group", "largest groups")} shown ${groups.length === 1 ? "holds" : "hold"} ${shown}.`;
  }
  return `${plural(total, "question", "questions")} in ${plural(groups.length, "group", "groups")} (${what}).`;
}

/** The gaps list in one line. */
export function gapsSummary(r: KnowledgeGapReport): string {
  const what = `not found, or answered with no retrieved card covering ${formatNumber(r.min_coverage, 2)} of the question's terms`;
  return listSummary(r.questions, r.groups, what);
}

/** The answered-badly list in one line. */
export function badlySummary(r: KnowledgeGapReport): string {
  const what = `covered, but rated Not helpful or answered with support below ${formatNumber(r.low_support_below, 3)}`;
  return listSummary(r.answered_badly_questions, r.answered_badly, what);
}

export function GapsReport(props: {
  report: KnowledgeGapReport;
  /** Offer "Save as test question" on each listed question (absent: not offered). */
  onSaveQuestion?: SaveQuestion;
}): ReactNode {
  const r = props.report;
  return (
    <>
      <h2>Gaps: not covered</h2>
      <p className="muted">The articles to write next.</p>
      <GapTable
        list="gaps"
        groups={r.groups}
        period={r.period}
        summary={gapsSummary(r)}
        empty={EMPTY_GAPS}
        onSaveQuestion={props.onSaveQuestion}
      />
      <h2>Answered badly: covered</h2>
      <p className="muted">
        The knowledge base has the words, the answer missed: the cards or the retrieval to fix.
      </p>
      <GapTable
        list="answered-badly"
        groups={r.answered_badly}
        period={r.period}
        summary={badlySummary(r)}
        empty={EMPTY_BADLY}
        onSaveQuestion={props.onSaveQuestion}
      />
    </>
  );
}

function GapTable(props: {
  list: GapList;
  groups: readonly KnowledgeGap[];
  period: GapPeriod;
  summary: string;
  empty: string;
  onSaveQuestion?: SaveQuestion | undefined;
}): ReactNode {
  const gaps = props.list === "gaps";
  return (
    <DataTable
      label={gaps ? "Knowledge gaps" : "Answered badly"}
      className={`${props.list}-table gaps-list`}
      columns={gapColumns(gaps, props.period, props.onSaveQuestion)}
      rows={props.groups}
      rowKey={(g, i) => `${i}-${g.question}`}
      rowClassName={() => "gap-row"}
      empty={props.empty}
      emptyTestId={`${props.list}-empty`}
      header={
        <p className="muted" role="status">
          {props.summary}
        </p>
      }
    />
  );
}

function gapColumns(
  gaps: boolean,
  period: GapPeriod,
  onSave: SaveQuestion | undefined,
): readonly Column<KnowledgeGap>[] {
  return [
    {
      header: "Question",
      className: "gap-question",
      cell: (g) => <GapQuestion gap={g} onSave={onSave} />,
    },
    { header: "Asked", numeric: true, className: "gap-count", cell: (g) => g.count },
    {
      header: gaps ? "Not found" : "Rated Not helpful",
      numeric: true,
      cell: (g) => (gaps ? g.not_found : g.rated_down),
    },
    {
      header: gaps ? "Low coverage" : "Low support",
      numeric: true,
      cell: (g) => (gaps ? g.low_coverage : g.low_support),
    },
    { header: "Last asked", cell: (g) => formatDate(g.last_asked) },
    { header: `Per ${period}`, cell: (g) => <PeriodCounts gap={g} /> },
  ];
}

function GapQuestion(props: { gap: KnowledgeGap; onSave: SaveQuestion | undefined }): ReactNode {
  const g = props.gap;
  return (
    <>
      <span className="question-text">
        <StoredWords words={g.question} removed={g.examples[0]?.removed} />
      </span>
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
                <NavLink to={conversationPath(q.conversation_id)}>
                  <StoredWords words={q.question} removed={q.removed} />
                </NavLink>{" "}
                <span className="muted">
                  · {exampleStatus(q)} · {formatDate(q.asked_at)}
                </span>
                {props.onSave && !q.removed && (
                  <SaveTestQuestion
                    messageId={q.message_id}
                    cards={[]}
                    source="gap"
                    onSave={props.onSave}
                  />
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

function PeriodCounts(props: { gap: KnowledgeGap }): ReactNode {
  const periods = compactPeriods(props.gap.per_period);
  return (
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
  );
}
