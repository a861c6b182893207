/**
 * The answer's sources as chips. Only external sources with a URL that passes `safeHttpUrl`
 * are shown (the server already filters; this is the second lock). A chip opens the source's
 * popover; one popover is open at a time per answer.
 */
import { useId, useRef, useState, type ReactNode } from "react";

import type { HybridPath, Source } from "../api/types";
import { safeHttpUrl } from "../security/safeUrl";
import type { Audience } from "./relevance";
import { SourcePopover } from "./SourcePopover";

export interface ShownSource {
  source: Source;
  href: string;
}

/** The sources a member may see as links: those whose URL survives `safeHttpUrl`. */
export function linkableSources(sources: readonly Source[]): ShownSource[] {
  const out: ShownSource[] = [];
  for (const source of sources) {
    const href = safeHttpUrl(source.url);
    if (href) out.push({ source, href });
  }
  return out;
}

export function SourcesPanel(props: {
  sources: Source[];
  hybridPath: HybridPath;
  audience?: Audience;
}): ReactNode {
  const shown = linkableSources(props.sources);
  const [open, setOpen] = useState<number | null>(null);
  const chips = useRef<(HTMLButtonElement | null)[]>([]);
  const baseId = useId();
  if (shown.length === 0) {
    return <p className="sources-none muted">No public sources for this answer.</p>;
  }
  const close = (returnFocus: boolean): void => {
    const index = open;
    setOpen(null);
    if (returnFocus && index !== null) chips.current[index]?.focus();
  };
  const current = open !== null ? shown[open] : undefined;
  return (
    // Not a landmark: every answer has one, and identical "Sources" regions only add noise to
    // a screen reader's landmark list; the heading is there to navigate by.
    <div className="sources">
      <h3 className="sources-heading">Sources</h3>
      <ul className="chips">
        {shown.map((s, i) => (
          <li key={`${s.source.card_id}-${i}`}>
            {/* The name is an aria-label, not hidden text: text in the page, even visually
                hidden, is copied with a selection of the answer. It holds the visible text
                (number and title) as it reads, so speech input can name the chip. */}
            <button
              type="button"
              className="chip"
              aria-label={`${i + 1} ${chipTitle(s.source)}: show source details`}
              ref={(el) => {
                chips.current[i] = el;
              }}
              aria-haspopup="dialog"
              aria-expanded={open === i}
              aria-controls={open === i ? `${baseId}-popover` : undefined}
              onClick={() => setOpen(open === i ? null : i)}
            >
              <span className="chip-number" aria-hidden="true">
                {i + 1}
              </span>{" "}
              <span className="chip-title">{chipTitle(s.source)}</span>
            </button>
          </li>
        ))}
      </ul>
      {current && (
        <SourcePopover
          id={`${baseId}-popover`}
          source={current.source}
          href={current.href}
          hybridPath={props.hybridPath}
          audience={props.audience ?? "member"}
          onClose={close}
        />
      )}
    </div>
  );
}

function chipTitle(source: Source): string {
  return source.title || source.card_id;
}
