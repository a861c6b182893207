/**
 * One conversation in the list: a real link to `/c/<id>` (open in a new tab works; a plain click
 * stays in the app) and an actions button that discloses Rename and Delete. Rename edits the
 * title in place (Enter saves, Escape cancels); Delete asks first.
 */
import {
  useEffect,
  useId,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
  type ReactNode,
} from "react";

import type { ConversationSummary } from "../api/types";
import { formatDate, plural } from "../components/format";
import { conversationPath, isPlainClick, navigate } from "../router";

/** The server's limit on a title (after trimming). */
export const TITLE_MAX_CHARS = 200;

type Mode = "closed" | "actions" | "renaming" | "confirming";

export function conversationLabel(c: ConversationSummary): string {
  return c.title.trim() || "Untitled";
}

/**
 * When a conversation was last active, as short as the list needs: the time today, the day
 * this year, the full date before that (the local zone; `formatDate` for the raw text).
 */
export function listDate(value: string, now: Date = new Date(), locale?: string): string {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return formatDate(value);
  const sameYear = d.getFullYear() === now.getFullYear();
  if (sameYear && d.getMonth() === now.getMonth() && d.getDate() === now.getDate()) {
    return d.toLocaleTimeString(locale, { timeStyle: "short" });
  }
  return d.toLocaleDateString(
    locale,
    sameYear ? { month: "short", day: "numeric" } : { dateStyle: "medium" },
  );
}

export function ConversationRow(props: {
  conversation: ConversationSummary;
  current: boolean;
  /** After a plain click has opened the conversation in the app. */
  onOpen: () => void;
  /** Rejects with the reason the server gave. */
  onRename: (title: string) => Promise<void>;
  onDelete: () => Promise<void>;
}): ReactNode {
  const c = props.conversation;
  const label = conversationLabel(c);
  const path = conversationPath(c.id);
  const [mode, setMode] = useState<Mode>("closed");
  const [draft, setDraft] = useState(label);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const link = useRef<HTMLAnchorElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  // Where focus returns when the actions close: the link (after a rename) or the toggle.
  const focusAfter = useRef<"link" | "toggle" | null>(null);
  const actionsId = useId();
  const fieldId = useId();
  const promptId = useId();

  useEffect(() => {
    if (mode === "renaming") {
      field.current?.focus();
      field.current?.select();
    } else if (mode === "confirming") {
      keep.current?.focus();
    } else {
      const after = focusAfter.current;
      focusAfter.current = null;
      if (after === "link") link.current?.focus();
      if (after === "toggle") toggle.current?.focus();
    }
  }, [mode]);

  const close = (focus: "link" | "toggle"): void => {
    focusAfter.current = focus;
    setError(null);
    setMode("closed");
  };

  const open = (e: MouseEvent<HTMLAnchorElement>): void => {
    if (!isPlainClick(e)) return;
    e.preventDefault();
    navigate(path);
    props.onOpen();
  };

  const startRename = (): void => {
    setDraft(label);
    setError(null);
    setMode("renaming");
  };

  const save = async (): Promise<void> => {
    const title = draft.trim();
    if (!title || pending) return;
    if (title === label) return close("link");
    setPending(true);
    try {
      await props.onRename(title);
      close("link");
    } catch (err) {
      setError(`Could not rename: ${(err as Error).message}`);
    } finally {
      setPending(false);
    }
  };

  const remove = async (): Promise<void> => {
    if (pending) return;
    setPending(true);
    try {
      await props.onDelete();
    } catch (err) {
      setError(`Could not delete: ${(err as Error).message}`);
      setPending(false);
    }
  };

  const onFieldKey = (e: KeyboardEvent<HTMLInputElement>): void => {
    if (e.key === "Enter" && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void save();
    }
  };

  // Escape closes the actions (and cancels a rename) before it can close the drawer.
  const onActionsKey = (e: KeyboardEvent<HTMLElement>): void => {
    if (e.key !== "Escape" || mode === "closed") return;
    e.preventDefault();
    e.stopPropagation();
    close(mode === "renaming" ? "link" : "toggle");
  };

  return (
    <li className="conversation" onKeyDown={onActionsKey}>
      <div className="conversation-row">
        {mode === "renaming" ? (
          <div className="conversation-rename">
            <label htmlFor={fieldId} className="visually-hidden">
              Title
            </label>
            <input
              id={fieldId}
              ref={field}
              value={draft}
              maxLength={TITLE_MAX_CHARS}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={onFieldKey}
              disabled={pending}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? `${actionsId}-error` : undefined}
            />
          </div>
        ) : (
          <a
            ref={link}
            href={path}
            className="conversation-item"
            aria-current={props.current ? "page" : undefined}
            onClick={open}
          >
            <span className="conversation-title">{label}</span>
            <span className="conversation-meta">
              <time dateTime={c.updated_at}>{listDate(c.updated_at)}</time> ·{" "}
              {plural(c.message_count, "message", "messages")}
            </span>
          </a>
        )}
        <button
          type="button"
          ref={toggle}
          className="conversation-menu"
          aria-label={`Actions for ${label}`}
          aria-expanded={mode !== "closed"}
          aria-controls={actionsId}
          onClick={() => (mode === "closed" ? setMode("actions") : close("toggle"))}
          disabled={pending}
        >
          <span className="dots" aria-hidden="true" />
        </button>
      </div>
      {mode !== "closed" && (
        <div id={actionsId} className="conversation-actions">
          {mode === "actions" && (
            <>
              <button type="button" className="quiet-button" onClick={startRename}>
                Rename
              </button>
              <button
                type="button"
                className="quiet-button"
                onClick={() => {
                  setError(null);
                  setMode("confirming");
                }}
              >
                Delete
              </button>
            </>
          )}
          {mode === "renaming" && (
            <>
              <button type="button" onClick={() => void save()} disabled={pending || !draft.trim()}>
                Save
              </button>
              <button type="button" className="quiet-button" onClick={() => close("link")}>
                Cancel
              </button>
            </>
          )}
          {mode === "confirming" && (
            <div role="group" aria-labelledby={promptId} className="confirm">
              <p id={promptId}>Delete “{label}”? It will no longer be listed.</p>
              <button
                type="button"
                className="danger-button"
                onClick={() => void remove()}
                disabled={pending}
              >
                Delete
              </button>
              <button
                type="button"
                ref={keep}
                className="quiet-button"
                onClick={() => close("toggle")}
              >
                Cancel
              </button>
            </div>
          )}
          {error && (
            <p id={`${actionsId}-error`} className="error" role="alert">
              {error}
            </p>
          )}
        </div>
      )}
    </li>
  );
}
