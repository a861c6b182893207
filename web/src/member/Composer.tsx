/** The question box: Enter sends, Shift+Enter adds a line. */
import { useRef, useState, type FormEvent, type KeyboardEvent, type ReactNode } from "react";

export function Composer(props: { onSend: (message: string) => void; busy: boolean }): ReactNode {
  const [text, setText] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  const submit = (e?: FormEvent): void => {
    e?.preventDefault();
    const message = text.trim();
    if (!message || props.busy) return;
    setText("");
    props.onSend(message);
    area.current?.focus();
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
        ref={area}
        rows={2}
        placeholder="Ask a question…"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        maxLength={4000}
      />
      <button type="submit" disabled={props.busy || !text.trim()}>
        {props.busy ? "Answering…" : "Send"}
      </button>
    </form>
  );
}
