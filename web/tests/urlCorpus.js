// @ts-check
/**
 * The URL-safety corpus: hostile URLs `safeHttpUrl` must refuse and ordinary ones it must accept
 * (with the normalised result). One module for both places the check is proven: the Node tests
 * (`safeUrl.test.ts`) and Debian Chromium, which imports this file as it is into a page of the
 * running app (`tests/browser/test_url_safety_browser.py`). Plain JavaScript for that reason, with
 * no imports: the caller passes the limit the built code enforces.
 */

/**
 * Every casing of a word (2^n variants), for scheme-spelling attacks.
 * @param {string} word
 * @returns {string[]}
 */
function casings(word) {
  let out = [""];
  for (const ch of word) {
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    out = out.flatMap((p) => (lower === upper ? [p + ch] : [p + lower, p + upper]));
  }
  return out;
}

/**
 * `word` with `insert` placed at every position inside it.
 * @param {string} word
 * @param {string} insert
 * @returns {string[]}
 */
function withInsertions(word, insert) {
  /** @type {string[]} */
  const out = [];
  for (let i = 1; i < word.length; i += 1) out.push(word.slice(0, i) + insert + word.slice(i));
  return out;
}

const CONTROL_CHARS = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
  "\u007f",
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)),
];

const INVISIBLES = [
  "\u00a0",
  "\u00ad",
  "\u034f",
  "\u061c",
  "\u180e",
  "\u2000",
  "\u200a",
  "\u200b",
  "\u200c",
  "\u200d",
  "\u200e",
  "\u200f",
  "\u2028",
  "\u2029",
  "\u202a",
  "\u202e",
  "\u202f",
  "\u2060",
  "\u2066",
  "\u2069",
  "\u205f",
  "\u3000",
  "\ufeff",
  "\ufe0f",
  "\ufff9",
  "\ufffb",
];

/**
 * Every case, for a checker whose longest accepted URL is `maxUrlLength` characters.
 *
 * @param {number} maxUrlLength
 * @returns {{ hostile: string[]; safe: [string, string][] }}
 */
export function urlCases(maxUrlLength) {
  const hostile = [
    // javascript: in every casing, with and without payloads
    ...casings("javascript").map((s) => `${s}:alert(1)`),
    "javascript://%0aalert(1)",
    "javascript://example.com/%0Aalert(1)",
    "javascript:/**/alert(document.domain)",
    "  javascript:alert(1)",
    "javascript :alert(1)",
    "java script:alert(1)",
    // tabs, newlines and carriage returns inside the scheme (browsers strip them)
    ...withInsertions("javascript", "\t").map((s) => `${s}:alert(1)`),
    ...withInsertions("javascript", "\n").map((s) => `${s}:alert(1)`),
    ...withInsertions("javascript", "\r").map((s) => `${s}:alert(1)`),
    ...withInsertions("https", "\t").map((s) => `${s}://example.com/`),
    "https://exa\tmple.com/",
    "https://example.com/\nx",
    // HTML entities and percent-encoding (only decoded by an HTML parser, never by us)
    "&#106;avascript:alert(1)",
    "&#x6A;avascript:alert(1)",
    "&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)",
    "javascript&colon;alert(1)",
    "jav&#x09;ascript:alert(1)",
    "jav&#x0A;ascript:alert(1)",
    "%6A%61%76%61%73%63%72%69%70%74:alert(1)",
    "&#104;ttps://evil.example",
    "https&#58;//evil.example",
    // leading control characters and spaces
    ...CONTROL_CHARS.map((c) => `${c}javascript:alert(1)`),
    ...CONTROL_CHARS.map((c) => `${c}https://example.com/`),
    ...CONTROL_CHARS.map((c) => `https://exam${c}ple.com/`),
    ...INVISIBLES.map((c) => `${c}https://example.com/`),
    ...INVISIBLES.map((c) => `https://example.com/${c}path`),
    "\u202ehttps://moc.elpmaxe",
    "\t\thttps://example.com/",
    "\nhttps://example.com/",
    // other dangerous or non-web schemes
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "DATA:image/svg+xml,<svg onload=alert(1)>",
    "data:,https://example.com",
    ...casings("vbscript")
      .slice(0, 16)
      .map((s) => `${s}:msgbox(1)`),
    "file:///etc/passwd",
    "FILE://C:/Windows/win.ini",
    "file://example.com/share",
    "blob:https://example.com/uuid",
    "filesystem:https://example.com/temporary/x",
    "about:blank",
    "chrome://settings",
    "view-source:https://example.com",
    "ftp://example.com/file",
    "mailto:a@example.com",
    "tel:+15555550100",
    "ws://example.com/socket",
    "wss://example.com/socket",
    "intent://scan/#Intent;scheme=zxing;end",
    "jar:https://example.com/x.jar!/",
    "livescript:alert(1)",
    "mocha:alert(1)",
    // relative, protocol-relative and malformed authority
    "//evil.example",
    "//evil.example/path",
    "///evil.example",
    "\\\\evil.example",
    "/\\evil.example",
    "\\/evil.example",
    "/evil",
    "evil.example",
    "www.evil.example/path",
    "#fragment",
    "?q=1",
    "",
    " ",
    "http:",
    "https:",
    "https:/",
    "https://",
    "https:///evil.example",
    "https:evil.example",
    "https:/evil.example",
    "http:\\\\evil.example",
    "https:\\\\evil.example",
    "https:\\/evil.example",
    "https:/\\evil.example",
    "https://evil.example\\@good.example",
    "https://good.example\\.evil.example",
    "https://?q",
    "https://#x",
    "https://:443/",
    "https://[::1",
    "https://exa mple.com",
    "https://example.com:99999/",
    "https://example.com:port/",
    // credentials (phishing: the text before @ is not the host)
    "https://user:pass@example.com/",
    "https://user@example.com/",
    "https://@example.com/",
    "https://:@example.com/",
    "https://good.example@evil.example/",
    "https://good.example:443@evil.example/",
    "http://admin:admin@192.168.0.1/",
    "https://example.com%40evil.example@evil.example",
    // very long
    `https://example.com/${"a".repeat(maxUrlLength)}`,
    `https://${"a".repeat(maxUrlLength)}.example/`,
    // unicode tricks
    "ｊａｖａｓｃｒｉｐｔ:alert(1)",
    "ｈｔｔｐｓ://example.com",
    "https：//example.com",
    "https:／／example.com",
    "https://example.com\u2044evil",
    "https\u200b://example.com",
    "https://example.com\u2215evil",
    "https://good.example\uff0f@evil.example",
    "https://good.example\uff20evil.example",
    "https://example.com\uff1a443/",
    "https://example.com\u2571evil",
    "https://example.com\u29f8evil",
    "https://example.com\ufe56q",
    "java\u0000script:alert(1)",
    "https://exa\ud800mple.com",
    "https://example.com/\udc00",
  ];

  /** @type {[string, string][]} */
  const safe = [
    ["https://example.com", "https://example.com/"],
    ["https://example.com/", "https://example.com/"],
    ["http://example.com/a/b?c=d#e", "http://example.com/a/b?c=d#e"],
    ["HTTPS://Example.COM/Path", "https://example.com/Path"],
    ["HtTp://example.com/", "http://example.com/"],
    ["  https://example.com/padded  ", "https://example.com/padded"],
    ["https://docs.example.org:8443/guide?x=1&y=2", "https://docs.example.org:8443/guide?x=1&y=2"],
    ["https://example.com/?a=1&amp;b=2", "https://example.com/?a=1&amp;b=2"],
    ["https://127.0.0.1:8080/", "https://127.0.0.1:8080/"],
    ["https://[::1]:8080/x", "https://[::1]:8080/x"],
    ["https://example.com/%E2%9C%93", "https://example.com/%E2%9C%93"],
    ["https://bücher.example/", "https://xn--bcher-kva.example/"],
    ["https://example.com/wiki/Café", "https://example.com/wiki/Caf%C3%A9"],
    ["https://example.com/javascript:alert(1)", "https://example.com/javascript:alert(1)"],
    [
      "https://example.com/path?next=javascript:alert(1)",
      "https://example.com/path?next=javascript:alert(1)",
    ],
  ];
  // A URL exactly at the limit is accepted as it is.
  const atLimit = "https://example.com/".padEnd(maxUrlLength, "a");
  safe.push([atLimit, atLimit]);
  return { hostile, safe };
}
