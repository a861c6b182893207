/**
 * A refused field's problem in plain words: the server's validation text (pydantic's) without
 * its "Value error, " prefix and its "(got ...)" echo of what was typed, and its pattern and
 * length rules said as a person would, after the field's name ("Title: required.").
 */

/** What each pattern the server checks asks for, in words. */
const PATTERNS: Readonly<Record<string, string>> = {
  "^[a-z0-9][a-z0-9._-]*$":
    "use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit",
};

export function plainProblem(raw: string): string {
  let text = raw.trim().replace(/^Value error, /, "");
  text = text.replace(/\s*\(got .*\)$/s, "");
  const pattern = /^String should match pattern '(.*)'$/.exec(text);
  if (pattern) return PATTERNS[pattern[1] ?? ""] ?? "not in the form this field takes";
  if (/^String should have at least 1 character/.test(text) || text === "Field required") {
    return "required";
  }
  const most = /^String should have at most (\d+) characters?/.exec(text);
  if (most) return `too long: at most ${most[1]} characters`;
  const fewest = /^String should have at least (\d+) characters/.exec(text);
  if (fewest) return `too short: at least ${fewest[1]} characters`;
  const items = /^List should have at most (\d+) items?/.exec(text);
  if (items) return `too many: at most ${items[1]}`;
  return text;
}

/** "Title" and "required" -> "Title: required." */
export function namedProblem(field: string, raw: string): string {
  const words = plainProblem(raw);
  return `${field}: ${words}${/[.!?]$/.test(words) ? "" : "."}`;
}
