/**
 * Exposure (admin): members ranked by how much of the internal knowledge base reached them
 * (distinct internal cards, their share of the internal corpus, internal sentences repeated word
 * for word), and which of them the exposure budget restricted. Each member links to a drill-down.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ExposureBudget, ExposureMember, ExposureReport } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate, formatRate, plural } from "../components/format";
import { useLoad } from "../components/useLoad";
import { ScrollBox } from "./ScrollBox";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";

export const EMPTY_EXPOSURE = "No member has received internal knowledge in this period.";

export function memberExposurePath(userId: string): string {
  return `/admin/exposure/${encodeURIComponent(userId)}`;
}

/** A budget window for a person: whole days as days, anything else in hours. */
export function formatWindow(hours: number): string {
  if (hours >= 24 && hours % 24 === 0) return plural(hours / 24, "day", "days");
  return plural(Number(hours.toFixed(2)), "hour", "hours");
}

/** One line on the budget in force. */
export function budgetText(budget: ExposureBudget): string {
  if (budget.cards <= 0) return "The exposure budget is off: no member's answers are limited.";
  return (
    `Budget: ${plural(budget.cards, "internal card", "internal cards")} per member per ` +
    `${formatWindow(budget.window_hours)}; past it, a member's answers use external knowledge only.`
  );
}

/** The alert column: how many answers the budget restricted, and since when; "" for none. */
export function restrictedText(
  m: Pick<ExposureMember, "restricted_turns" | "first_restricted">,
): string {
  if (m.restricted_turns <= 0) return "";
  return `${plural(m.restricted_turns, "answer", "answers")} restricted since ${formatDate(m.first_restricted)}`;
}

/** One line on what the table holds; says so when only the most exposed members are shown. */
export function exposureSummary(r: ExposureReport): string {
  const corpus = `of ${plural(r.internal_cards, "internal card", "internal cards")}`;
  const who = plural(r.members_total, "member", "members");
  if (r.members.length < r.members_total) {
    return `${who} received internal knowledge (${corpus}); the ${r.members.length} most exposed are shown.`;
  }
  return `${who} received internal knowledge (${corpus}).`;
}

export function AdminExposure(props: { client: ApiClient }): ReactNode {
  const [lookback, setLookback] = useState<Lookback>("all");
  const state = useLoad(
    () => props.client.exposure({ since: sinceFor(lookback) }),
    [props.client, lookback],
  );
  return (
    <section className="admin-page">
      <h1>Exposure</h1>
      <p className="muted">
        How much of the internal knowledge base reached each member: the internal cards their
        answers drew on, and the internal sentences the answers repeated word for word.
      </p>
      <div className="filters">
        <LookbackSelect
          id="exposure-window"
          label="Answered"
          value={lookback}
          onChange={setLookback}
        />
      </div>
      <LoadState state={state} what="exposure">
        {(report) => <ExposureRanking report={report} />}
      </LoadState>
    </section>
  );
}

export function ExposureRanking(props: { report: ExposureReport }): ReactNode {
  const r = props.report;
  return (
    <>
      <p className="muted" data-testid="exposure-budget">
        {budgetText(r.budget)}
      </p>
      {r.members.length === 0 ? (
        <p className="muted" data-testid="exposure-empty">
          {EMPTY_EXPOSURE}
        </p>
      ) : (
        <>
          <p className="muted" role="status">
            {exposureSummary(r)}
          </p>
          <ScrollBox label="Members by exposure">
            <table className="exposure-table">
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col" className="num">
                    Internal cards
                  </th>
                  <th scope="col" className="num">
                    % of internal corpus
                  </th>
                  <th scope="col" className="num">
                    Verbatim sentences
                  </th>
                  <th scope="col" className="num">
                    Answers
                  </th>
                  <th scope="col" className="num">
                    Longest span
                  </th>
                  <th scope="col">Last exposed</th>
                  <th scope="col">Restricted</th>
                </tr>
              </thead>
              <tbody>
                {r.members.map((m) => (
                  <MemberRow key={m.user_id} member={m} />
                ))}
              </tbody>
            </table>
          </ScrollBox>
        </>
      )}
    </>
  );
}

function MemberRow(props: { member: ExposureMember }): ReactNode {
  const m = props.member;
  const restricted = restrictedText(m);
  return (
    <tr className={restricted ? "exposure-row flagged" : "exposure-row"}>
      <td>
        <NavLink to={memberExposurePath(m.user_id)}>{m.name}</NavLink>{" "}
        {m.role !== "member" && <span className="badge">{m.role}</span>}
      </td>
      <td className="num exposure-cards">{m.cards}</td>
      <td className="num">{formatRate(m.corpus_share)}</td>
      <td className="num">{m.verbatim_sentences}</td>
      <td className="num">{m.turns}</td>
      <td className="num">{m.longest_span > 0 ? plural(m.longest_span, "word", "words") : "—"}</td>
      <td>{formatDate(m.last_exposed)}</td>
      <td data-testid="restricted">
        {restricted ? <span className="badge badge-flag">{restricted}</span> : "—"}
      </td>
    </tr>
  );
}
