import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { HostBridge, type HostWindow } from "../src/embed/hostBridge";
import { MAX_TOKEN_CHARS, parseHostToken, type ToHost } from "../src/embed/messages";
import { embedReducer, initialEmbed, type EmbedState } from "../src/embed/state";

const ID = "0b5d3c52-8a0e-4a8f-9a57-2f4c1b0e9d11";
const HOST = "https://help.example.com";

describe("the host's token message", () => {
  it("is a citewall:token with a token, and maybe the conversation to reopen", () => {
    expect(parseHostToken({ type: "citewall:token", token: "a.b.c", conversation: ID })).toEqual({
      token: "a.b.c",
      conversation: ID,
    });
    expect(parseHostToken({ type: "citewall:token", token: "a.b.c" })).toEqual({
      token: "a.b.c",
      conversation: null,
    });
  });

  it("drops a conversation that is not an id, keeping the token", () => {
    for (const conversation of [42, "../admin", `${ID} `, ID.toUpperCase(), null, {}]) {
      expect(parseHostToken({ type: "citewall:token", token: "t", conversation })).toEqual({
        token: "t",
        conversation: null,
      });
    }
  });

  it("is nothing else", () => {
    const refused: unknown[] = [
      null,
      "citewall:token",
      { type: "citewall:ready" },
      { type: "citewall:token" },
      { type: "citewall:token", token: "" },
      { type: "citewall:token", token: 12 },
      { type: "citewall:token", token: "a b" },
      { type: "citewall:token", token: "x".repeat(MAX_TOKEN_CHARS + 1) },
      { type: "CITEWALL:TOKEN", token: "t" },
    ];
    for (const data of refused) expect(parseHostToken(data)).toBeNull();
    const longest = { type: "citewall:token", token: "x".repeat(MAX_TOKEN_CHARS) };
    expect(parseHostToken(longest)).not.toBeNull();
  });
});

describe("the line to the host page", () => {
  let posted: [ToHost, string][];
  let parent: HostWindow;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal("window", globalThis);
    posted = [];
    parent = { postMessage: (message, origin) => posted.push([message, origin]) };
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });
  const token = { type: "citewall:token", token: "t1", conversation: ID };

  it("says ready to anyone, then talks only to the origin that sent the token", async () => {
    const bridge = new HostBridge(parent);
    const asked = bridge.requestToken();
    expect(posted).toEqual([[{ type: "citewall:ready" }, "*"]]);
    bridge.receive({ source: parent, origin: HOST, data: token });
    expect(await asked).toEqual({ token: "t1", conversation: ID });
    bridge.reportConversation(ID);
    const again = bridge.requestToken();
    expect(posted.slice(1)).toEqual([
      [{ type: "citewall:conversation", id: ID }, HOST],
      [{ type: "citewall:token-needed" }, HOST],
    ]);
    // The next token must come from the same origin.
    bridge.receive({ source: parent, origin: "https://evil.example", data: token });
    bridge.receive({ source: parent, origin: HOST, data: { ...token, token: "t2" } });
    expect(await again).toMatchObject({ token: "t2" });
  });

  it("hears only its parent window, and only when it asked", async () => {
    const bridge = new HostBridge(parent);
    bridge.receive({ source: parent, origin: HOST, data: token }); // not asked: ignored
    const asked = bridge.requestToken();
    bridge.receive({ source: {}, origin: HOST, data: token });
    bridge.receive({ source: null, origin: HOST, data: token });
    bridge.receive({ source: parent, origin: HOST, data: { type: "citewall:ready" } });
    bridge.receive({ source: parent, origin: HOST, data: { ...token, token: "mine" } });
    expect(await asked).toMatchObject({ token: "mine" });
  });

  it("reports nothing before it knows the host's origin", () => {
    const bridge = new HostBridge(parent);
    bridge.reportConversation(ID);
    expect(posted).toEqual([]);
  });

  it("gives up when no token comes, and shares one wait between callers", async () => {
    const bridge = new HostBridge(parent, 1000);
    const first = bridge.requestToken();
    const second = bridge.requestToken();
    expect(second).toBe(first);
    expect(posted).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(await first).toBeNull();
    bridge.receive({ source: parent, origin: HOST, data: token }); // too late: ignored
    const retried = bridge.requestToken();
    expect(posted).toEqual([
      [{ type: "citewall:ready" }, "*"],
      [{ type: "citewall:ready" }, "*"],
    ]);
    bridge.receive({ source: parent, origin: HOST, data: token });
    expect(await retried).toMatchObject({ token: "t1" });
  });
});

describe("the embed's state", () => {
  const ready = (change: Partial<Extract<EmbedState, { kind: "ready" }>> = {}): EmbedState => ({
    kind: "ready",
    session: "cw_s",
    regenerateVaries: false,
    handoff: false,
    conversationId: null,
    opening: 0,
    ...change,
  });

  it("signs in into the conversation the host asked to reopen", () => {
    const state = embedReducer(initialEmbed, {
      type: "signedIn",
      session: "cw_s",
      regenerateVaries: false,
      handoff: false,
      conversation: ID,
    });
    expect(state).toEqual(ready({ conversationId: ID }));
  });

  it("keeps whether the session's server hands over to a person", () => {
    const state = embedReducer(initialEmbed, {
      type: "signedIn",
      session: "cw_s",
      regenerateVaries: false,
      handoff: true,
      conversation: null,
    });
    expect(state).toEqual(ready({ handoff: true }));
    expect(embedReducer(state, { type: "new" })).toMatchObject({ handoff: true, opening: 1 });
  });

  it("follows the open conversation; New conversation starts afresh", () => {
    let state = embedReducer(ready(), { type: "opened", id: ID });
    expect(state).toEqual(ready({ conversationId: ID }));
    state = embedReducer(state, { type: "new" });
    expect(state).toEqual(ready({ conversationId: null, opening: 1 }));
  });

  it("stops with a message, and tries again from the start", () => {
    const stopped = embedReducer(ready(), { type: "stopped", message: "ended" });
    expect(stopped).toEqual({ kind: "stopped", message: "ended" });
    expect(embedReducer(stopped, { type: "opened", id: ID })).toBe(stopped);
    expect(
      embedReducer(stopped, {
        type: "signedIn",
        session: "x",
        regenerateVaries: true,
        handoff: false,
        conversation: null,
      }),
    ).toBe(stopped);
    expect(embedReducer(stopped, { type: "retry" })).toEqual(initialEmbed);
  });

  it("keeps the first session: a late sign-in changes nothing", () => {
    const state = ready();
    expect(
      embedReducer(state, {
        type: "signedIn",
        session: "other",
        regenerateVaries: true,
        handoff: false,
        conversation: ID,
      }),
    ).toBe(state);
    expect(embedReducer(state, { type: "retry" })).toBe(state);
  });
});
