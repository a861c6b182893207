// @vitest-environment happy-dom
/**
 * How the app signs in: with no stored token it first asks who it is with no token (behind an
 * identity-aware proxy the proxy answers for the user: no form, no sign-out), else the sign-in
 * form; signing out of a token revokes it as a session (best effort).
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { App } from "../src/App";
import { saveToken } from "../src/auth/session";

interface Request {
  method: string;
  url: string;
  auth: string | null;
  credentials: RequestCredentials | undefined;
}

describe("signing in to the app", () => {
  let container: HTMLElement;
  let root: Root;
  let requests: Request[];
  let me: { status: number; body: unknown; headers?: Record<string, string> };

  beforeEach(() => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    window.history.replaceState(null, "", "/");
    window.sessionStorage.clear();
    requests = [];
    vi.stubGlobal(
      "fetch",
      vi.fn((url: string, init?: RequestInit) => {
        const method = init?.method ?? "GET";
        const auth = new Headers(init?.headers).get("Authorization");
        requests.push({ method, url, auth, credentials: init?.credentials });
        const extra = url === "/api/v1/me" ? (me.headers ?? {}) : {};
        const [status, body] =
          url === "/api/v1/me"
            ? [me.status, me.body]
            : url.startsWith("/api/v1/conversations")
              ? [200, []]
              : url === "/api/v1/examples"
                ? [200, { questions: [] }]
                : url === "/api/v1/auth/session" && method === "DELETE"
                  ? [204, null]
                  : [404, { detail: "no such route" }];
        return Promise.resolve(
          new Response(status === 204 ? null : JSON.stringify(body), {
            status,
            headers: { "Content-Type": "application/json", ...extra },
          }),
        );
      }),
    );
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
  });

  afterEach(() => {
    act(() => root.unmount());
    container.remove();
    vi.unstubAllGlobals();
  });

  const render = async (): Promise<void> => {
    await act(async () => {
      root.render(<App />);
      await Promise.resolve();
    });
  };
  const buttons = (): string[] =>
    [...container.querySelectorAll("button")].map((b) => b.textContent ?? "");

  it("behind the proxy: no form, the admin pages, and no Sign out", async () => {
    me = {
      status: 200,
      body: { name: "ada-1a2b3c", role: "admin", session: false, regenerate_varies: false },
    };
    await render();
    await vi.waitFor(() =>
      expect(container.querySelector(".who-name")?.textContent).toBe("ada-1a2b3c"),
    );
    expect(requests[0]).toEqual({
      method: "GET",
      url: "/api/v1/me",
      auth: null,
      credentials: "same-origin",
    });
    expect(container.querySelector("#token")).toBeNull();
    expect(container.textContent).toContain("Analytics");
    expect(buttons()).not.toContain("Sign out");
  });

  it("anywhere else: the sign-in form, with nothing to apologise for", async () => {
    me = { status: 401, body: { detail: "missing bearer token" } };
    await render();
    await vi.waitFor(() => expect(container.querySelector("#token")).not.toBeNull());
    expect(container.querySelector(".error")).toBeNull();
    expect(requests.map((r) => r.url)).toEqual(["/api/v1/me"]);
  });

  it("a rate-limited reload says so, and when to try again (not that citewall is down)", async () => {
    saveToken("cw_apitoken");
    me = {
      status: 429,
      body: { detail: "rate limit exceeded: 60 requests per minute" },
      headers: { "Retry-After": "30" },
    };
    await render();
    await vi.waitFor(() => expect(container.querySelector('[role="alert"]')).not.toBeNull());
    const alert = container.querySelector('[role="alert"]')?.textContent ?? "";
    expect(alert).toContain("Too many requests in a short time. Try again in 30 seconds.");
    expect(alert).not.toContain("unavailable");
    expect(alert).not.toContain("rate limit exceeded");
    expect(buttons()).toContain("Retry");
  });

  it("signs out of an API token by forgetting it: no request the server would refuse", async () => {
    saveToken("cw_apitoken");
    me = {
      status: 200,
      body: { name: "mia", role: "member", session: false, regenerate_varies: false },
    };
    await render();
    await vi.waitFor(() => expect(buttons()).toContain("Sign out"));
    const signOut = [...container.querySelectorAll("button")].find(
      (b) => b.textContent === "Sign out",
    );
    await act(async () => {
      signOut?.click();
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(container.querySelector("#token")).not.toBeNull());
    expect(requests.filter((r) => r.method !== "GET")).toEqual([]);
    expect(window.sessionStorage.getItem("citewall.token")).toBeNull();
  });

  it("signs out of a session by revoking it", async () => {
    saveToken("cw_session");
    me = {
      status: 200,
      body: { name: "mia-1a2b3c", role: "member", session: true, regenerate_varies: true },
    };
    await render();
    await vi.waitFor(() => expect(buttons()).toContain("Sign out"));
    expect(requests[0]?.auth).toBe("Bearer cw_session");
    const signOut = [...container.querySelectorAll("button")].find(
      (b) => b.textContent === "Sign out",
    );
    await act(async () => {
      signOut?.click();
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(container.querySelector("#token")).not.toBeNull());
    expect(requests.filter((r) => r.method === "DELETE")).toEqual([
      {
        method: "DELETE",
        url: "/api/v1/auth/session",
        auth: "Bearer cw_session",
        credentials: "omit",
      },
    ]);
    expect(window.sessionStorage.getItem("citewall.token")).toBeNull();
  });
});
