/**
 * What a member can do with a finished answer: rate it, copy it as plain prose, and have the
 * newest one answered again.
 */
import { useEffect, useState, type ReactNode } from "react";

import { answerPlainText } from "../chat/plainText";
import type { DisplayTurn } from "../chat/state";
import { Feedback, type RateAnswer } from "./Feedback";

export function AnswerActions(props: {
  turn: DisplayTurn;
  /** Offer Regenerate (the newest stored answer, nothing streaming). */
  canRegenerate: boolean;
  onRegenerate: () => void;
  /** Rate this answer; absent until the server has stored it. */
  onRate: RateAnswer | null;
}): ReactNode {
  const { turn } = props;
  const [copied, setCopied] = useState<string | null>(null);

  useEffect(() => {
    if (copied === null) return;
    const timer = window.setTimeout(() => setCopied(null), 2500);
    return () => window.clearTimeout(timer);
  }, [copied]);

  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(answerPlainText(turn.content));
      setCopied("Copied.");
    } catch {
      setCopied("Could not copy: the browser did not allow it.");
    }
  };

  return (
    <div className="answer-actions">
      {/* The rating comes first: it is what an answer asks of the member. */}
      {props.onRate && <Feedback feedback={turn.feedback} onRate={props.onRate} />}
      {turn.content && (
        <button
          type="button"
          className="action-button"
          aria-label="Copy answer"
          onClick={() => void copy()}
        >
          Copy
        </button>
      )}
      {props.canRegenerate && (
        <button
          type="button"
          className="action-button"
          aria-label="Regenerate answer"
          onClick={props.onRegenerate}
        >
          Regenerate
        </button>
      )}
      <span className="copy-note" role="status">
        {copied}
      </span>
    </div>
  );
}
