/**
 * "Talk to a person": the member asks for someone from the team, with an optional message, on
 * the open conversation. Always available once the conversation has a turn; offered on its
 * own, with a line saying why, after an answer that found nothing in the knowledge base or one
 * the member rated "Not helpful". Shown only when the server has a helpdesk to hand over to.
 * Once the server has stored the request, the member sees that it was received.
 */
import { useId, useState, type FormEvent, type ReactNode } from "react";

import { ApiError, type ApiClient } from "../api/client";
import type { HandoffReceipt } from "../api/types";
import type { DisplayTurn } from "../chat/state";
import { latestAnswer } from "../chat/state";

const MESSAGE_MAX = 2000;

/** Whether the latest answer calls for a person on its own: nothing found, or "Not helpful". */
export function handoffOffered(turns: readonly DisplayTurn[]): boolean {
  const latest = latestAnswer(turns);
  if (!latest || latest.pending) return false;
  return latest.answerStatus === "not_found" || latest.feedback?.rating === "down";
}

type Step =
  | { kind: "idle" }
  | { kind: "writing" }
  | { kind: "sending" }
  | { kind: "received"; receipt: HandoffReceipt; turns: number }
  | { kind: "failed"; message: string };

export function Handoff(props: {
  client: ApiClient;
  conversationId: string;
  turns: readonly DisplayTurn[];
  busy: boolean;
}): ReactNode {
  const [step, setStep] = useState<Step>({ kind: "idle" });
  const [message, setMessage] = useState("");
  const messageId = useId();
  const offered = handoffOffered(props.turns);

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setStep({ kind: "sending" });
    try {
      const receipt = await props.client.requestHandoff(
        props.conversationId,
        message.trim() || null,
      );
      setMessage("");
      setStep({ kind: "received", receipt, turns: props.turns.length });
    } catch (err) {
      const text = err instanceof ApiError ? err.message : "The request could not be sent.";
      setStep({ kind: "failed", message: text });
    }
  };

  // A new question since the request: the member may ask for a person again.
  const current: Step =
    step.kind === "received" && step.turns !== props.turns.length ? { kind: "idle" } : step;

  if (current.kind === "received") {
    return (
      <div className="handoff handoff-received" role="status">
        <p>
          Request received. A person from the team will get back to you; they can read this
          conversation.
        </p>
      </div>
    );
  }
  if (current.kind === "writing" || current.kind === "sending") {
    const sending = current.kind === "sending";
    return (
      <form
        className="handoff handoff-form"
        aria-label="Talk to a person"
        onSubmit={(e) => void submit(e)}
      >
        <label htmlFor={messageId}>Anything to add for them? (optional)</label>
        <textarea
          id={messageId}
          value={message}
          maxLength={MESSAGE_MAX}
          rows={3}
          onChange={(e) => setMessage(e.target.value)}
          disabled={sending}
        />
        <div className="handoff-buttons">
          <button type="submit" disabled={sending}>
            {sending ? "Sending…" : "Send request"}
          </button>
          <button type="button" onClick={() => setStep({ kind: "idle" })} disabled={sending}>
            Cancel
          </button>
        </div>
      </form>
    );
  }
  return (
    <div className={offered ? "handoff handoff-offered" : "handoff"}>
      {offered && <p>Not what you needed? A person from the team can pick this up.</p>}
      {current.kind === "failed" && (
        <p className="handoff-problem" role="alert">
          {current.message}
        </p>
      )}
      <button type="button" onClick={() => setStep({ kind: "writing" })} disabled={props.busy}>
        Talk to a person
      </button>
    </div>
  );
}
