/**
 * The question box: Enter sends, Shift+Enter adds a line. While an answer streams in, the
 * button stops it instead (the box stays editable for the next question). The text belongs to
 * the page, so a question whose answer failed can come back into the box.
 */
import type { FormEvent, KeyboardEvent, ReactNode, Ref } from "react";

export interface ComposerProps {
  value: string;
  onChange: (value: string) => void;
  onSend: (message: string) => void;
  onStop: () => void;
  /** An answer is streaming in. */
  busy: boolean;
  /** Why no question can be sent here (the box is disabled), or null. */
  unavailable: string | null;
  /** The conversation is loading: nothing can be sent yet, but the box stays enabled, so
   * focus put there (after choosing a conversation) is not lost. */
  loading?: boolean;
  ref?: Ref<HTMLTextAreaElement>;
}

export function Composer(props: ComposerProps): ReactNode {
  const { value, onChange, onSend, onStop, busy, unavailable, ref } = props;
  const loading = props.loading ?? false;
  const submit = (e?: FormEvent): void => {
    e?.preventDefault();
    const message = value.trim();
    if (!message || busy || unavailable) return;
    onSend(message);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>): void => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
  };
  return (
    <form className="composer" onSubmit={submit}>
      <label htmlFor="question" className="visually-hidden">
        Your question
      </label>
      <textarea
        id="question"
        ref={ref}
        rows={2}
        placeholder={unavailable ?? "Ask a question…"}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={onKeyDown}
        maxLength={4000}
        disabled={unavailable !== null && !loading}
        aria-busy={loading || undefined}
      />
      {busy ? (
        <button type="button" className="stop-button" aria-label="Stop answering" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" disabled={unavailable !== null || !value.trim()}>
          Send
        </button>
      )}
    </form>
  );
}
