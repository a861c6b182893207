/** What an admin page says instead of a table when there is nothing to show. */
import type { ReactNode } from "react";

export function EmptyState(props: { children: ReactNode; testId?: string }): ReactNode {
  return (
    <p className="empty-state" data-testid={props.testId ?? "empty-state"}>
      {props.children}
    </p>
  );
}
