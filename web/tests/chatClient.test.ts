import { afterEach, describe, expect, it, vi } from "vitest";

import { ApiClient, ApiError, createSession } from "../src/api/client";
import type { StreamEvent } from "../src/api/types";

interface Call {
  url: string;
  init: RequestInit;
}

/** Replace fetch with one answering `responses` in turn, recording every call. */
function fakeFetch(...responses: (() => Response)[]): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal("fetch", (url: string, init: RequestInit) => {
    calls.push({ url, init });
    const next = responses.shift();
    if (!next) throw new Error(`unexpected request to ${url}`);
    return Promise.resolve(next());
  });
  return calls;
}

const json = (status: number, body: unknown) => () =>
  new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });

const sse = (body: string) => () =>
  new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });

afterEach(() => vi.unstubAllGlobals());

describe("ApiClient: feedback, examples, regenerate", () => {
  it("rates an answer with PUT and withdraws the rating with DELETE (204)", async () => {
    const saved = { message_id: "m/2", rating: "down", comment: "old", updated_at: "t" };
    const calls = fakeFetch(json(200, saved), json(204, null));
    const client = new ApiClient("tok");
    expect(await client.rateAnswer("m/2", { rating: "down", comment: "old" })).toEqual(saved);
    expect(await client.unrateAnswer("m/2")).toBeUndefined();
    expect(calls.map((c) => [c.init.method, c.url])).toEqual([
      ["PUT", "/api/v1/messages/m%2F2/feedback"],
      ["DELETE", "/api/v1/messages/m%2F2/feedback"],
    ]);
    expect(JSON.parse(calls[0]?.init.body as string)).toEqual({ rating: "down", comment: "old" });
    expect(calls[0]?.init.headers).toMatchObject({ Authorization: "Bearer tok" });
  });

  it("reads the example questions", async () => {
    const calls = fakeFetch(json(200, { questions: ["How do refunds work?"] }));
    expect(await new ApiClient("tok").examples()).toEqual({ questions: ["How do refunds work?"] });
    expect(calls[0]?.url).toBe("/api/v1/examples");
  });

  it("regenerates as a stream of the chat events, with no body", async () => {
    const body =
      'event: meta\ndata: {"conversation_id": "c1"}\n\n' +
      'event: token\ndata: {"delta": "Again"}\n\n' +
      'event: final\ndata: {"answer": "Again.", "conversation_id": "c1", "message_id": "m3"}\n\n';
    const calls = fakeFetch(sse(body));
    const events: StreamEvent[] = [];
    await new ApiClient("tok").regenerateStream("c 1", (e) => events.push(e));
    expect(calls[0]?.url).toBe("/api/v1/conversations/c%201/regenerate");
    expect(calls[0]?.init.method).toBe("POST");
    expect(calls[0]?.init.body).toBeUndefined();
    expect(events.map((e) => e.event)).toEqual(["meta", "token", "final"]);
  });

  it("passes the abort signal to the stream's fetch (Stop closes the connection)", async () => {
    const calls = fakeFetch(sse(""));
    const controller = new AbortController();
    await new ApiClient("tok").chatStream(
      { message: "q", conversation_id: null },
      () => undefined,
      controller.signal,
    );
    expect(calls[0]?.init.signal).toBe(controller.signal);
  });
});

describe("ApiClient: a session that ends", () => {
  it("tells its listeners when a token it had accepted is refused", async () => {
    fakeFetch(json(200, { name: "mia", role: "member" }), json(401, { detail: "revoked" }));
    const client = new ApiClient("tok");
    let ended = 0;
    client.onSessionEnded(() => (ended += 1));
    await client.me();
    await expect(
      client.chatStream({ message: "q", conversation_id: null }, () => undefined),
    ).rejects.toBeInstanceOf(ApiError);
    expect(ended).toBe(1);
  });

  it("does not for a token refused from the start (sign-in says so itself)", async () => {
    fakeFetch(json(401, { detail: "unknown token" }));
    const client = new ApiClient("bad");
    let ended = 0;
    const stop = client.onSessionEnded(() => (ended += 1));
    await expect(client.me()).rejects.toMatchObject({ status: 401 });
    expect(ended).toBe(0);
    stop();
  });

  it("stops telling a listener that was removed", async () => {
    fakeFetch(json(200, []), json(401, { detail: "revoked" }));
    const client = new ApiClient("tok");
    let ended = 0;
    const stop = client.onSessionEnded(() => (ended += 1));
    await client.conversations();
    stop();
    await expect(client.conversations()).rejects.toMatchObject({ status: 401 });
    expect(ended).toBe(0);
  });
});

describe("ApiClient: credentials and the CSRF header", () => {
  const headers = (call: Call | undefined): Record<string, string> =>
    (call?.init.headers ?? {}) as Record<string, string>;

  it("sends X-Citewall-CSRF on every unsafe request, and only there", async () => {
    const calls = fakeFetch(
      json(200, []),
      json(200, { id: "c1", title: "t" }),
      json(204, null),
      json(200, {}),
      json(204, null),
      sse(""),
    );
    const client = new ApiClient("tok");
    await client.conversations();
    await client.renameConversation("c1", "t");
    await client.deleteConversation("c1");
    await client.rateAnswer("m1", { rating: "up", comment: null });
    await client.endSession();
    await client.chatStream({ message: "q", conversation_id: null }, () => undefined);
    expect(calls.map((c) => [c.init.method, headers(c)["X-Citewall-CSRF"]])).toEqual([
      ["GET", undefined],
      ["PATCH", "1"],
      ["DELETE", "1"],
      ["PUT", "1"],
      ["DELETE", "1"],
      ["POST", "1"],
    ]);
    expect(calls[4]?.url).toBe("/api/v1/auth/session");
    expect(calls.every((c) => c.init.credentials === "omit")).toBe(true);
  });

  it("without a token sends no Authorization and lets the proxy's cookie through", async () => {
    const calls = fakeFetch(json(200, { name: "ada", role: "admin" }));
    expect(await new ApiClient(null).me()).toEqual({ name: "ada", role: "admin" });
    expect(headers(calls[0])).not.toHaveProperty("Authorization");
    expect(calls[0]?.init.credentials).toBe("same-origin");
  });

  it("exchanges a host token for a session, with no credential but the token", async () => {
    const session = {
      token: "cw_x",
      expires_at: "t",
      name: "mia-1a2b3c",
      role: "member",
      regenerate_varies: false,
    };
    const calls = fakeFetch(json(201, session), json(401, { detail: "not accepted" }));
    expect(await createSession("h.j.t")).toEqual(session);
    expect(calls[0]?.url).toBe("/api/v1/auth/session");
    expect(calls[0]?.init).toMatchObject({ method: "POST", credentials: "omit" });
    expect(JSON.parse(calls[0]?.init.body as string)).toEqual({ token: "h.j.t" });
    expect(headers(calls[0])["X-Citewall-CSRF"]).toBe("1");
    await expect(createSession("bad")).rejects.toMatchObject({ status: 401 });
  });
});

describe("ApiClient: renewing a session", () => {
  it("renews once when an accepted token is refused, and resends with the fresh one", async () => {
    const calls = fakeFetch(json(200, []), json(401, {}), json(200, []), json(200, []));
    let renewals = 0;
    const client = new ApiClient("old", () => {
      renewals += 1;
      return Promise.resolve("new");
    });
    let ended = 0;
    client.onSessionEnded(() => (ended += 1));
    await client.conversations();
    await client.conversations();
    await client.conversations();
    expect(renewals).toBe(1);
    expect(ended).toBe(0);
    expect(calls.map((c) => (c.init.headers as Record<string, string>).Authorization)).toEqual([
      "Bearer old",
      "Bearer old",
      "Bearer new",
      "Bearer new",
    ]);
  });

  it("ends the session when no fresh token comes, or the fresh one is refused too", async () => {
    fakeFetch(json(200, []), json(401, {}), json(401, {}), json(401, {}));
    const tokens = [null, "new"];
    const client = new ApiClient("old", () => Promise.resolve(tokens.shift() ?? null));
    let ended = 0;
    client.onSessionEnded(() => (ended += 1));
    await client.conversations();
    await expect(client.conversations()).rejects.toMatchObject({ status: 401 });
    expect(ended).toBe(1);
    await expect(client.conversations()).rejects.toMatchObject({ status: 401 });
    expect(ended).toBe(2);
  });

  it("does not renew a token refused from the start", async () => {
    fakeFetch(json(401, {}));
    let renewals = 0;
    const client = new ApiClient("bad", () => {
      renewals += 1;
      return Promise.resolve("new");
    });
    await expect(client.me()).rejects.toMatchObject({ status: 401 });
    expect(renewals).toBe(0);
  });

  it("shares one renewal between requests refused together", async () => {
    fakeFetch(json(200, []), json(401, {}), json(401, {}), json(200, []), json(200, []));
    let renewals = 0;
    const client = new ApiClient("old", async () => {
      renewals += 1;
      await Promise.resolve();
      return "new";
    });
    await client.conversations();
    await Promise.all([client.conversations(), client.conversations()]);
    expect(renewals).toBe(1);
  });
});
