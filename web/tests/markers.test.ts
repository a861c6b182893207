import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { stripMarkers } from "../src/markdown/markers";

describe("stripMarkers", () => {
  it.each([
    ["Reset it [1].", "Reset it."],
    ["Reset it [1][2]. Then log in [3].", "Reset it. Then log in."],
    ["Both apply [1, 2].", "Both apply."],
    ["Both apply [1,2,3].", "Both apply."],
    ["Range [2-4] and [5–6].", "Range and."],
    ["Spaced [ 7 ] marker", "Spaced marker"],
    ["Footnote style [^3].", "Footnote style."],
    ["[1] at the start", " at the start"],
    ["no markers here", "no markers here"],
    ["a [link](https://x.example) stays", "a [link](https://x.example) stays"],
    ["[1](https://evil.example) marker-shaped link", "(https://evil.example) marker-shaped link"],
    ["an array [a] and [b2] stay", "an array [a] and [b2] stay"],
    ["multi\nline [4]\ntext", "multi\nline\ntext"],
    ["nested [[1]2] marker", "nested marker"],
    ["Lenticular 【3】 and 【3†source】.", "Lenticular and."],
    ["Dagger [1†source] and doubled [[1]].", "Dagger and doubled."],
    ["Tool reference 【4:0†source】.", "Tool reference."],
    ["a slice [1:2] stays", "a slice [1:2] stays"],
  ])("%j -> %j", (input, expected) => {
    expect(stripMarkers(input)).toBe(expected);
  });

  it("leaves no [n] marker in any text", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.nat(999).map((n) => `[${n}]`),
          ),
          { maxLength: 20 },
        ),
        (parts) => {
          expect(stripMarkers(parts.join(""))).not.toMatch(/\[\s*\d{1,3}\s*\]/);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("changes nothing in text without brackets", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes("[")),
        (s) => {
          expect(stripMarkers(s)).toBe(s);
        },
      ),
    );
  });
});
