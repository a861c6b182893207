/**
 * Citation markers (`[1]`, `[2, 3]`, `[1][4]`) belong to the server's bookkeeping: a member sees
 * prose only, with sources in their own panel. The server strips them already (`prose_only`);
 * the UI strips them again so a stray marker can never look like a claim about a source.
 */

// A bracketed list of citation numbers, with the space in front of it: "text [1, 2]." -> "text."
const MARKER = /[ \t]*\[\s*\^?\d{1,4}(?:\s*[,;\u2013-]\s*\^?\d{1,4})*\s*\]/g;

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
