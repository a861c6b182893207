/**
 * A button whose action is asked about first, in the page (no `window.confirm`): the first
 * click shows the question with a button that does it and Cancel; focus moves to the question's
 * button, and Cancel or Escape returns it to the first.
 */
import { useEffect, useRef, useState, type ReactNode } from "react";

export function ConfirmButton(props: {
  /** The first button's words ("Roll back to version 2"). */
  label: string;
  /** What is asked ("Roll back to version 2? Its text is saved as a new version."). */
  question: string;
  /** The button that does it ("Roll back"). */
  confirm: string;
  disabled?: boolean;
  onConfirm: () => void;
}): ReactNode {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const back = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (back.current) first.current?.focus();
  }, [asking]);
  const cancel = (): void => {
    back.current = true;
    setAsking(false);
  };
  if (!asking) {
    return (
      <button ref={first} type="button" disabled={props.disabled} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span
      className="confirm"
      role="group"
      aria-label={props.question}
      onKeyDown={(e) => {
        if (e.key === "Escape") cancel();
      }}
    >
      <span>{props.question}</span>{" "}
      <button
        ref={yes}
        type="button"
        className="danger-button"
        disabled={props.disabled}
        onClick={() => {
          back.current = false;
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirm}
      </button>{" "}
      <button type="button" className="quiet-button" onClick={cancel}>
        Cancel
      </button>
    </span>
  );
}
