/** Words that retention or an erasure removed: named for what happened, never a blank row. */
import type { ReactNode } from "react";

export type Removal = "retention" | "erasure";

export const REMOVED_TEXT: Record<Removal, string> = {
  retention: "removed under retention",
  erasure: "erased",
};

/** The name an erased member's rows are kept under (the server's pseudonym prefix). */
const PSEUDONYM_PREFIX = "erased-";

/**
 * Why a stored message shown on a page whose API carries no `removed` marker (a conversation,
 * a resolution group) has no words: retention and erasure leave its content empty, and an
 * erased member's rows belong to a pseudonym. Null: the words are there.
 */
export function removalOf(content: string, owner: { user_name: string } | null): Removal | null {
  if (content !== "") return null;
  return owner?.user_name.startsWith(PSEUDONYM_PREFIX) ? "erasure" : "retention";
}

/** `words` as stored, or what removed them (`removed` set: their words are gone). */
export function StoredWords(props: {
  words: string | null;
  removed: Removal | null | undefined;
  missing?: string;
}): ReactNode {
  if (props.removed) {
    return <span className="removed-words muted">({REMOVED_TEXT[props.removed]})</span>;
  }
  return <>{props.words ?? props.missing ?? ""}</>;
}
