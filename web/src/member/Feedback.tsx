/**
 * Thumbs up or down on an answer, with an optional comment. Pressing the chosen rating again
 * withdraws it. "Not helpful" opens the comment box straight away (what was wrong is the
 * useful part); "Helpful" offers it.
 */
import { useId, useState, type FormEvent, type ReactNode } from "react";

import type { FeedbackPublic, Rating } from "../api/types";
import type { ChatProblem } from "../chat/problems";

export type RateAnswer = (
  rating: Rating | null,
  comment?: string | null,
) => Promise<ChatProblem | null>;

const COMMENT_MAX = 2000;

export function Feedback(props: {
  feedback: FeedbackPublic | null;
  onRate: RateAnswer;
}): ReactNode {
  const current = props.feedback?.rating ?? null;
  const [editing, setEditing] = useState(false);
  const [comment, setComment] = useState("");
  const [note, setNote] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const commentId = useId();

  const save = async (rating: Rating | null, text: string | null): Promise<boolean> => {
    setSaving(true);
    const problem = await props.onRate(rating, text);
    setSaving(false);
    setNote(problem ? problem.message : null);
    return problem === null;
  };

  const choose = async (rating: Rating): Promise<void> => {
    if (rating === current) {
      if (await save(null, null)) {
        setEditing(false);
        setNote("Feedback withdrawn.");
      }
      return;
    }
    const kept = props.feedback?.comment ?? null;
    if (await save(rating, kept)) {
      setNote("Thanks for your feedback.");
      setComment(kept ?? "");
      setEditing(rating === "down");
    }
  };

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!current) return;
    const text = comment.trim();
    if (await save(current, text || null)) {
      setEditing(false);
      setNote(text ? "Thanks, your comment was saved." : "Thanks for your feedback.");
    }
  };

  return (
    <div className="feedback">
      <div className="feedback-buttons" role="group" aria-label="Rate this answer">
        <button
          type="button"
          className="feedback-button"
          aria-pressed={current === "up"}
          disabled={saving}
          onClick={() => void choose("up")}
        >
          Helpful
        </button>
        <button
          type="button"
          className="feedback-button"
          aria-pressed={current === "down"}
          disabled={saving}
          onClick={() => void choose("down")}
        >
          Not helpful
        </button>
        {current && !editing && (
          <button
            type="button"
            className="link-button feedback-comment-open"
            onClick={() => {
              setComment(props.feedback?.comment ?? "");
              setEditing(true);
            }}
          >
            {props.feedback?.comment ? "Edit comment" : "Add a comment"}
          </button>
        )}
      </div>
      {editing && current && (
        <form className="feedback-form" onSubmit={(e) => void submit(e)}>
          <label htmlFor={commentId}>
            {current === "down" ? "What was wrong? (optional)" : "Comment (optional)"}
          </label>
          <textarea
            id={commentId}
            rows={2}
            maxLength={COMMENT_MAX}
            autoFocus
            value={comment}
            onChange={(e) => setComment(e.target.value)}
          />
          <div className="feedback-form-buttons">
            <button type="submit" disabled={saving}>
              Send feedback
            </button>
            <button type="button" className="secondary-button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <p className="feedback-note" role="status">
        {note}
      </p>
    </div>
  );
}
