import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { toStreamEvent } from "../src/api/client";
import { SseParser } from "../src/api/sse";

const STREAM =
  'event: meta\ndata: {"conversation_id":"c1"}\n\n' +
  ": keep-alive\n\n" +
  'event: token\ndata: {"delta":"Hello "}\n\n' +
  'event: token\r\ndata: {"delta":"world"}\r\n\r\n' +
  'event: final\ndata: {"conversation_id":"c1","message_id":"m1",\ndata: "answer":"Hello world","sources":[],"hybrid_path":"rrf_only","created_at":"2026-01-01T00:00:00Z"}\n\n';

function parseAll(chunks: string[]): { event: string; data: string }[] {
  const p = new SseParser();
  return chunks.flatMap((c) => p.push(c));
}

describe("SseParser", () => {
  it("parses events, comments, CRLF and multi-line data", () => {
    const events = parseAll([STREAM]);
    expect(events.map((e) => e.event)).toEqual(["meta", "token", "token", "final"]);
    expect((JSON.parse(events[3]?.data ?? "") as { answer: string }).answer).toBe("Hello world");
  });

  it("gives the same events however the stream is split", () => {
    const whole = parseAll([STREAM]);
    fc.assert(
      fc.property(fc.array(fc.nat(STREAM.length), { maxLength: 12 }), (cuts) => {
        const points = [0, ...[...new Set(cuts)].sort((a, b) => a - b), STREAM.length];
        const chunks = points.slice(1).map((end, i) => STREAM.slice(points[i], end));
        expect(parseAll(chunks)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it("drops an event without its closing blank line", () => {
    const p = new SseParser();
    expect(p.push('event: token\ndata: {"delta":"x"}\n')).toEqual([]);
    expect(p.finish()).toEqual([]);
  });

  it("defaults the event name to message and drops one leading space only", () => {
    expect(parseAll(["data:  two spaces\n\n"])).toEqual([
      { event: "message", data: " two spaces" },
    ]);
  });
});

describe("toStreamEvent", () => {
  it("decodes the four event kinds", () => {
    expect(toStreamEvent("meta", '{"conversation_id":"c"}')).toEqual({
      event: "meta",
      data: { conversation_id: "c" },
    });
    expect(toStreamEvent("token", '{"delta":"d"}')).toEqual({
      event: "token",
      data: { delta: "d" },
    });
    expect(toStreamEvent("error", '{"detail":"boom"}')).toEqual({
      event: "error",
      data: { detail: "boom" },
    });
    expect(toStreamEvent("final", '{"answer":"a","sources":[]}')?.event).toBe("final");
  });

  it("skips malformed or unknown events", () => {
    expect(toStreamEvent("token", "not json")).toBeNull();
    expect(toStreamEvent("token", '{"delta":5}')).toBeNull();
    expect(toStreamEvent("meta", "{}")).toBeNull();
    expect(toStreamEvent("final", '{"sources":[]}')).toBeNull();
    expect(toStreamEvent("surprise", "{}")).toBeNull();
  });
});
