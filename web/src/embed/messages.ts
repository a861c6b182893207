/**
 * The messages between the embedded chat (the iframe at `/embed`) and the loader on the host
 * page (`public/embed.js`), and the check on what the host sends. The host's signed token is the
 * only credential that crosses; citewall's own session token never leaves the iframe.
 *
 * iframe -> host: `citewall:ready`, `citewall:token-needed`, `citewall:conversation` (the open
 * conversation's id, null for a new one, which the loader keeps for the next page load).
 * host -> iframe: `citewall:token` with the host's token and the conversation to reopen.
 */

export type ToHost =
  | { type: "citewall:ready" }
  | { type: "citewall:token-needed" }
  | { type: "citewall:conversation"; id: string | null };

/** What the host page sends: its token for the member, and the conversation to reopen. */
export interface HostToken {
  token: string;
  conversation: string | null;
}

/** The longest token the server accepts. */
export const MAX_TOKEN_CHARS = 8192;

/** A conversation id as the server writes it (a canonical UUID). */
const CONVERSATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The host's `citewall:token` message, or null for anything else. A conversation id that is not
 * one is dropped (the chat starts a new conversation) rather than refusing the token.
 *
 * @example parseHostToken({ type: "citewall:token", token: "a.b.c" })
 * // { token: "a.b.c", conversation: null }
 */
export function parseHostToken(data: unknown): HostToken | null {
  if (!data || typeof data !== "object") return null;
  const message = data as Record<string, unknown>;
  if (message.type !== "citewall:token") return null;
  const { token, conversation } = message;
  if (typeof token !== "string" || !token || token.length > MAX_TOKEN_CHARS || /\s/.test(token)) {
    return null;
  }
  return {
    token,
    conversation:
      typeof conversation === "string" && CONVERSATION_ID.test(conversation) ? conversation : null,
  };
}
