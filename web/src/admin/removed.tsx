/** Words that retention or an erasure removed: named for what happened, never a blank row. */
import type { ReactNode } from "react";

export type Removal = "retention" | "erasure";

export const REMOVED_TEXT: Record<Removal, string> = {
  retention: "removed under retention",
  erasure: "erased",
};

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
