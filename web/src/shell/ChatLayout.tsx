/**
 * The chat route: the conversation list (sidebar or drawer) and, as the page's main content,
 * the chat page. The list reloads when a turn is stored; a rename of the open conversation
 * reaches the chat page's heading; deleting it leaves for a fresh chat (replacing its URL).
 */
import { useCallback, useEffect, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ConversationSummary } from "../api/types";
import { ChatConversation } from "../member/ChatConversation";
import type { Audience } from "../member/relevance";
import { conversationPath, navigate } from "../router";
import { ConversationsPanel } from "./ConversationsPanel";
import { focusQuestion, MAIN_ID } from "./focus";
import type { Drawer } from "./useDrawer";

// A new conversation's first answer gives it its URL (replacing `/`: Back leaves the chat).
const openConversation = (id: string): void => navigate(conversationPath(id), true);
const startNew = (): void => navigate("/");

export function ChatLayout(props: {
  client: ApiClient;
  conversationId: string | null;
  drawer: Drawer;
  /** Admins also see the retrieval path's name where members read plain words. */
  role: Audience;
  /** The server's generator can answer differently when asked again. */
  regenerateVaries: boolean;
  /** The server hands conversations over to a helpdesk ("Talk to a person"). */
  handoff?: boolean;
}): ReactNode {
  const { conversationId, drawer } = props;
  const [version, setVersion] = useState(0);
  const [renamed, setRenamed] = useState<ConversationSummary | null>(null);
  const onStored = useCallback(() => setVersion((v) => v + 1), []);
  // "New conversation" while the open one is still new (its URL is `/` until an answer is
  // stored) starts it afresh: the chat remounts, which stops any answer streaming in.
  const [fresh, setFresh] = useState(0);
  const onNew = (): void => {
    if (conversationId === null) setFresh((n) => n + 1);
  };
  // The remounted question box is a new element: focus it once it is there.
  useEffect(() => {
    if (fresh > 0) focusQuestion();
  }, [fresh]);

  const onDeleted = (id: string): void => {
    if (id !== conversationId) return;
    // Replace the entry: Back must not return to a conversation that no longer exists.
    navigate("/", true);
    if (drawer.open) drawer.hide("question");
    else focusQuestion();
  };

  return (
    <div className="chat-layout">
      <ConversationsPanel
        client={props.client}
        currentId={conversationId}
        version={version}
        drawer={drawer}
        onRenamed={setRenamed}
        onDeleted={onDeleted}
        onNew={onNew}
      />
      <main id={MAIN_ID} className="chat-main" tabIndex={-1} inert={drawer.open}>
        <ChatConversation
          key={fresh}
          client={props.client}
          conversationId={conversationId}
          regenerateVaries={props.regenerateVaries}
          handoff={props.handoff}
          audience={props.role}
          onOpened={openConversation}
          onNew={startNew}
          renamed={renamed}
          onStored={onStored}
        />
      </main>
    </div>
  );
}
