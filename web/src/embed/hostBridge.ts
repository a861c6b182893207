/**
 * The embedded chat's line to its host page. It listens only to its parent window (the page that
 * frames it, which `frame-ancestors` limits to the embedding origins) and, once the host has
 * sent a token, writes only to that origin.
 */
import { parseHostToken, type HostToken, type ToHost } from "./messages";

/** How long the host page has to send a token. */
export const TOKEN_WAIT_MS = 15_000;

/** The parts of a `MessageEvent` the bridge reads. */
export interface Received {
  source: unknown;
  origin: string;
  data: unknown;
}

export interface HostWindow {
  postMessage(message: ToHost, targetOrigin: string): void;
}

export class HostBridge {
  // The host page's origin, learnt from its first token; nothing but `ready` goes out before.
  private origin: string | null = null;
  private waiting: ((token: HostToken | null) => void) | null = null;
  private pending: Promise<HostToken | null> | null = null;

  constructor(
    private readonly parent: HostWindow,
    private readonly waitMs = TOKEN_WAIT_MS,
  ) {}

  /** Take a message posted to the chat's window: a token the chat asked for, from its parent. */
  receive(event: Received): void {
    if (event.source !== this.parent || this.waiting === null) return;
    if (this.origin !== null && event.origin !== this.origin) return;
    const token = parseHostToken(event.data);
    if (token === null) return;
    this.origin = event.origin;
    this.settle(token);
  }

  /**
   * Ask the host page for a token (`citewall:ready` until it has sent one,
   * `citewall:token-needed` after); null when none comes within the wait. A call while one
   * waits shares its answer.
   */
  requestToken(): Promise<HostToken | null> {
    if (this.pending !== null) return this.pending;
    this.pending = new Promise<HostToken | null>((resolve) => {
      const timer = window.setTimeout(() => this.settle(null), this.waitMs);
      this.waiting = (token) => {
        window.clearTimeout(timer);
        this.pending = null;
        resolve(token);
      };
    });
    // Before the host's first token its origin is unknown: `ready` says nothing, to anyone.
    if (this.origin === null) this.parent.postMessage({ type: "citewall:ready" }, "*");
    else this.post({ type: "citewall:token-needed" });
    return this.pending;
  }

  /** Tell the host page which conversation is open (null: a new one). */
  reportConversation(id: string | null): void {
    this.post({ type: "citewall:conversation", id });
  }

  private post(message: ToHost): void {
    if (this.origin !== null) this.parent.postMessage(message, this.origin);
  }

  private settle(token: HostToken | null): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.(token);
  }
}
