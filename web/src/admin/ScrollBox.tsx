/**
 * A box whose content may scroll (a wide table on a phone, a long metadata value): focusable
 * and labelled, so a keyboard user can reach it and scroll it with the arrow keys (axe:
 * scrollable-region-focusable).
 */
import type { ReactNode } from "react";

export function ScrollBox(props: {
  label: string;
  className?: string;
  testId?: string;
  children: ReactNode;
}): ReactNode {
  return (
    <div
      className={props.className ?? "table-wrap"}
      tabIndex={0}
      role="group"
      aria-label={props.label}
      data-testid={props.testId}
    >
      {props.children}
    </div>
  );
}
