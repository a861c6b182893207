/**
 * The one gate every URL passes before the UI makes it a link.
 *
 * The server already shows only KB URLs it verified at ingest; the browser checks again
 * because a link is where a bad string turns into script execution or a phishing hop. The
 * rules mirror `citewall/ingest/urls.py` and are stricter than the WHATWG URL parser, which
 * silently "repairs" tabs, newlines, backslashes and leading control characters into another
 * destination (`java\tscript:`, `https:\\evil`, `/\evil`).
 */

/** Longest URL we will link to (the server's MAX_URL_LENGTH). */
export const MAX_URL_LENGTH = 2048;

// Whitespace, C0/C1 controls, DEL, backslash, and the invisible/format characters (zero-width,
// bidi overrides, BOM, line/paragraph separators, soft hyphen) that make a URL read as one
// thing and resolve as another. The class lists single code points (controls and combining marks
// among them) on purpose.
const FORBIDDEN =
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  /[\s\u0000-\u001f\u007f-\u009f\\\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]/u;

// Lone surrogates: not a character at all.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const SCHEME_PREFIX = /^https?:\/\/[^/\\?#@]/i;

// In the host, a non-ASCII character must be a letter, digit or combining mark (what IDN labels
// are made of); symbols such as U+2044 FRACTION SLASH or U+FF1A FULLWIDTH COLON only serve to
// make a host look like a host plus a path or port.
// eslint-disable-next-line no-control-regex -- the ASCII range, NUL included
const NON_ASCII = /[^\u0000-\u007f]/gu;
const IDN_CHAR = /^[\p{L}\p{N}\p{M}]$/u;

/**
 * Return a normalised `http:`/`https:` URL safe to put in `<a href>`, or `null`.
 *
 * Ordinary spaces at either end are trimmed (copy-paste noise); anything else unusual makes the
 * whole URL unsafe rather than being "fixed": a URL is accepted only when it starts with
 * `http://` or `https://` followed by a host (non-ASCII only as letters, digits and marks), has
 * no credentials, no whitespace, control, invisible or backslash characters anywhere, is at most
 * {@link MAX_URL_LENGTH} characters long, and parses as a URL with a non-empty host.
 *
 * @example safeHttpUrl(" https://Example.com/a ") // "https://example.com/a"
 * @example safeHttpUrl("javascript:alert(1)")    // null
 */
export function safeHttpUrl(raw: unknown): string | null {
  if (typeof raw !== "string") return null;
  const trimmed = raw.replace(/^ +| +$/g, "");
  if (trimmed === "" || trimmed.length > MAX_URL_LENGTH) return null;
  if (FORBIDDEN.test(trimmed) || LONE_SURROGATE.test(trimmed)) return null;
  // The literal text must already be an absolute http(s) URL with an authority: no relative,
  // protocol-relative (`//evil`), single-slash (`https:/evil`) or triple-slash forms.
  if (!SCHEME_PREFIX.test(trimmed)) return null;
  const authority = trimmed.slice(trimmed.indexOf("//") + 2).split(/[/?#]/, 1)[0] ?? "";
  if (authority === "" || authority.includes("@")) return null;
  for (const ch of authority.match(NON_ASCII) ?? []) {
    if (!IDN_CHAR.test(ch)) return null;
  }

  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return null;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  if (parsed.hostname === "" || parsed.username !== "" || parsed.password !== "") return null;
  const href = parsed.href;
  if (href.length > MAX_URL_LENGTH) return null;
  return href;
}
