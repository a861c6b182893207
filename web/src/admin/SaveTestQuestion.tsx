/**
 * "Save as test question" on a stored answer: the admin picks the card that should have
 * answered the question (one of the answer's sources, or any card id), or marks it
 * unanswerable, and may list facts the answer must state. Saved questions are exported as the
 * questions file of `citewall eval kb` (`/api/v1/admin/eval-questions.jsonl`).
 */
import { useId, useState, type FormEvent, type ReactNode } from "react";

import type { EvalQuestionAdmin, EvalQuestionCreate } from "../api/types";

export type SaveQuestion = (body: EvalQuestionCreate) => Promise<EvalQuestionAdmin>;

/** Where saved questions are exported (named under a saved question). */
export const EXPORT_PATH = "/api/v1/admin/eval-questions.jsonl";

/** The request the form's values make: the chosen card (or none when unanswerable) and one
 * fact per non-empty line. */
export function questionRequest(
  messageId: string,
  source: EvalQuestionCreate["source"],
  choice: { unanswerable: boolean; card: string; facts: string },
): EvalQuestionCreate {
  const card = choice.card.trim();
  return {
    message_id: messageId,
    source,
    unanswerable: choice.unanswerable,
    expected: choice.unanswerable || !card ? [] : [card],
    facts: choice.unanswerable
      ? []
      : choice.facts
          .split("\n")
          .map((f) => f.trim())
          .filter((f) => f.length > 0),
  };
}

export function SaveTestQuestion(props: {
  messageId: string;
  /** The answer's cited cards, offered first. */
  cards: readonly string[];
  source: EvalQuestionCreate["source"];
  onSave: SaveQuestion;
}): ReactNode {
  const id = useId();
  const [unanswerable, setUnanswerable] = useState(false);
  const [card, setCard] = useState(props.cards[0] ?? "");
  const [facts, setFacts] = useState("");
  const [saving, setSaving] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!unanswerable && !card.trim()) {
      setOutcome({
        ok: false,
        text: "Pick the card that should have answered, or mark it unanswerable.",
      });
      return;
    }
    setSaving(true);
    try {
      const saved = await props.onSave(
        questionRequest(props.messageId, props.source, { unanswerable, card, facts }),
      );
      setOutcome({ ok: true, text: `Saved as test question saved-${saved.id}.` });
    } catch (error) {
      setOutcome({ ok: false, text: error instanceof Error ? error.message : String(error) });
    } finally {
      setSaving(false);
    }
  };

  return (
    <details className="save-test-question" data-testid="save-test-question" data-app-control>
      <summary>Save as test question</summary>
      <form onSubmit={(e) => void submit(e)} data-app-control>
        <fieldset>
          <legend>What should have answered this question?</legend>
          <label>
            <input
              type="radio"
              name={`${id}-kind`}
              checked={!unanswerable}
              onChange={() => setUnanswerable(false)}
            />{" "}
            This card:
          </label>{" "}
          <input
            aria-label="Card id"
            list={`${id}-cards`}
            value={card}
            disabled={unanswerable}
            onChange={(e) => setCard(e.target.value)}
            data-testid="test-question-card"
          />
          <datalist id={`${id}-cards`}>
            {props.cards.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
          <br />
          <label>
            <input
              type="radio"
              name={`${id}-kind`}
              checked={unanswerable}
              onChange={() => setUnanswerable(true)}
              data-testid="test-question-unanswerable"
            />{" "}
            Nothing: the knowledge base cannot answer it
          </label>
        </fieldset>
        <label>
          Facts the answer must state (one a line, optional)
          <br />
          <textarea
            rows={2}
            value={facts}
            disabled={unanswerable}
            onChange={(e) => setFacts(e.target.value)}
            data-testid="test-question-facts"
          />
        </label>
        <br />
        <button type="submit" disabled={saving}>
          Save test question
        </button>
      </form>
      {outcome && (
        <p className={outcome.ok ? "hint" : "error"} role={outcome.ok ? "status" : "alert"}>
          {outcome.text}
          {outcome.ok && (
            <>
              {" "}
              Saved questions are exported by <code>GET {EXPORT_PATH}</code>.
            </>
          )}
        </p>
      )}
    </details>
  );
}
