/**
 * The conversation list beside the chat: a sidebar on wide screens, a drawer on a phone
 * (a modal `role="dialog"`: Tab stays inside; Escape, the close button or the backdrop close
 * it; see `useDrawer`).
 */
import type { KeyboardEvent, ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ConversationSummary } from "../api/types";
import { ConversationList } from "../member/ConversationList";
import { navigate } from "../router";
import { focusQuestion } from "./focus";
import { keepTabInside } from "./focusTrap";
import { DRAWER_ID, type Drawer } from "./useDrawer";

export function ConversationsPanel(props: {
  client: ApiClient;
  currentId: string | null;
  version: number;
  drawer: Drawer;
  onRenamed: (c: ConversationSummary) => void;
  onDeleted: (id: string) => void;
  /** "New conversation" was pressed (before it navigates to `/`). */
  onNew: () => void;
}): ReactNode {
  const { drawer } = props;
  const modal = drawer.open;

  // Having gone somewhere, the reader writes next: focus the question box.
  const opened = (): void => {
    if (modal) drawer.hide("question");
  };
  const startNew = (): void => {
    props.onNew();
    navigate("/");
    if (modal) drawer.hide("question");
    else focusQuestion();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>): void => {
    if (!modal) return;
    if (e.key === "Escape") {
      e.preventDefault();
      drawer.hide("toggle");
    } else {
      keepTabInside(e, e.currentTarget);
    }
  };

  return (
    <>
      {modal && <div className="drawer-backdrop" onClick={() => drawer.hide("toggle")} />}
      <div
        id={DRAWER_ID}
        className="conversations"
        role={modal ? "dialog" : "complementary"}
        aria-modal={modal || undefined}
        aria-labelledby="conversations-heading"
        tabIndex={modal ? -1 : undefined}
        data-open={modal || undefined}
        onKeyDown={onKeyDown}
      >
        <div className="conversations-head">
          <h2 id="conversations-heading">Conversations</h2>
          {drawer.narrow && (
            <button
              type="button"
              className="drawer-close"
              aria-label="Close conversations"
              onClick={() => drawer.hide("toggle")}
            >
              <span aria-hidden="true">×</span>
            </button>
          )}
        </div>
        <button type="button" className="new-conversation" onClick={startNew}>
          New conversation
        </button>
        <ConversationList
          client={props.client}
          currentId={props.currentId}
          version={props.version}
          onOpen={opened}
          onRenamed={props.onRenamed}
          onDeleted={props.onDeleted}
        />
      </div>
    </>
  );
}
