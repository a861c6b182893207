/**
 * One message of the conversation: the question, or the answer with its sources. A `not_found`
 * answer (the knowledge base does not answer it) is its one sentence with a quiet label and no
 * sources panel at all.
 */
import type { ReactNode } from "react";

import { SafeMarkdown } from "../markdown/SafeMarkdown";
import type { DisplayTurn } from "./ChatPage";
import { SourcesPanel } from "./SourcesPanel";

export const NOT_FOUND_LABEL = "Not answered from the knowledge base";

/** The label shown with a finished answer, or null for an ordinary one. */
export function answerLabel(t: DisplayTurn): string | null {
  if (t.role !== "assistant" || t.pending || t.error) return null;
  return t.answerStatus === "not_found" ? NOT_FOUND_LABEL : null;
}

/** Whether a finished answer shows its sources panel (never for `not_found`). */
export function showsSources(t: DisplayTurn): boolean {
  return t.role === "assistant" && !t.pending && !t.error && t.answerStatus !== "not_found";
}

export function Turn(props: { turn: DisplayTurn }): ReactNode {
  const t = props.turn;
  if (t.role === "user") {
    return (
      <li className="turn turn-user">
        <h2 className="visually-hidden">You asked</h2>
        <p className="question">{t.content}</p>
      </li>
    );
  }
  const label = answerLabel(t);
  return (
    <li
      className={label ? "turn turn-assistant turn-not-found" : "turn turn-assistant"}
      aria-busy={t.pending}
    >
      <h2 className="visually-hidden">Answer</h2>
      {label && (
        <p className="answer-status" data-testid="answer-status">
          {label}
        </p>
      )}
      <div className="answer" data-testid="answer">
        {t.content ? (
          <SafeMarkdown source={t.content} stripCitationMarkers />
        ) : (
          t.pending && <p className="muted">Thinking…</p>
        )}
      </div>
      {t.error && (
        <p className="error" role="alert">
          {t.error}
        </p>
      )}
      {showsSources(t) && <SourcesPanel sources={t.sources} hybridPath={t.hybridPath} />}
    </li>
  );
}
