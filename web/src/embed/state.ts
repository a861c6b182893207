/**
 * The embedded chat's state: signing in with the host page's token, chatting (which
 * conversation is open), or stopped with a message. Pure; `Embed` runs the effects.
 */

export type EmbedState =
  | { kind: "signing-in" }
  /** `session`: citewall's session token, kept in memory only. `opening` counts the
   * conversations started afresh ("New conversation" remounts the chat). `regenerateVaries`:
   * the server's generator can answer differently when asked again (Regenerate is offered).
   * `handoff`: the server has a helpdesk, so "Talk to a person" is offered as in the member
   * chat. */
  | {
      kind: "ready";
      session: string;
      regenerateVaries: boolean;
      handoff: boolean;
      conversationId: string | null;
      opening: number;
    }
  | { kind: "stopped"; message: string };

export type EmbedAction =
  | {
      type: "signedIn";
      session: string;
      regenerateVaries: boolean;
      handoff: boolean;
      conversation: string | null;
    }
  | { type: "stopped"; message: string }
  | { type: "opened"; id: string }
  | { type: "new" }
  | { type: "retry" };

export const initialEmbed: EmbedState = { kind: "signing-in" };

export function embedReducer(state: EmbedState, action: EmbedAction): EmbedState {
  switch (action.type) {
    case "signedIn":
      if (state.kind !== "signing-in") return state;
      return {
        kind: "ready",
        session: action.session,
        regenerateVaries: action.regenerateVaries,
        handoff: action.handoff,
        conversationId: action.conversation,
        opening: 0,
      };
    case "stopped":
      return { kind: "stopped", message: action.message };
    case "opened":
      if (state.kind !== "ready") return state;
      return { ...state, conversationId: action.id };
    case "new":
      if (state.kind !== "ready") return state;
      return { ...state, conversationId: null, opening: state.opening + 1 };
    case "retry":
      return state.kind === "stopped" ? initialEmbed : state;
  }
}
