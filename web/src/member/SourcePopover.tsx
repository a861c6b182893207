/**
 * A source's details as a non-modal dialog: title, the verified link, licence, relevance and
 * the excerpt. Focus moves into it when it opens, Tab stays inside it, Escape (or the close
 * button) closes it and returns focus to its chip, a click outside closes it.
 */
import { useEffect, useRef, type KeyboardEvent, type ReactNode } from "react";

import type { HybridPath, Source } from "../api/types";
import { excerptPlainText } from "../chat/plainText";
import { relevanceView, type Audience } from "./relevance";

const FOCUSABLE = 'a[href], button:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function SourcePopover(props: {
  id: string;
  source: Source;
  /** Already passed through safeHttpUrl by the caller. */
  href: string;
  hybridPath: HybridPath;
  audience: Audience;
  onClose: (returnFocus: boolean) => void;
}): ReactNode {
  const { id, source, href, hybridPath, onClose } = props;
  const dialog = useRef<HTMLDivElement>(null);
  const relevance = relevanceView(source.retrieved_score, hybridPath, props.audience);
  const titleId = `${id}-title`;

  useEffect(() => {
    dialog.current?.focus();
  }, [source]);

  useEffect(() => {
    const onPointer = (e: PointerEvent): void => {
      const target = e.target as Node | null;
      const el = dialog.current;
      if (!el || !target || el.contains(target)) return;
      // A click on a chip is handled by the chip itself (toggle or switch).
      if ((target as Element).closest?.(".chip")) return;
      onClose(false);
    };
    document.addEventListener("pointerdown", onPointer);
    return () => document.removeEventListener("pointerdown", onPointer);
  }, [onClose]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>): void => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onClose(true);
      return;
    }
    if (e.key !== "Tab" || !dialog.current) return;
    const items = Array.from(dialog.current.querySelectorAll<HTMLElement>(FOCUSABLE));
    const first = items[0];
    const last = items[items.length - 1];
    if (!first || !last) return;
    const active = document.activeElement;
    if (e.shiftKey && (active === first || active === dialog.current)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && active === last) {
      e.preventDefault();
      first.focus();
    }
  };

  const shown = displayUrl(href);
  const excerpt = source.excerpt ? excerptPlainText(source.excerpt) : "";

  return (
    <div
      id={id}
      ref={dialog}
      className="popover"
      role="dialog"
      aria-modal="false"
      aria-labelledby={titleId}
      tabIndex={-1}
      onKeyDown={onKeyDown}
    >
      <div className="popover-head">
        <h4 id={titleId} className="popover-title">
          {source.title || source.card_id}
        </h4>
        <button
          type="button"
          className="popover-close"
          aria-label="Close source details"
          onClick={() => onClose(true)}
        >
          ×
        </button>
      </div>
      <dl className="popover-facts">
        <dt>Source</dt>
        <dd>
          <a
            className="source-link"
            href={href}
            target="_blank"
            rel="noopener noreferrer"
            aria-label={`${shown} (opens in a new tab)`}
          >
            {shown}
          </a>
        </dd>
        <dt>Licence</dt>
        <dd>{source.license ? source.license : <span className="muted">Not stated</span>}</dd>
        <dt>Relevance</dt>
        <dd>
          {relevance.kind === "score" ? (
            <span className="score" data-score={relevance.score}>
              {relevance.label}
            </span>
          ) : (
            <span className="hint relevance-hint">{relevance.label}</span>
          )}
        </dd>
      </dl>
      {excerpt ? (
        <figure className="excerpt">
          <figcaption>Cited excerpt</figcaption>
          <blockquote>{excerpt}</blockquote>
        </figure>
      ) : (
        <p className="muted">No excerpt available.</p>
      )}
    </div>
  );
}

/** The link text: host and path of the verified URL (no query), so the reader sees where it goes. */
export function displayUrl(href: string): string {
  try {
    const url = new URL(href);
    const path = url.pathname === "/" ? "" : url.pathname;
    const text = url.host + path;
    return text.length > 80 ? `${text.slice(0, 79)}…` : text;
  } catch {
    return href;
  }
}
