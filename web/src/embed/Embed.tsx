/**
 * The embeddable member chat (`/embed`, framed by a host site's page through `embed.js`). Its
 * only sign-in is the host's: it asks the host page for the member's signed token, exchanges it
 * for a citewall session kept in memory (never in storage, never in a URL), and asks once more
 * when that session ends. The chat itself is the member chat: the same conversation view,
 * sources and prose-only answers, "Talk to a person" when the server has a helpdesk, with no
 * conversation list, no admin pages and no token form.
 */
import { useCallback, useEffect, useMemo, useReducer, type ReactNode } from "react";

import { ApiClient, ApiError, createSession } from "../api/client";
import { UNREACHABLE } from "../chat/problems";
import { ChatConversation } from "../member/ChatConversation";
import { focusQuestion, MAIN_ID } from "../shell/focus";
import { HostBridge } from "./hostBridge";
import type { HostToken } from "./messages";
import { embedReducer, initialEmbed, type EmbedAction } from "./state";

export const NOT_FRAMED = "This chat opens inside a page of the site it belongs to.";
export const NOT_SIGNED_IN = "The chat could not sign you in. Try again, or reload the page.";
export const SESSION_OVER = "Your session has ended. Try again, or reload the page.";

/** The session for the host's token, as the action that starts the chat (or says why not). */
async function signIn(host: HostToken | null): Promise<EmbedAction> {
  if (host === null) return { type: "stopped", message: NOT_SIGNED_IN };
  try {
    const session = await createSession(host.token);
    return {
      type: "signedIn",
      session: session.token,
      regenerateVaries: session.regenerate_varies,
      handoff: session.handoff,
      conversation: host.conversation,
    };
  } catch (err) {
    return { type: "stopped", message: err instanceof ApiError ? NOT_SIGNED_IN : UNREACHABLE };
  }
}

/** A fresh session token from a fresh host token, or null. */
async function renewSession(bridge: HostBridge): Promise<string | null> {
  const action = await signIn(await bridge.requestToken());
  return action.type === "signedIn" ? action.session : null;
}

export function Embed(): ReactNode {
  const framed = window.parent !== window;
  const bridge = useMemo(() => new HostBridge(window.parent), []);
  const [state, dispatch] = useReducer(embedReducer, initialEmbed);

  useEffect(() => {
    const onMessage = (e: MessageEvent): void => bridge.receive(e);
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [bridge]);

  useEffect(() => {
    if (!framed || state.kind !== "signing-in") return;
    let live = true;
    void (async () => {
      const host = await bridge.requestToken();
      if (!live) return;
      const action = await signIn(host);
      if (live) dispatch(action);
    })();
    return () => {
      live = false;
    };
  }, [bridge, framed, state.kind]);

  if (!framed) {
    return <p className="page-status">{NOT_FRAMED}</p>;
  }
  if (state.kind === "signing-in") {
    return (
      <p className="page-status" role="status">
        Signing in…
      </p>
    );
  }
  if (state.kind === "stopped") {
    return (
      <div className="page-status" role="alert">
        <p>{state.message}</p>
        <button type="button" onClick={() => dispatch({ type: "retry" })}>
          Try again
        </button>
      </div>
    );
  }
  return (
    <EmbedChat
      session={state.session}
      regenerateVaries={state.regenerateVaries}
      handoff={state.handoff}
      conversationId={state.conversationId}
      opening={state.opening}
      bridge={bridge}
      dispatch={dispatch}
    />
  );
}

function EmbedChat(props: {
  session: string;
  regenerateVaries: boolean;
  handoff: boolean;
  conversationId: string | null;
  opening: number;
  bridge: HostBridge;
  dispatch: (action: EmbedAction) => void;
}): ReactNode {
  const { session, conversationId, opening, bridge, dispatch } = props;
  const client = useMemo(
    () => new ApiClient(session, () => renewSession(bridge)),
    [session, bridge],
  );
  // Refused even after a fresh host token: the member's session on the host site has ended.
  useEffect(
    () => client.onSessionEnded(() => dispatch({ type: "stopped", message: SESSION_OVER })),
    [client, dispatch],
  );
  useEffect(() => bridge.reportConversation(conversationId), [bridge, conversationId]);
  // The remounted question box is a new element: focus it once it is there.
  useEffect(() => {
    if (opening > 0) focusQuestion();
  }, [opening]);
  const onOpened = useCallback((id: string) => dispatch({ type: "opened", id }), [dispatch]);
  const onNew = useCallback(() => dispatch({ type: "new" }), [dispatch]);

  return (
    <main id={MAIN_ID} className="embed" tabIndex={-1}>
      <div className="embed-bar">
        <button type="button" onClick={onNew}>
          New conversation
        </button>
      </div>
      <ChatConversation
        key={opening}
        client={client}
        conversationId={conversationId}
        regenerateVaries={props.regenerateVaries}
        handoff={props.handoff}
        onOpened={onOpened}
        onNew={onNew}
      />
    </main>
  );
}
