import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { MAX_URL_LENGTH, safeHttpUrl } from "../src/security/safeUrl";
import { urlCases } from "./urlCorpus.js";

// The corpus Chromium also runs against the built code (tests/browser/test_url_safety_browser.py).
const { hostile: HOSTILE, safe: SAFE } = urlCases(MAX_URL_LENGTH);

describe("safeHttpUrl rejects hostile URLs", () => {
  it("has a large corpus", () => {
    expect(HOSTILE.length).toBeGreaterThan(1000);
  });

  it.each(HOSTILE.map((u) => [JSON.stringify(u).slice(0, 80), u]))("rejects %s", (_label, url) => {
    expect(safeHttpUrl(url)).toBeNull();
  });

  it("rejects values that are not strings", () => {
    for (const v of [
      null,
      undefined,
      1,
      {},
      [],
      ["https://example.com"],
      new URL("https://e.com"),
    ]) {
      expect(safeHttpUrl(v)).toBeNull();
    }
  });
});

describe("safeHttpUrl accepts and normalises ordinary web URLs", () => {
  it.each(SAFE)("%s -> %s", (input, expected) => {
    expect(safeHttpUrl(input)).toBe(expected);
  });
});

describe("safeHttpUrl properties", () => {
  it("any accepted value is an absolute http(s) URL without credentials", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-composite", maxLength: 80 }), (s) => {
        for (const candidate of [
          s,
          `https://${s}`,
          `http://example.com/${s}`,
          `${s}://x.example`,
        ]) {
          const out = safeHttpUrl(candidate);
          if (out === null) continue;
          const u = new URL(out);
          expect(["http:", "https:"]).toContain(u.protocol);
          expect(u.hostname).not.toBe("");
          expect(u.username + u.password).toBe("");
          // eslint-disable-next-line no-control-regex -- the C0 controls, which must never pass
          expect(out).not.toMatch(/[\s\\\u0000-\u001f]/);
          expect(out.length).toBeLessThanOrEqual(MAX_URL_LENGTH);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("is idempotent: a safe URL stays the same when checked again", () => {
    fc.assert(
      fc.property(
        fc.webUrl({
          validSchemes: ["http", "https"],
          withQueryParameters: true,
          withFragments: true,
        }),
        (url) => {
          const once = safeHttpUrl(url);
          if (once !== null) expect(safeHttpUrl(once)).toBe(once);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never accepts a scheme other than http or https", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9+.-]{0,12}$/).filter((s) => !/^https?$/i.test(s)),
        fc.webPath(),
        (scheme, path) => {
          expect(safeHttpUrl(`${scheme}:${path}`)).toBeNull();
          expect(safeHttpUrl(`${scheme}://example.com${path}`)).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rejects any URL with a control character anywhere", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0x1f }),
        fc.integer({ min: 0, max: 25 }),
        (code, pos) => {
          const base = "https://example.com/path";
          const at = Math.min(pos, base.length);
          const url = base.slice(0, at) + String.fromCharCode(code) + base.slice(at);
          // A plain space at the very ends is trimmed; every other placement is refused.
          expect(safeHttpUrl(url)).toBeNull();
        },
      ),
    );
  });
});
