import fc from "fast-check";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { SafeMarkdown } from "../src/markdown/SafeMarkdown";

function html(source: string, strip = true): string {
  return renderToStaticMarkup(<SafeMarkdown source={source} stripCitationMarkers={strip} />);
}

/** Every tag name in the markup. */
function tags(markup: string): string[] {
  return [...markup.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => (m[1] ?? "").toLowerCase());
}

/** Every attribute name on any element (text is escaped, so "<" only starts real tags). */
function attributes(markup: string): string[] {
  return [...markup.matchAll(/<[a-zA-Z][a-zA-Z0-9-]*([^>]*)>/g)].flatMap((m) =>
    [...(m[1] ?? "").matchAll(/([^\s=/]+)=/g)].map((a) => (a[1] ?? "").toLowerCase()),
  );
}

const ALLOWED_ATTRIBUTES = new Set(["class", "start"]);

const ALLOWED = new Set([
  "div",
  "p",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "strong",
  "em",
  "s",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "hr",
  "br",
  "pre",
  "code",
  "span",
]);

const HOSTILE_ANSWERS = [
  "<script>window.__pwned = true</script>",
  "Hello <img src=x onerror=alert(1)> there",
  '<a href="javascript:alert(1)">click</a>',
  "[click me](javascript:alert(1))",
  "[site](https://evil.example/phish)",
  "![pic](https://evil.example/x.png)",
  "![pic](javascript:alert(1))",
  "<https://evil.example/autolink>",
  "Visit https://evil.example/bare or www.evil.example now",
  "[ref][1]\n\n[1]: https://evil.example/ref",
  '<iframe src="https://evil.example"></iframe>',
  "<svg onload=alert(1)><circle/></svg>",
  '<div style="background:url(javascript:alert(1))">x</div>',
  "<style>body{display:none}</style>",
  "<!-- comment --><b onmouseover=alert(1)>bold</b>",
  "&lt;script&gt;alert(1)&lt;/script&gt;",
  "&#60;script&#62;alert(1)&#60;/script&#62;",
  "```html\n<script>alert(1)</script>\n```",
  "`<img src=x onerror=alert(1)>`",
  "> <form action=https://evil.example><input name=p></form>",
  "| a | b |\n|---|---|\n| <script>x</script> | [l](javascript:x) |",
  "<details open ontoggle=alert(1)>",
  "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
  "[x](  javascript:alert(1)  )",
  "[x](&#106;avascript:alert(1))",
  "[x]: javascript:alert(1)\n\n[x]",
];

describe("SafeMarkdown renders model text without links or raw HTML", () => {
  it.each(HOSTILE_ANSWERS)("%j", (source) => {
    const markup = html(source);
    for (const tag of tags(markup)) expect(ALLOWED).toContain(tag);
    expect(markup).not.toMatch(/<a[\s>]/i);
    expect(markup).not.toMatch(/<img|<script|<iframe|<svg|<style|<form|<input|<details/i);
    for (const attr of attributes(markup)) expect(ALLOWED_ATTRIBUTES).toContain(attr);
  });

  it("keeps a model-written URL as visible plain text", () => {
    const markup = html("See [docs](https://evil.example/phish) and https://evil.example/bare");
    expect(markup).toContain("https://evil.example/phish");
    expect(markup).toContain("https://evil.example/bare");
    expect(markup).not.toContain("<a");
  });

  it("shows raw HTML as escaped text", () => {
    expect(html("<script>alert(1)</script>")).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("renders the safe subset", () => {
    const markup = html(
      "# Title\n\nSome **bold**, *em*, ~~gone~~ and `code`.\n\n- one\n- two\n\n3. three\n4. four\n\n> quote\n\n```\nblock\n```\n\n---\n\n| h | r |\n|:-|-:|\n| 1 | 2 |",
    );
    expect(markup).toContain("<h3>Title</h3>");
    expect(markup).toContain("<strong>bold</strong>");
    expect(markup).toContain("<em>em</em>");
    expect(markup).toContain("<s>gone</s>");
    expect(markup).toContain("<code>code</code>");
    expect(markup).toContain("<li>one</li>");
    expect(markup).toContain('<ol start="3">');
    expect(markup).toContain("<blockquote>");
    expect(markup).toContain("<pre><code>block\n</code></pre>");
    expect(markup).toContain("<hr/>");
    expect(markup).toContain('<th class="md-align-left">h</th>');
    expect(markup).toContain('<td class="md-align-right">2</td>');
  });

  it("strips citation markers from prose but not from code", () => {
    const markup = html("Reset the router [1]. Then use `arr[0]` and [2, 3].");
    expect(markup).toBe(
      '<div class="markdown"><p>Reset the router. Then use <code>arr[0]</code> and.</p></div>',
    );
  });

  it("keeps markers for the admin view", () => {
    expect(html("Reset it [1].", false)).toContain("Reset it [1].");
  });

  it("never emits an anchor, image or event handler for any input", () => {
    const pieces = fc.constantFrom(
      "[",
      "]",
      "(",
      ")",
      "<",
      ">",
      "!",
      "javascript:",
      "https://evil.example",
      "a",
      " ",
      "\n",
      "<a href=x>",
      "<img src=x onerror=y>",
      "*",
      "`",
      "|",
      "-",
      ":",
      "&#106;",
      "[1]",
      "www.",
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        const markup = html(parts.join(""));
        for (const tag of tags(markup)) expect(ALLOWED).toContain(tag);
        for (const attr of attributes(markup)) expect(ALLOWED_ATTRIBUTES).toContain(attr);
        expect(markup).not.toMatch(/<a[\s>]/i);
      }),
      { numRuns: 400 },
    );
  });
});
