/**
 * One message of the conversation: the question, or the answer with its sources and actions.
 * A `not_found` answer (the knowledge base does not answer it) is its one sentence with a quiet
 * label, a suggestion to rephrase, and no sources panel at all. A question in another language than
 * the knowledge base's (`other_language`) gets one sentence, in that language where the server
 * has it, saying which language the assistant answers in; no sources. A reply to small talk
 * (`small_talk`: "hi", "thanks") is its friendly sentence, with no label and no sources: it is
 * neither an answer from the knowledge base nor a failure to find one. A stopped answer keeps what was
 * said, labelled. A failed one says what went wrong in plain words, with Retry when it may
 * help. An answer a regenerated one replaced stays, folded away.
 */
import type { ReactNode } from "react";

import type { ChatProblem } from "../chat/problems";
import { isStored, wordsRemoved, type DisplayTurn } from "../chat/state";
import { fullTime, shortTime } from "../chat/time";
import { SafeMarkdown } from "../markdown/SafeMarkdown";
import { AnswerActions } from "./AnswerActions";
import type { RateAnswer } from "./Feedback";
import type { Audience } from "./relevance";
import { SourcesPanel } from "./SourcesPanel";

export const NOT_FOUND_LABEL = "Not answered from the knowledge base";
export const REPHRASE_HINT =
  "Try asking in other words, or about a topic the knowledge base covers.";
export const OTHER_LANGUAGE_LABEL = "Asked in another language";
export const STOPPED_LABEL = "Stopped";
export const STOPPED_EMPTY = "Stopped before any answer was given.";
/** In place of a message whose words retention removed (the admin pages say "removed under
 * retention"). */
export const REMOVED_MESSAGE = "This message was removed under the retention policy.";

function RemovedWords(): ReactNode {
  return <span className="removed-words muted">{REMOVED_MESSAGE}</span>;
}

/** The label shown with a finished answer, or null for an ordinary one. */
export function answerLabel(t: DisplayTurn): string | null {
  if (t.role !== "assistant" || t.pending || t.error) return null;
  if (t.answerStatus === "not_found") return NOT_FOUND_LABEL;
  if (t.answerStatus === "other_language") return OTHER_LANGUAGE_LABEL;
  if (t.answerStatus === "stopped") return STOPPED_LABEL;
  return null;
}

/** Whether a finished answer shows its sources panel (never for `not_found`, `other_language`,
 * `small_talk`). */
export function showsSources(t: DisplayTurn): boolean {
  return (
    t.role === "assistant" &&
    !t.pending &&
    !t.error &&
    t.answerStatus !== "not_found" &&
    t.answerStatus !== "other_language" &&
    t.answerStatus !== "small_talk" &&
    !(t.answerStatus === "stopped" && t.sources.length === 0)
  );
}

/** What the member can do with an answer turn (absent: nothing, as in a static render). */
export interface TurnActions {
  /** An answer is streaming in (no Retry or Regenerate meanwhile). */
  busy: boolean;
  /** This is the newest answer (Regenerate answers its question again). */
  latest: boolean;
  /** Asking again can give a different answer (false: the generator is deterministic, so
   * Regenerate is not offered; rephrasing the question is the honest way to another answer). */
  regenerates: boolean;
  onRetry: (turn: DisplayTurn) => void;
  onRegenerate: () => void;
  onRate: (messageId: string, ...rest: Parameters<RateAnswer>) => ReturnType<RateAnswer>;
}

export function Turn(props: {
  turn: DisplayTurn;
  /** "Now", for timestamps (today's show the time only). */
  now?: Date;
  audience?: Audience;
  /** A later, regenerated answer replaced this one. */
  replaced?: boolean;
  actions?: TurnActions;
}): ReactNode {
  const t = props.turn;
  const time = t.createdAt && props.now ? <TurnTime at={t.createdAt} now={props.now} /> : null;
  if (t.role === "user") {
    return (
      <li className="turn turn-user">
        <h2 className="visually-hidden">You asked</h2>
        <p className="question">{wordsRemoved(t) ? <RemovedWords /> : t.content}</p>
        {time}
      </li>
    );
  }
  const label = answerLabel(t);
  const removed = wordsRemoved(t);
  const body = (
    <>
      {label && (
        <p className="answer-status" data-testid="answer-status">
          {label}
        </p>
      )}
      <div className="answer" data-testid="answer">
        {removed ? (
          <p>
            <RemovedWords />
          </p>
        ) : t.content ? (
          <SafeMarkdown source={t.content} stripCitationMarkers />
        ) : (
          <AnswerPlaceholder turn={t} />
        )}
      </div>
      {label === NOT_FOUND_LABEL && !removed && <p className="rephrase-hint">{REPHRASE_HINT}</p>}
      {t.error && <TurnError problem={t.error} turn={t} actions={props.actions} />}
      {showsSources(t) && (
        <SourcesPanel sources={t.sources} hybridPath={t.hybridPath} audience={props.audience} />
      )}
      {!t.pending && !t.error && (
        <div className="turn-footer">
          {time}
          <TurnButtons turn={t} actions={props.actions} />
        </div>
      )}
    </>
  );
  const classes = ["turn", "turn-assistant"];
  if ((t.answerStatus === "not_found" || t.answerStatus === "other_language") && label)
    classes.push("turn-not-found");
  if (t.answerStatus === "stopped" && label) classes.push("turn-stopped");
  if (props.replaced) classes.push("turn-replaced");
  return (
    // Focusable from script only: Retry, Regenerate and Stop move focus to the answer.
    <li className={classes.join(" ")} aria-busy={t.pending} tabIndex={-1}>
      {props.replaced ? (
        <details className="earlier-answer">
          <summary>
            <h2 className="earlier-answer-heading">Earlier answer</h2>
            <span className="muted"> (replaced by a newer one)</span>
          </summary>
          {body}
        </details>
      ) : (
        <>
          <h2 className="visually-hidden">Answer</h2>
          {body}
        </>
      )}
    </li>
  );
}

function AnswerPlaceholder(props: { turn: DisplayTurn }): ReactNode {
  const t = props.turn;
  if (t.pending) return <p className="muted">Thinking…</p>;
  if (t.answerStatus === "stopped") return <p className="muted">{STOPPED_EMPTY}</p>;
  return null;
}

function TurnError(props: {
  problem: ChatProblem;
  turn: DisplayTurn;
  actions: TurnActions | undefined;
}): ReactNode {
  const { problem, turn, actions } = props;
  return (
    <div className="turn-error" role="alert">
      <p className="error">{problem.message}</p>
      {problem.retry && actions && (
        <button type="button" disabled={actions.busy} onClick={() => actions.onRetry(turn)}>
          Retry
        </button>
      )}
    </div>
  );
}

function TurnButtons(props: { turn: DisplayTurn; actions: TurnActions | undefined }): ReactNode {
  const { turn, actions } = props;
  if (!actions) return null;
  // Stopped before any prose: nothing was stored, so the question is asked again.
  if (!isStored(turn)) {
    return (
      <div className="answer-actions">
        <button
          type="button"
          className="action-button"
          disabled={actions.busy}
          onClick={() => actions.onRetry(turn)}
        >
          Retry
        </button>
      </div>
    );
  }
  const messageId = turn.messageId;
  return (
    <AnswerActions
      turn={turn}
      canRegenerate={actions.regenerates && actions.latest && !actions.busy}
      onRegenerate={actions.onRegenerate}
      onRate={
        messageId === null ? null : (rating, comment) => actions.onRate(messageId, rating, comment)
      }
    />
  );
}

function TurnTime(props: { at: string; now: Date }): ReactNode {
  const short = shortTime(props.at, props.now);
  if (!short) return null;
  return (
    <time className="turn-time" dateTime={props.at} title={fullTime(props.at) ?? undefined}>
      {short}
    </time>
  );
}
