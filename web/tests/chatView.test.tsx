import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import type { Source } from "../src/api/types";
import type { DisplayTurn } from "../src/chat/state";
import { Composer } from "../src/member/Composer";
import { SourcePopover } from "../src/member/SourcePopover";
import { SourcesPanel } from "../src/member/SourcesPanel";
import {
  NOT_FOUND_LABEL,
  REPHRASE_HINT,
  STOPPED_EMPTY,
  STOPPED_LABEL,
  Turn,
  type TurnActions,
} from "../src/member/Turn";

const AT = "2026-03-10T10:00:00Z";
const NOW = new Date("2026-03-10T12:00:00Z");
const source: Source = {
  card_id: "refunds",
  title: "Refunds",
  url: "https://help.example/r",
  excerpt: "",
  metadata: {},
};

function turn(change: Partial<DisplayTurn> = {}): DisplayTurn {
  return {
    key: "a1",
    role: "assistant",
    messageId: "m2",
    content: "Refunds take **five** days [1].",
    sources: [source],
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

const actions = (change: Partial<TurnActions> = {}): TurnActions => ({
  busy: false,
  latest: true,
  regenerates: true,
  onRetry: () => undefined,
  onRegenerate: () => undefined,
  onRate: () => Promise.resolve(null),
  ...change,
});

const render = (t: DisplayTurn, a: TurnActions | undefined = actions(), replaced = false) =>
  renderToStaticMarkup(<Turn turn={t} now={NOW} actions={a} replaced={replaced} />);

describe("an answer's actions", () => {
  it("offers Copy, Regenerate on the newest answer, and the two ratings", () => {
    const html = render(turn());
    expect(html).toContain('aria-label="Copy answer"');
    expect(html).toContain('aria-label="Regenerate answer"');
    expect(html).toContain('aria-label="Rate this answer"');
    expect(html).toMatch(/aria-pressed="false"[^>]*>Helpful</);
    expect(html).toMatch(/aria-pressed="false"[^>]*>Not helpful</);
  });

  it("puts the rating first in the answer's action row", () => {
    const html = render(turn());
    const rating = html.indexOf('aria-label="Rate this answer"');
    expect(rating).toBeGreaterThan(-1);
    expect(rating).toBeLessThan(html.indexOf('aria-label="Copy answer"'));
    expect(rating).toBeLessThan(html.indexOf('aria-label="Regenerate answer"'));
  });

  it("shows a source's excerpt as plain text in its popover", () => {
    const html = renderToStaticMarkup(
      <SourcePopover
        id="p1"
        source={{ ...source, excerpt: "Press **Save** in [Settings](https://x.test/s)." }}
        href="https://help.example/r"
        hybridPath="full"
        audience="member"
        onClose={() => undefined}
      />,
    );
    expect(html).toContain("<blockquote>Press Save in Settings.</blockquote>");
    expect(html).not.toContain("**");
  });

  it("offers no Regenerate on an earlier answer or while an answer streams", () => {
    expect(render(turn(), actions({ latest: false }))).not.toContain("Regenerate");
    // The server's generator is deterministic: asking again would give the same answer.
    const same = render(turn(), actions({ regenerates: false }));
    expect(same).not.toContain("Regenerate");
    expect(same).toContain("Copy answer");
    expect(same).toContain("Rate this answer");
    expect(render(turn(), actions({ busy: true }))).not.toContain("Regenerate");
  });

  it("shows the member's rating as pressed", () => {
    const html = render(
      turn({ feedback: { message_id: "m2", rating: "down", comment: null, updated_at: AT } }),
    );
    expect(html).toMatch(/aria-pressed="true"[^>]*>Not helpful</);
    expect(html).toMatch(/aria-pressed="false"[^>]*>Helpful</);
    expect(html).toContain("Add a comment");
  });

  it("shows no rating until the server has stored the answer", () => {
    const html = render(turn({ messageId: null, answerStatus: "stopped", content: "Refunds" }));
    expect(html).not.toContain("Rate this answer");
    expect(html).toContain("Copy answer");
  });

  it("shows nothing to act on while the answer streams", () => {
    const html = render(turn({ pending: true, messageId: null, content: "Refunds" }));
    expect(html).not.toContain("Copy answer");
    expect(html).not.toContain("turn-footer");
    expect(html).toContain('aria-busy="true"');
  });

  it("dates the answer and the question", () => {
    const html = render(turn());
    expect(html).toContain(`<time class="turn-time" dateTime="${AT}"`);
    const question = render(turn({ role: "user", content: "How long?" }));
    expect(question).toContain(`dateTime="${AT}"`);
  });
});

describe("failed, stopped and replaced answers", () => {
  it("a failed answer says what went wrong with Retry when trying again can help", () => {
    const problem = { message: "citewall could not answer just now.", retry: true };
    const html = render(turn({ content: "", error: problem, messageId: null }));
    expect(html).toContain('role="alert"');
    expect(html).toContain(problem.message);
    expect(html).toContain(">Retry</button>");
    expect(html).not.toContain("Copy answer");
    const final = render(turn({ content: "", error: { ...problem, retry: false } }));
    expect(final).not.toContain("Retry");
  });

  it("a stopped answer keeps what was said, labelled, with its sources", () => {
    const html = render(turn({ answerStatus: "stopped" }));
    expect(html).toContain(STOPPED_LABEL);
    expect(html).toContain("five");
    expect(html).toContain("Sources");
    expect(html).toContain("Regenerate");
  });

  it("a stop before any prose says so and offers Retry (nothing was stored)", () => {
    const html = render(
      turn({ content: "", sources: [], messageId: null, answerStatus: "stopped" }),
    );
    expect(html).toContain(STOPPED_EMPTY);
    expect(html).toContain(">Retry</button>");
    expect(html).not.toContain("Regenerate");
    expect(html).not.toContain("No public sources");
  });

  it("a not_found answer suggests rephrasing and shows no sources", () => {
    const html = render(turn({ answerStatus: "not_found", content: "Not in the KB." }));
    expect(html).toContain(NOT_FOUND_LABEL);
    expect(html).toContain(REPHRASE_HINT);
    expect(html).not.toContain("Sources");
  });

  it("a replaced answer stays, folded away under its own heading", () => {
    const html = render(turn(), actions({ latest: false }), true);
    expect(html).toContain('<details class="earlier-answer">');
    expect(html).toContain("Earlier answer");
    expect(html).toContain("five");
  });
});

describe("copying an answer copies no hidden text", () => {
  it("names source chips and the source link with aria-label, not visually hidden text", () => {
    const html = renderToStaticMarkup(<SourcesPanel sources={[source]} hybridPath="full" />);
    expect(html).toContain('aria-label="1 Refunds: show source details"');
    expect(html).not.toContain("visually-hidden");
    expect(render(turn())).not.toMatch(/visually-hidden[^<]*<\/span>/);
  });
});

describe("the composer", () => {
  const base = {
    value: "How long?",
    onChange: () => undefined,
    onSend: () => undefined,
    onStop: () => undefined,
  };

  it("sends, or stops the answer streaming in", () => {
    const idle = renderToStaticMarkup(<Composer {...base} busy={false} unavailable={null} />);
    expect(idle).toContain(">Send</button>");
    const busy = renderToStaticMarkup(<Composer {...base} busy unavailable={null} />);
    expect(busy).toContain('aria-label="Stop answering"');
    expect(busy).not.toContain(">Send<");
    expect(busy).not.toMatch(/<textarea[^>]*disabled/);
  });

  it("is disabled, saying why, where no question can be sent", () => {
    const html = renderToStaticMarkup(
      <Composer
        {...base}
        busy={false}
        unavailable="This conversation cannot take new questions."
      />,
    );
    expect(html).toMatch(/<textarea[^>]*disabled/);
    expect(html).toContain('placeholder="This conversation cannot take new questions."');
    expect(html).toMatch(/<button type="submit" disabled/);
  });
});
