import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { ApiError, retryAfterSeconds } from "../src/api/client";
import { answerPlainText, excerptPlainText } from "../src/chat/plainText";
import {
  SESSION_ENDED,
  UNREACHABLE,
  UNAVAILABLE,
  feedbackProblem,
  problemFor,
  regenerateProblem,
  retryWhen,
  signInProblem,
  streamCut,
  streamProblem,
} from "../src/chat/problems";
import { parseTimestamp, shortTime } from "../src/chat/time";

/** Server and browser wording a member must never read. */
const RAW = /internal server error|failed to fetch|rate limit|generator|http \d|detail|\d{3}/i;

describe("problems in plain words", () => {
  it("says what happened and whether trying again can help, never the server's words", () => {
    const cases: [unknown, string, boolean][] = [
      [new TypeError("Failed to fetch"), "Could not reach citewall", true],
      [new ApiError(429, "rate limit exceeded"), "Too many questions", true],
      [new ApiError(429, "rate limit exceeded", 30), "Try again in 30 seconds.", true],
      [new ApiError(500, "Internal Server Error"), "could not answer just now", true],
      [new ApiError(502, "the answer generator failed"), "could not answer just now", true],
      [new ApiError(503, "the database is unavailable"), "could not answer just now", true],
      [new ApiError(404, "conversation 'x' not found"), "no longer exists", false],
      [new ApiError(409, "this conversation has 200 messages"), "conversation is full", false],
      [new ApiError(413, "message too long"), "too long", false],
      [new ApiError(422, "message: field required"), "could not accept", false],
      [new ApiError(401, "unknown or revoked token"), SESSION_ENDED, false],
    ];
    for (const [err, words, retry] of cases) {
      const problem = problemFor(err);
      expect(problem.message).toContain(words);
      expect(problem.retry).toBe(retry);
      expect(problem.message).not.toMatch(RAW);
    }
    for (const problem of [streamProblem(), streamCut()]) {
      expect(problem.retry).toBe(true);
      expect(problem.message).not.toMatch(RAW);
    }
  });

  it("a rate limit says when to try again, from Retry-After", () => {
    expect(retryAfterSeconds("30")).toBe(30);
    expect(retryAfterSeconds(" 7 ")).toBe(7);
    const now = Date.parse("2026-12-02T08:00:00Z");
    expect(retryAfterSeconds("Wed, 02 Dec 2026 08:01:30 GMT", now)).toBe(90);
    expect(retryAfterSeconds("Wed, 02 Dec 2026 07:59:00 GMT", now)).toBe(0);
    expect(retryAfterSeconds(null)).toBeNull();
    expect(retryAfterSeconds("soon")).toBeNull();
    expect(retryWhen(null)).toBe("Wait a moment, then try again.");
    expect(retryWhen(1)).toBe("Wait a moment, then try again.");
    expect(retryWhen(59)).toBe("Try again in 59 seconds.");
    expect(retryWhen(60)).toBe("Try again in a minute.");
    expect(retryWhen(3600)).toBe("Try again in 60 minutes.");
    expect(signInProblem(new ApiError(429, "rate limit exceeded", 12))).toBe(
      "Too many requests in a short time. Try again in 12 seconds.",
    );
    expect(signInProblem(new ApiError(503, "the database is unavailable"))).toBe(UNAVAILABLE);
    expect(signInProblem(new TypeError("Failed to fetch"))).toBe(UNREACHABLE);
  });

  it("a regenerate refused with 409 cannot be tried again in this conversation", () => {
    const problem = regenerateProblem(new ApiError(409, "this conversation has 200 messages"));
    expect(problem.message).toContain("Start a new conversation");
    expect(problem.retry).toBe(false);
    expect(regenerateProblem(new TypeError("x")).message).toBe(UNREACHABLE);
  });

  it("feedback that was not saved says so", () => {
    expect(feedbackProblem(new ApiError(500, "x")).message).toContain(
      "feedback could not be saved",
    );
    expect(feedbackProblem(new TypeError("x")).message).toBe(UNREACHABLE);
  });
});

describe("answerPlainText (Copy answer)", () => {
  it("keeps the prose and drops Markdown syntax and citation markers", () => {
    expect(answerPlainText("Reset it **now** [1]. Then *log in* [2][3].")).toBe(
      "Reset it now. Then log in.",
    );
    expect(answerPlainText("# Refunds\n\nFive days [1].\n\nOr ten.")).toBe(
      "Refunds\n\nFive days.\n\nOr ten.",
    );
  });

  it("writes lists as items, code as written, tables as tab-separated rows", () => {
    expect(answerPlainText("Steps:\n\n- one [1]\n- two\n  - two a\n\n3. three\n4. four")).toBe(
      "Steps:\n\n- one\n- two\n  - two a\n\n3. three\n4. four",
    );
    expect(answerPlainText("Run `cfg [1]`:\n\n```\nset x [2]\n```")).toBe(
      "Run cfg [1]:\n\nset x [2]",
    );
    expect(answerPlainText("| a | b |\n|---|---|\n| 1 | 2 [1] |")).toBe("a\tb\n1\t2");
  });

  it("keeps what looks like markup as text", () => {
    expect(answerPlainText("<b>x</b> [see](javascript:alert(1))")).toBe(
      "<b>x</b> [see](javascript:alert(1))",
    );
  });

  it("never leaves a citation marker in prose, whatever the text", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("word", " ", "[1]", "[2, 3]", "\n\n", "- ", "*")),
        (parts) => {
          const text = answerPlainText(parts.join(""));
          expect(text).not.toMatch(/\[\d/);
        },
      ),
    );
  });
});

describe("excerptPlainText (a source's excerpt)", () => {
  it("shows emphasis, code, headings and links as their words", () => {
    expect(excerptPlainText("Toggle **Press Enter to send** in *Settings*.")).toBe(
      "Toggle Press Enter to send in Settings.",
    );
    expect(
      excerptPlainText("## Refunds\n\nRun `cw sync` from [the console](https://x.test/c)."),
    ).toBe("Refunds\n\nRun cw sync from the console.");
    expect(excerptPlainText("See ![the icon](https://x.test/i.png) and <https://x.test/a>.")).toBe(
      "See the icon and https://x.test/a.",
    );
  });

  it("drops delimiters an excerpt's cut left unpaired", () => {
    expect(excerptPlainText("Toggle your preferred option for **Press")).toBe(
      "Toggle your preferred option for Press",
    );
    expect(excerptPlainText("Run `cw")).toBe("Run cw");
  });

  it("keeps markup as text, never as HTML", () => {
    expect(excerptPlainText("<b>x</b> <img src=x onerror=alert(1)>")).toBe(
      "<b>x</b> <img src=x onerror=alert(1)>",
    );
  });

  it("never leaves emphasis or heading syntax, whatever the text", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("word", " ", "**", "__", "# ", "\n\n", "[a](https://x.test)")),
        (parts) => {
          const text = excerptPlainText(parts.join(""));
          expect(text).not.toMatch(/\*\*|__|\]\(/);
          expect(text).not.toMatch(/^#+ /m);
        },
      ),
    );
  });
});

describe("message times", () => {
  const now = new Date(2026, 2, 10, 18, 30);

  it("reads a timestamp without a zone as UTC, like one with it", () => {
    expect(parseTimestamp("2026-03-10T10:00:00")?.getTime()).toBe(
      parseTimestamp("2026-03-10T10:00:00Z")?.getTime(),
    );
    expect(parseTimestamp("2026-03-10T10:00:00+00:00")?.getTime()).toBe(
      Date.UTC(2026, 2, 10, 10, 0),
    );
    expect(parseTimestamp("not a date")).toBeNull();
  });

  it("shows today's messages by time, older ones with their date, other years with the year", () => {
    const today = new Date(2026, 2, 10, 9, 5).toISOString();
    const earlier = new Date(2026, 1, 2, 9, 5).toISOString();
    const lastYear = new Date(2025, 1, 2, 9, 5).toISOString();
    const time = shortTime(today, now);
    expect(time).not.toBeNull();
    expect(time).not.toMatch(/2026|Mar/);
    expect(shortTime(earlier, now)).toContain(",");
    expect(shortTime(earlier, now)).not.toContain("2026");
    expect(shortTime(lastYear, now)).toContain("2025");
    expect(shortTime("garbage", now)).toBeNull();
  });
});
