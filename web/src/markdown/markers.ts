/**
 * Citation markers (`[1]`, `[2, 3]`, `[1][4]`) belong to the server's bookkeeping: a member sees
 * prose only, with sources in their own panel. The server strips them already (`prose_only`);
 * the UI strips them again so a stray marker can never look like a claim about a source.
 */

// Citation numbers inside a marker, with an optional dagger label ("3†source"), or a retrieval
// tool's reference ("4:0†source").
const LABEL = String.raw`†[^\[\]【】\n]{0,200}`;
const NUMBERS =
  String.raw`\s*\^?\d{1,4}(?:\s*[,;\u2013-]\s*\^?\d{1,4})*\s*(?:${LABEL})?` +
  String.raw`|\s*\d{1,4}:\d{1,4}\s*${LABEL}`;
// A marker with the space in front of it: "text [1, 2]." -> "text."; also the other forms models
// write, as the server's grammar has them: 【3】, 【3†source】, [1†source], [^1], [[1]].
const MARKER = new RegExp(
  String.raw`[ \t]*(?:\[\[(?:${NUMBERS})\]\]|[\[【](?:${NUMBERS})[\]】])`,
  "g",
);

/**
 * Remove inline `[n]` citation markers from `text`, keeping everything else as written.
 *
 * @example stripMarkers("Reset it [1][2]. Then log in [3].") // "Reset it. Then log in."
 */
export function stripMarkers(text: string): string {
  // Repeat until nothing changes: removing "[1]" from "[[1]2]" leaves a new marker "[2]".
  let out = text;
  for (;;) {
    const next = out.replace(MARKER, "");
    if (next === out) return out;
    out = next;
  }
}
