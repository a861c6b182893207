/**
 * A guard over the source tree: the UI never writes HTML strings into the DOM, never evaluates
 * code, and never sets inline styles (the CSP forbids them, and React's `style` prop is not
 * needed: styling lives in the stylesheet).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname, "..", "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name: string) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

const FORBIDDEN: [string, RegExp][] = [
  ["dangerouslySetInnerHTML", /dangerouslySetInnerHTML/],
  ["innerHTML / outerHTML", /\.(inner|outer)HTML\b/],
  ["insertAdjacentHTML", /insertAdjacentHTML/],
  ["document.write", /document\.write/],
  ["eval / new Function", /\beval\(|new Function\(/],
  ["inline style prop", /\bstyle=\{/],
  ["javascript: URL", /javascript:/i],
];

/** Source text without comments (they may name the very things they guard against). */
function code(file: string): string {
  return readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
}

describe("no unsafe DOM sinks in web/src", () => {
  const sources = files(SRC);

  it("finds the source files", () => {
    expect(sources.length).toBeGreaterThan(20);
  });

  it.each(FORBIDDEN)("no %s", (_name, pattern) => {
    const hits = sources.filter((f) => pattern.test(code(f)));
    expect(hits).toEqual([]);
  });

  it("makes external links only from safeHttpUrl output", () => {
    // Every file that renders an <a target="_blank"> must import the safe-URL gate or receive
    // an already-checked href (SourcePopover's `href` prop is set by SourcesPanel).
    for (const file of sources) {
      const text = readFileSync(file, "utf8");
      if (!text.includes('target="_blank"')) continue;
      const gated =
        text.includes("safeHttpUrl") || text.includes("Already passed through safeHttpUrl");
      expect(gated, file).toBe(true);
    }
  });
});
