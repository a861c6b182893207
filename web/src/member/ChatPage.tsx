/**
 * The member's chat: the conversation list beside the open conversation. Opening another
 * conversation (or a new one) while an answer streams in stops that answer; the server keeps
 * what was said so far.
 */
import { useCallback, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import { navigate } from "../router";
import { ChatConversation } from "./ChatConversation";
import { ConversationList } from "./ConversationList";
import type { Audience } from "./relevance";

export function ChatPage(props: {
  client: ApiClient;
  conversationId: string | null;
  role?: Audience;
}): ReactNode {
  const { client, conversationId } = props;
  const [listVersion, setListVersion] = useState(0);
  const onStored = useCallback(() => setListVersion((v) => v + 1), []);
  // "New conversation" while one is already new starts it afresh (stopping any answer).
  const [fresh, setFresh] = useState(0);
  const startNew = (): void => {
    if (conversationId === null) setFresh((n) => n + 1);
    else navigate("/");
  };
  return (
    <div className="chat-layout">
      <aside className="conversations" aria-label="Conversations">
        <button type="button" className="new-conversation" onClick={startNew}>
          New conversation
        </button>
        <ConversationList
          client={client}
          currentId={conversationId}
          version={listVersion}
          disabled={false}
        />
      </aside>
      <ChatConversation
        key={fresh}
        client={client}
        conversationId={conversationId}
        audience={props.role ?? "member"}
        onStored={onStored}
      />
    </div>
  );
}
