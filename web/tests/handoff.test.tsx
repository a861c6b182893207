// @vitest-environment happy-dom
/**
 * "Talk to a person": offered on its own after a "not found" answer or a "Not helpful" rating,
 * available otherwise, hidden when the server has no helpdesk; sending it posts the member's
 * message and says the request was received; a refusal is said, with the server's reason. The
 * admin list of handoffs says where each delivery stands.
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { deliveryText } from "../src/admin/AdminHandoffs";
import { ApiClient } from "../src/api/client";
import type { AdminHandoff } from "../src/api/types";
import type { DisplayTurn } from "../src/chat/state";
import { ChatConversation } from "../src/member/ChatConversation";
import { Handoff, handoffOffered } from "../src/member/Handoff";

const AT = "2026-03-10T10:00:00Z";

function answer(change: Partial<DisplayTurn> = {}): DisplayTurn {
  return {
    key: "a1",
    role: "assistant",
    messageId: "m2",
    content: "Refunds take five days.",
    sources: [],
    hybridPath: "full",
    answerStatus: "answered",
    pending: false,
    error: null,
    createdAt: AT,
    feedback: null,
    regeneratedFrom: null,
    request: null,
    ...change,
  };
}

const DOWN = { message_id: "m2", rating: "down" as const, comment: null, updated_at: AT };

describe("when a person is offered on its own", () => {
  it("after a not-found answer or a Not helpful rating, not after a good answer", () => {
    expect(handoffOffered([answer({ answerStatus: "not_found" })])).toBe(true);
    expect(handoffOffered([answer({ feedback: DOWN })])).toBe(true);
    expect(handoffOffered([answer()])).toBe(false);
    expect(handoffOffered([answer({ feedback: { ...DOWN, rating: "up" } })])).toBe(false);
    expect(handoffOffered([answer({ answerStatus: "not_found", pending: true })])).toBe(false);
    expect(handoffOffered([])).toBe(false);
  });

  it("says why when offered, and is a plain button otherwise", () => {
    const client = new ApiClient("t");
    const offered = renderToStaticMarkup(
      <Handoff
        client={client}
        conversationId="c1"
        turns={[answer({ answerStatus: "not_found" })]}
        busy={false}
      />,
    );
    expect(offered).toContain("handoff-offered");
    expect(offered).toContain("A person from the team can pick this up");
    expect(offered).toContain(">Talk to a person</button>");
    const plain = renderToStaticMarkup(
      <Handoff client={client} conversationId="c1" turns={[answer()]} busy={false} />,
    );
    expect(plain).not.toContain("handoff-offered");
    expect(plain).toContain(">Talk to a person</button>");
  });
});

describe("asking for a person", () => {
  let container: HTMLElement;
  let root: Root;
  let posts: { url: string; body: unknown }[];
  let reply: { status: number; body: unknown };
  let history: unknown;

  beforeEach(() => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    posts = [];
    reply = { status: 202, body: { id: "h1", conversation_id: "c1", created_at: AT } };
    history = {
      id: "c1",
      title: "Refunds",
      created_at: AT,
      messages: [
        {
          id: "m1",
          role: "user",
          content: "How long do refunds take?",
          answer_status: null,
          sources: [],
          hybrid_path: null,
          feedback: null,
          regenerated_from: null,
          created_at: AT,
        },
        {
          id: "m2",
          role: "assistant",
          content: "The knowledge base does not answer this.",
          answer_status: "not_found",
          sources: [],
          hybrid_path: null,
          feedback: null,
          regenerated_from: null,
          created_at: AT,
        },
      ],
    };
    vi.stubGlobal(
      "fetch",
      vi.fn((url: string, init?: RequestInit) => {
        if (init?.method === "POST") {
          posts.push({ url, body: JSON.parse(init.body as string) as unknown });
          return Promise.resolve(
            new Response(JSON.stringify(reply.body), {
              status: reply.status,
              headers: { "Content-Type": "application/json" },
            }),
          );
        }
        const body = url === "/api/v1/conversations/c1" ? history : { questions: [] };
        return Promise.resolve(
          new Response(JSON.stringify(body), {
            status: 200,
            headers: { "Content-Type": "application/json" },
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

  const button = (text: string): HTMLButtonElement | undefined =>
    [...container.querySelectorAll("button")].find((b) => b.textContent === text);

  const renderChat = async (handoff: boolean): Promise<void> => {
    await act(async () => {
      root.render(
        <ChatConversation
          client={new ApiClient("t")}
          conversationId="c1"
          regenerateVaries={false}
          handoff={handoff}
          onOpened={() => undefined}
          onNew={() => undefined}
        />,
      );
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(container.textContent).toContain("does not answer this"));
  };

  it("is hidden when the server has no helpdesk", async () => {
    await renderChat(false);
    expect(button("Talk to a person")).toBeUndefined();
  });

  it("sends the member's message and says the request was received", async () => {
    await renderChat(true);
    expect(container.querySelector(".handoff-offered")).not.toBeNull();
    act(() => button("Talk to a person")?.click());
    const box = container.querySelector<HTMLTextAreaElement>(".handoff-form textarea");
    expect(box).not.toBeNull();
    act(() => {
      // React tracks the value it set: set it the way typing does, then announce the input.
      const descriptor = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value");
      descriptor?.set?.call(box, "  I was charged twice ");
      box?.dispatchEvent(new Event("input", { bubbles: true }));
    });
    act(() => button("Send request")?.click());
    await vi.waitFor(() => expect(container.textContent).toContain("Request received"));
    expect(posts).toEqual([
      { url: "/api/v1/conversations/c1/handoff", body: { message: "I was charged twice" } },
    ]);
    expect(container.querySelector(".handoff-received")?.getAttribute("role")).toBe("status");
    expect(button("Talk to a person")).toBeUndefined();
  });

  it("says why when the server refuses", async () => {
    reply = { status: 409, body: { detail: "handoff to a person is not configured" } };
    await renderChat(true);
    act(() => button("Talk to a person")?.click());
    act(() => button("Send request")?.click());
    await vi.waitFor(() =>
      expect(container.querySelector(".handoff-problem")?.textContent).toContain("not configured"),
    );
    expect(posts[0]?.body).toEqual({ message: null });
    expect(button("Talk to a person")).toBeDefined();
  });
});

describe("the admin list of handoffs", () => {
  const handoff = (change: Partial<AdminHandoff>): AdminHandoff => ({
    id: "h1",
    conversation_id: "c1",
    user_id: 1,
    user_name: "kim",
    message: null,
    status: "pending",
    attempts: 0,
    next_attempt_at: AT,
    last_error: null,
    delivered_at: null,
    created_at: AT,
    attempt_log: [],
    ...change,
  });

  it("says where each delivery stands", () => {
    expect(deliveryText(handoff({}))).toBe("pending");
    expect(deliveryText(handoff({ attempts: 2, last_error: "ConnectError: refused" }))).toContain(
      "pending (ConnectError: refused), next attempt",
    );
    expect(deliveryText(handoff({ status: "failed", last_error: "HTTP 400: bad" }))).toBe(
      "failed: HTTP 400: bad",
    );
    expect(deliveryText(handoff({ status: "delivered", delivered_at: AT }))).toMatch(/^delivered /);
  });
});
