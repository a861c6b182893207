/**
 * One member's exposure (admin): totals, a row per UTC day, and the answers behind it (newest
 * first), each with the question asked, the internal cards it drew on and what of them it
 * repeated word for word. Each answer links to its conversation in the admin view.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type {
  ExposureCard,
  ExposureDay,
  ExposureMember,
  ExposureTurn,
  MemberExposureReport,
} from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { Pager } from "../components/Pager";
import { formatDate, formatRate, plural } from "../components/format";
import { useLoad } from "../components/useLoad";
import { DataTable, type Column } from "./DataTable";
import { CardLink } from "./AdminCard";
import { conversationPath } from "./AdminGaps";
import { budgetText, restrictedText } from "./AdminExposure";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";

const PAGE = 25;

export const EMPTY_MEMBER_EXPOSURE = "This member received no internal knowledge in this period.";

/** The member's totals in one sentence. */
export function memberTotals(m: ExposureMember, internalCards: number): string {
  const share =
    m.corpus_share === null ? "" : ` (${formatRate(m.corpus_share)} of ${internalCards})`;
  return (
    `${plural(m.cards, "internal card", "internal cards")}${share}, ` +
    `${plural(m.verbatim_sentences, "sentence", "sentences")} repeated verbatim, ` +
    `in ${plural(m.turns, "answer", "answers")}; longest shared span ${plural(m.longest_span, "word", "words")}.`
  );
}

/** What one answer took from one internal card, for a person. */
export function cardExposure(c: ExposureCard): string {
  const verbatim =
    c.verbatim_sentences > 0
      ? `${c.verbatim_sentences} of ${c.card_sentences} sentences verbatim`
      : "no sentence verbatim";
  return `${c.cited ? "cited" : "not cited"} · ${verbatim} · span ${plural(c.longest_span, "word", "words")}`;
}

/** The page heading: the member's name once the report has loaded. */
export function memberHeading(report: Pick<MemberExposureReport, "member"> | null): string {
  return report ? `Exposure: ${report.member.name}` : "Member exposure";
}

/** Days newest first, for reading down from today. */
export function newestFirst(days: readonly ExposureDay[]): ExposureDay[] {
  return [...days].sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
}

export function AdminMemberExposure(props: { client: ApiClient; userId: string }): ReactNode {
  const [lookback, setLookback] = useState<Lookback>("all");
  const [offset, setOffset] = useState(0);
  const state = useLoad(
    () =>
      props.client.memberExposure(props.userId, {
        since: sinceFor(lookback),
        limit: PAGE,
        offset,
      }),
    [props.client, props.userId, lookback, offset],
  );
  return (
    <section className="admin-page">
      <p>
        <NavLink to="/admin/exposure">All members</NavLink>
      </p>
      <h1>{memberHeading(state.status === "ready" ? state.data : null)}</h1>
      <div className="filters">
        <LookbackSelect
          id="member-exposure-window"
          label="Answered"
          value={lookback}
          onChange={(value) => {
            setOffset(0);
            setLookback(value);
          }}
        />
      </div>
      <LoadState state={state} what="the member's exposure">
        {(report) => <MemberExposure report={report} onPage={setOffset} />}
      </LoadState>
    </section>
  );
}

export function MemberExposure(props: {
  report: MemberExposureReport;
  onPage: (offset: number) => void;
}): ReactNode {
  const r = props.report;
  const m = r.member;
  const restricted = restrictedText(m);
  return (
    <>
      <p className="muted" data-testid="exposure-budget">
        {budgetText(r.budget)}
      </p>
      {r.turns_total === 0 ? (
        <p className="muted" data-testid="exposure-empty">
          {EMPTY_MEMBER_EXPOSURE}
        </p>
      ) : (
        <>
          <p data-testid="member-totals">{memberTotals(m, r.internal_cards)}</p>
          {restricted && (
            <p className="flag" data-testid="member-restricted">
              <span className="badge badge-flag">restricted</span> {restricted}: the budget was
              spent, so these answers used external knowledge only.
            </p>
          )}
          <h2>Per day (UTC)</h2>
          <DaysTable days={r.days} />
          <h2>Answers</h2>
          <TurnsTable turns={r.turns} />
          <Pager
            offset={r.offset}
            pageSize={r.limit}
            total={r.turns_total}
            onChange={props.onPage}
          />
        </>
      )}
    </>
  );
}

const DAY_COLUMNS: readonly Column<ExposureDay>[] = [
  { header: "Day", cell: (d) => d.day },
  { header: "Internal cards", numeric: true, cell: (d) => d.cards },
  { header: "Verbatim sentences", numeric: true, cell: (d) => d.verbatim_sentences },
  { header: "Answers", numeric: true, cell: (d) => d.turns },
  { header: "Restricted", numeric: true, cell: (d) => d.restricted_turns },
];

function DaysTable(props: { days: readonly ExposureDay[] }): ReactNode {
  return (
    <DataTable
      label="Exposure per day"
      className="exposure-days"
      columns={DAY_COLUMNS}
      rows={newestFirst(props.days)}
      rowKey={(d) => d.day}
      empty="No day in this period drew on internal knowledge."
    />
  );
}

const TURN_COLUMNS: readonly Column<ExposureTurn>[] = [
  { header: "Answered", cell: (t) => formatDate(t.created_at) },
  {
    header: "Question",
    className: "gap-question",
    cell: (t) => (
      <NavLink to={conversationPath(t.conversation_id)}>
        {t.question ?? "(question missing)"}
      </NavLink>
    ),
  },
  {
    header: "Internal cards",
    cell: (t) =>
      t.restricted ? (
        <span className="badge badge-flag">restricted: external knowledge only</span>
      ) : (
        <ul className="exposure-card-list">
          {t.cards.map((c) => (
            <li key={c.card_id}>
              <CardLink id={c.card_id} />
              {c.title && <span className="muted"> {c.title}</span>}
              <br />
              <span className="muted">{cardExposure(c)}</span>
            </li>
          ))}
        </ul>
      ),
  },
];

function TurnsTable(props: { turns: readonly ExposureTurn[] }): ReactNode {
  return (
    <DataTable
      label="Answers with internal knowledge"
      className="exposure-turns"
      columns={TURN_COLUMNS}
      rows={props.turns}
      rowKey={(t) => t.message_id}
      rowClassName={() => "exposure-turn"}
      rowData={(t) => ({ message: t.message_id })}
      empty="No more answers."
    />
  );
}
