// @vitest-environment happy-dom
/**
 * The admin pages of issue 15: users by name, empty states instead of bare tables, events and
 * rated answers linked to their conversation, the card page, focusable scroll boxes, and
 * feedback in analytics (the client against the API contract, with fetch mocked).
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { AdminAnalytics } from "../src/admin/AdminAnalytics";
import { CardDetail, cardPath } from "../src/admin/AdminCard";
import { CardsTable, noCardsText } from "../src/admin/AdminCards";
import { AdminTurn, MARKERS_EXPLAINED } from "../src/admin/AdminConversationView";
import { ConversationsTable, NO_CONVERSATIONS } from "../src/admin/AdminConversations";
import {
  FeedbackReportView,
  NO_FEEDBACK,
  answerPreview,
  feedbackSummary,
} from "../src/admin/AdminFeedback";
import { EventsTable } from "../src/admin/EventsTable";
import { HeadlineView } from "../src/admin/Headline";
import { JsonText } from "../src/admin/JsonText";
import { totalsByCard } from "../src/admin/performance";
import { ApiClient } from "../src/api/client";
import type {
  AdminConversationSummary,
  Card,
  EntryPerformance,
  FeedbackReport,
  RatedAnswer,
} from "../src/api/types";
import { Pager } from "../src/components/Pager";
import { parseRoute } from "../src/router";
import { retrievalEvent } from "./fixtures";

const html = (node: React.ReactNode): string => renderToStaticMarkup(node);

function summary(change: Partial<AdminConversationSummary> = {}): AdminConversationSummary {
  return {
    id: "c1",
    user_id: "7",
    title: "Refunds",
    created_at: "2026-11-30T10:00:00Z",
    updated_at: "2026-11-30T11:00:00Z",
    message_count: 2,
    user_name: "mia",
    hidden_at: null,
    not_found_answers: 0,
    rated_up: 0,
    rated_down: 0,
    ...change,
  };
}

const rated: RatedAnswer = {
  message_id: "m2",
  conversation_id: "conv 1",
  user_id: "7",
  user_name: "mia",
  question: "How long do refunds take?",
  answer: "Refunds take five days [1].\n\nAsk support [2].",
  rating: "down",
  comment: "Too vague <b>really</b>",
  created_at: "2026-11-30T12:00:00Z",
  updated_at: "2026-11-30T12:05:00Z",
};

const report: FeedbackReport = {
  since: null,
  until: null,
  up: 3,
  down: 1,
  helpful_rate: 0.75,
  cards: [
    {
      card_id: "help-refunds",
      title: "Refunds",
      external: true,
      up: 1,
      down: 1,
      helpful_rate: 0.5,
    },
    {
      card_id: "pb-refund-abuse",
      title: "Refund abuse playbook",
      external: false,
      up: 2,
      down: 0,
      helpful_rate: 1,
    },
  ],
  worst: [rated],
};

const perfRow: EntryPerformance = {
  card_id: "help-refunds",
  period_start: "2026-11-30",
  times_retrieved: 4,
  times_cited: 2,
  cite_rate: 0.5,
  mean_rank: 1.5,
  last_cited: "2026-11-30T12:00:00Z",
  is_external: true,
  helpful: 3,
  unhelpful: 1,
  helpful_rate: 0.75,
  handoffs: 1,
  audiences: [],
};

describe("users are shown by name", () => {
  it("lists a conversation's member by name, or says which id when there is none", () => {
    const named = html(<ConversationsTable items={[summary()]} />);
    expect(named).toContain('<td class="user-cell">mia</td>');
    const unnamed = html(<ConversationsTable items={[summary({ user_name: "" })]} />);
    expect(unnamed).toContain('<td class="user-cell">user 7</td>');
  });
});

describe("headline numbers", () => {
  it("shows questions, the share not found and the share rated down, with their counts", () => {
    const markup = html(
      <HeadlineView
        numbers={{
          since: null,
          until: null,
          questions: 40,
          answers: 42,
          small_talk: 0,
          not_found: 6,
          not_found_rate: 6 / 42,
          rated_down: 3,
          rated_down_rate: 3 / 42,
        }}
      />,
    );
    expect(markup).toContain('data-testid="headline-questions">40<');
    expect(markup).not.toContain("small talk");
    expect(markup).toContain("14.3%");
    expect(markup).toContain("(6 of 42 answers)");
    expect(markup).toContain("7.1%");
    expect(markup).toContain("(3 of 42 answers)");
  });

  it("shows small talk apart from the questions", () => {
    const markup = html(
      <HeadlineView
        numbers={{
          since: null,
          until: null,
          questions: 3,
          answers: 3,
          small_talk: 2,
          not_found: 1,
          not_found_rate: 1 / 3,
          rated_down: 0,
          rated_down_rate: 0,
        }}
      />,
    );
    expect(markup).toContain("(and 2 small talk: greetings and thanks)");
    expect(markup).toContain("(1 of 3 answers)");
  });

  it("says nothing is there to divide instead of 0%", () => {
    const numbers = {
      since: null,
      until: null,
      questions: 0,
      answers: 0,
      small_talk: 0,
      not_found: 0,
      not_found_rate: null,
      rated_down: 0,
      rated_down_rate: null,
    };
    const markup = html(<HeadlineView numbers={numbers} />);
    expect(markup).toContain("—");
    expect(markup).not.toContain("NaN");
  });
});

describe("what members did, as the admin sees it", () => {
  it("shows each conversation's status and rating, and filters to the ones worth a look", () => {
    const items = [
      summary({ id: "ok", title: "Fine one", rated_up: 1 }),
      summary({ id: "nf", title: "Missed one", not_found_answers: 2 }),
      summary({ id: "down", title: "Disliked one", rated_down: 1, rated_up: 1 }),
    ];
    const all = html(<ConversationsTable items={items} />);
    expect(all).toContain('<td data-testid="conversation-status">answered</td>');
    expect(all).toContain('<td data-testid="conversation-status">2 not found</td>');
    expect(all).toContain('<td data-testid="conversation-rating">1 helpful, 1 not helpful</td>');
    expect(all).toContain('<td data-testid="conversation-rating">—</td>');
    const missed = html(<ConversationsTable items={items} filter="not-found" />);
    expect(missed).toContain("Missed one");
    expect(missed).not.toContain("Fine one");
    const down = html(<ConversationsTable items={items} filter="rated-down" />);
    expect(down).toContain("Disliked one");
    expect(down).not.toContain("Missed one");
    const none = html(<ConversationsTable items={[items[0]!]} filter="rated-down" />);
    expect(none).toContain("No conversations match this filter.");
  });

  it("marks a conversation its member deleted", () => {
    const markup = html(
      <ConversationsTable items={[summary({ hidden_at: "2026-11-30T13:00:00Z" })]} />,
    );
    expect(markup).toContain("deleted by the member");
    expect(html(<ConversationsTable items={[summary()]} />)).not.toContain("deleted");
  });

  it("shows an answer's rating and comment, and says when it was regenerated", () => {
    const markup = html(
      <AdminTurn
        message={{
          id: "m4",
          seq: 4,
          role: "assistant",
          content: "Refunds take five days [1].",
          sources: [],
          hybrid_path: "full",
          timings: null,
          generator: null,
          created_at: "2026-11-30T12:00:00Z",
          regenerated_from: "m2",
          feedback: {
            rating: "down",
            comment: "Wrong <i>carrier</i>",
            created_at: "2026-11-30T12:01:00Z",
            updated_at: "2026-11-30T12:02:00Z",
          },
        }}
      />,
    );
    expect(markup).toContain("rated unhelpful");
    expect(markup).toContain("Wrong &lt;i&gt;carrier&lt;/i&gt;");
    expect(markup).toContain('data-testid="answer-regenerated"');
    // The stored answer keeps its [n] markers for admins, with a line saying what they are.
    expect(markup).toContain("[1]");
    expect(markup).toContain(MARKERS_EXPLAINED);
  });
});

describe("empty results say so instead of showing bare tables", () => {
  it("conversations", () => {
    const markup = html(<ConversationsTable items={[]} />);
    expect(markup).toContain(NO_CONVERSATIONS);
    expect(markup).not.toContain("<table");
  });

  it("cards: no table, no pager, no '0 of 0'", () => {
    const markup = html(
      <CardsTable
        page={{ cards: [], total: 0, limit: 25, offset: 0 }}
        empty={noCardsText("zebra", "internal")}
        onPage={() => undefined}
      />,
    );
    expect(markup).toContain("No internal cards match \u201czebra\u201d.");
    expect(markup).not.toContain("<table");
    expect(markup).not.toContain("0 of 0");
    expect(noCardsText("", "all")).toBe("The knowledge base has no cards yet.");
  });

  it("the pager renders nothing when there is nothing to page", () => {
    const noop = (): void => undefined;
    expect(html(<Pager offset={0} pageSize={25} total={0} onChange={noop} />)).toBe("");
    expect(html(<Pager offset={0} pageSize={50} total={null} shown={0} onChange={noop} />)).toBe(
      "",
    );
    expect(html(<Pager offset={0} pageSize={25} total={30} onChange={noop} />)).toContain(
      "1–25 of 30",
    );
  });

  it("feedback", () => {
    const markup = html(
      <FeedbackReportView report={{ ...report, up: 0, down: 0, cards: [], worst: [] }} />,
    );
    expect(markup).toContain(NO_FEEDBACK);
    expect(markup).not.toContain("<table");
  });
});

describe("retrieval events link to their conversation and card", () => {
  const events = [
    retrievalEvent({ card_id: "help-refunds", conversation_id: "c/1", query: "refund window" }),
    retrievalEvent({ card_id: "pb-1", conversation_id: "c2", query: null }),
  ];

  it("in the event browser", () => {
    const markup = html(<EventsTable events={events} linkConversations empty="none" />);
    expect(markup).toContain('href="/admin/conversations/c%2F1">refund window</a>');
    expect(markup).toContain('href="/admin/conversations/c2">(open the conversation)</a>');
    expect(markup).toContain('href="/admin/cards/help-refunds"><code>help-refunds</code></a>');
  });

  it("but not inside the conversation itself", () => {
    const markup = html(<EventsTable events={events} empty="none" />);
    expect(markup).not.toContain("/admin/conversations/");
    expect(markup).toContain('<td class="query-cell">refund window</td>');
  });
});

describe("the card page", () => {
  const card: Card = {
    id: "help/refunds",
    title: "Refunds <script>",
    url: "https://help.example/refunds",
    license: "CC-BY-4.0",
    external: true,
    body: "Refunds take five days.\n\n<img src=x onerror=alert(1)>",
    metadata: { product: "billing", tags: ["refund"] },
    extra: { updated_at: "2026-11-30T12:00:00Z" },
  };

  it("has a route of its own", () => {
    expect(cardPath("help/refunds")).toBe("/admin/cards/help%2Frefunds");
    expect(parseRoute(cardPath("help/refunds"))).toEqual({
      name: "admin-card",
      id: "help/refunds",
    });
    expect(parseRoute("/admin/cards")).toEqual({ name: "admin-cards" });
  });

  it("shows title, link, licence, kind, metadata and body as text", () => {
    const markup = html(<CardDetail card={card} />);
    expect(markup).toContain("<h1>Refunds &lt;script&gt;</h1>");
    expect(markup).toContain(
      '<a href="https://help.example/refunds" target="_blank" rel="noopener noreferrer">',
    );
    expect(markup).toContain("CC-BY-4.0");
    expect(markup).toContain('data-testid="card-kind">external</span>');
    expect(markup).toContain("&quot;product&quot;: &quot;billing&quot;");
    expect(markup).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(markup).not.toContain("<img");
  });

  it("does not link a URL that fails the gate, and says when the licence is unknown", () => {
    const markup = html(
      <CardDetail card={{ ...card, external: false, url: "javascript:alert(1)", license: null }} />,
    );
    expect(markup).not.toContain('<a href="javascript');
    expect(markup).toContain("not a safe web link");
    expect(markup).toContain("Not stated");
    expect(markup).toContain('data-testid="card-kind">internal</span>');
  });

  it("shows an internal card's staff notes and, apart, what to tell the member", () => {
    const playbook: Card = {
      ...card,
      id: "pb-late",
      external: false,
      url: null,
      body: "Log the credit in Helm with reason code GW-LATE.",
      reply: "Late parcels get a goodwill credit on your next invoice.",
    };
    const markup = html(<CardDetail card={playbook} />);
    expect(markup).toContain("<h2>Staff notes</h2>");
    expect(markup).toContain("<h2>Tell the member</h2>");
    expect(markup).toMatch(
      /data-testid="card-reply">Late parcels get a goodwill credit on your next invoice\.</,
    );
    const none = html(<CardDetail card={{ ...playbook, reply: null }} />);
    expect(none).toContain("No reply: answers rank this card but quote nothing from it.");
    // A public card has no reply: its body is what members read.
    expect(html(<CardDetail card={card} />)).not.toContain("Tell the member");
  });

  it("lists each card's reply in the catalogue", () => {
    const playbook: Card = {
      ...card,
      id: "pb-late",
      external: false,
      url: null,
      reply: "Late parcels get a goodwill credit on your next invoice.",
    };
    const markup = html(
      <CardsTable
        page={{ cards: [playbook, card], total: 2, limit: 25, offset: 0 }}
        empty="none"
        onPage={() => undefined}
      />,
    );
    expect(markup).toContain('<th scope="col">Tell the member</th>');
    expect(markup).toContain(
      '<span class="reply-preview">Late parcels get a goodwill credit on your next invoice.</span>',
    );
  });
});

describe("scroll boxes can be reached by keyboard", () => {
  it("a metadata box is focusable and labelled", () => {
    const markup = html(<JsonText value={{ a: 1 }} label="Metadata of help-refunds" />);
    expect(markup).toMatch(
      /<div class="json" tabindex="0" role="group" aria-label="Metadata of help-refunds">/,
    );
  });

  it("so is every admin table's scrolling wrapper", () => {
    const markup = html(<ConversationsTable items={[summary()]} />);
    expect(markup).toMatch(/<div class="table-wrap" tabindex="0" role="group" aria-label="[^"]+">/);
  });
});

describe("feedback", () => {
  it("sums helpful and unhelpful per card across periods", () => {
    const [t] = totalsByCard([
      perfRow,
      { ...perfRow, period_start: "2026-11-29", helpful: 1, unhelpful: 3 },
    ]);
    expect(t).toMatchObject({ helpful: 4, unhelpful: 4, helpful_rate: 0.5 });
    const [unrated] = totalsByCard([{ ...perfRow, helpful: 0, unhelpful: 0 }]);
    expect(unrated).toMatchObject({ helpful: 0, unhelpful: 0, helpful_rate: null });
  });

  it("reports the window's ratings, each card's helpful rate and the worst answers", () => {
    expect(feedbackSummary(report)).toBe("4 ratings: 3 helpful, 1 unhelpful (75.0% helpful).");
    const markup = html(<FeedbackReportView report={report} />);
    expect(markup).toContain('href="/admin/cards/help-refunds">Refunds</a>');
    expect(markup).toContain('<td class="num helpful-rate">50.0%</td>');
    expect(markup).toContain('href="/admin/conversations/conv%201">How long do refunds take?</a>');
    expect(markup).toContain("Too vague &lt;b&gt;really&lt;/b&gt;");
    expect(markup).toContain("<td>mia</td>");
    expect(markup).toContain('data-testid="rating">unhelpful</span>');
  });

  it("previews an answer on one line with its markers", () => {
    expect(answerPreview(rated.answer)).toBe("Refunds take five days [1]. Ask support [2].");
    expect(answerPreview("x".repeat(500), 10)).toBe(`${"x".repeat(9)}…`);
  });
});

const headlineNumbers = {
  since: null,
  until: null,
  questions: 3,
  answers: 3,
  small_talk: 0,
  not_found: 1,
  not_found_rate: 0.3333,
  rated_down: 0,
  rated_down_rate: 0,
};

describe("the analytics page against the API (fetch mocked)", () => {
  let container: HTMLElement;
  let root: Root;
  const requests: { url: string; auth: string | null }[] = [];

  beforeEach(() => {
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
    requests.length = 0;
    vi.stubGlobal(
      "fetch",
      vi.fn((input: string, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        requests.push({ url: input, auth: headers.get("Authorization") });
        const body = input.startsWith("/api/v1/admin/analytics/feedback")
          ? report
          : input.startsWith("/api/v1/admin/analytics/entry-performance")
            ? [perfRow]
            : input.startsWith("/api/v1/admin/analytics/headline")
              ? headlineNumbers
              : null;
        return Promise.resolve(
          new Response(JSON.stringify(body ?? { detail: "no such route" }), {
            status: body ? 200 : 404,
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

  it("asks for the headline numbers, entry performance and feedback, and shows them", async () => {
    await act(async () => {
      root.render(<AdminAnalytics client={new ApiClient("t0k")} />);
      await Promise.resolve();
    });
    await vi.waitFor(() => {
      expect(container.querySelector("[data-testid=feedback-summary]")).not.toBeNull();
      expect(container.querySelector("table.performance-table")).not.toBeNull();
      expect(container.querySelector("[data-testid=headline-questions]")).not.toBeNull();
    });
    const urls = requests.map((r) => r.url).sort();
    expect(urls.slice(0, 2)).toEqual([
      "/api/v1/admin/analytics/entry-performance?period=day",
      "/api/v1/admin/analytics/feedback?limit=20",
    ]);
    expect(urls[2]).toMatch(/^\/api\/v1\/admin\/analytics\/headline\?since=[^&]+$/);
    expect(urls).toHaveLength(3);
    expect(requests.every((r) => r.auth === "Bearer t0k")).toBe(true);
    const row = container.querySelector("table.performance-table tbody tr");
    expect(row?.querySelector(".helpful-rate")?.textContent).toBe("75.0%");
    expect(row?.querySelector(".handoffs")?.textContent).toBe("1");
    const worst = container.querySelector<HTMLAnchorElement>("table.worst-answers a");
    expect(worst?.getAttribute("href")).toBe("/admin/conversations/conv%201");
    expect(container.querySelector(".chart-legend")?.textContent).toContain("Times retrieved");
  });

  it("asks for a look-back window when one is chosen", async () => {
    await act(async () => {
      root.render(<AdminAnalytics client={new ApiClient("t0k")} />);
      await Promise.resolve();
    });
    const select = container.querySelector<HTMLSelectElement>("#feedback-window");
    expect(select).not.toBeNull();
    await act(async () => {
      select!.value = "week";
      select!.dispatchEvent(new Event("change", { bubbles: true }));
      await Promise.resolve();
    });
    await vi.waitFor(() => {
      expect(requests.some((r) => /feedback\?since=[^&]+&limit=20$/.test(r.url))).toBe(true);
    });
  });
});
