/** One message of the conversation: the question, or the answer with its sources. */
import type { ReactNode } from "react";

import { SafeMarkdown } from "../markdown/SafeMarkdown";
import type { DisplayTurn } from "./ChatPage";
import { SourcesPanel } from "./SourcesPanel";

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
  return (
    <li className="turn turn-assistant" aria-busy={t.pending}>
      <h2 className="visually-hidden">Answer</h2>
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
      {!t.pending && !t.error && <SourcesPanel sources={t.sources} hybridPath={t.hybridPath} />}
    </li>
  );
}
