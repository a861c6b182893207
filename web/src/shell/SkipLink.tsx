/**
 * The first stop of the Tab order: "Skip to question" on the chat (past the header and the
 * conversation list), "Skip to main content" elsewhere. Shown only while it has focus. The
 * click is handled here so the URL keeps no `#fragment`.
 */
import type { MouseEvent, ReactNode } from "react";

import { focusStart, MAIN_ID, QUESTION_ID } from "./focus";

export function SkipLink(props: { to: "question" | "main"; inert?: boolean }): ReactNode {
  const question = props.to === "question";
  const onClick = (e: MouseEvent<HTMLAnchorElement>): void => {
    e.preventDefault();
    if (question) focusStart();
    else document.getElementById(MAIN_ID)?.focus();
  };
  return (
    <a
      className="skip-link"
      href={`#${question ? QUESTION_ID : MAIN_ID}`}
      onClick={onClick}
      inert={props.inert}
    >
      {question ? "Skip to question" : "Skip to main content"}
    </a>
  );
}
