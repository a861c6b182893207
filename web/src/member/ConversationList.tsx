/**
 * The member's own conversations, newest first: a search box, the list (links to `/c/<id>`,
 * each with Rename and Delete), and "Show older" while a page comes back full.
 */
import { useEffect, useRef, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { ConversationSummary } from "../api/types";
import { useConversationPages } from "../shell/conversationPages";
import { ConversationRow } from "../shell/ConversationRow";

/** How long typing pauses before the list is searched. */
const SEARCH_DELAY_MS = 250;
export const SEARCH_MAX_CHARS = 200;

/** What a screen reader hears when a search has answered. */
export function searchStatus(count: number, more: boolean): string {
  if (more) return `${count} or more conversations match.`;
  return count === 1 ? "1 conversation matches." : `${count} conversations match.`;
}

/** What the list says when it has no conversation to show. */
export function emptyText(query: string): string {
  return query ? "No conversations match your search." : "No conversations yet.";
}

export function ConversationList(props: {
  client: ApiClient;
  currentId: string | null;
  /** Bumped when a turn was stored: the list reloads. */
  version: number;
  /** After a conversation was opened from the list. */
  onOpen: () => void;
  onRenamed: (c: ConversationSummary) => void;
  /** After a conversation was deleted (the caller leaves it if it was open). */
  onDeleted: (id: string) => void;
}): ReactNode {
  const { client, currentId, onRenamed, onDeleted } = props;
  const [text, setText] = useState("");
  const [query, setQuery] = useState("");
  useEffect(() => {
    const timer = window.setTimeout(() => setQuery(text.trim()), SEARCH_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [text]);
  const list = useConversationPages(client, query, props.version);
  const { pages, replace, remove } = list;

  // Focus to move once the list has re-rendered: to the first of the older conversations when
  // "Show older" went away (while it stays, focus stays on it), to the next one after a delete.
  const listRef = useRef<HTMLUListElement>(null);
  const focusRow = useRef<{ index: number; olderLoaded: boolean } | null>(null);
  useEffect(() => {
    const pending = focusRow.current;
    focusRow.current = null;
    if (pending === null || (pending.olderLoaded && pages?.more)) return;
    const links = listRef.current?.querySelectorAll<HTMLAnchorElement>("a.conversation-item");
    if (links && links.length > 0) links[Math.min(pending.index, links.length - 1)]?.focus();
    else document.getElementById("conversation-search")?.focus();
  }, [pages]);

  const loadOlder = (): void => {
    focusRow.current = { index: pages?.items.length ?? 0, olderLoaded: true };
    void list.loadOlder().then((shown) => {
      if (!shown) focusRow.current = null;
    });
  };

  const rename = async (c: ConversationSummary, title: string): Promise<void> => {
    const updated = await client.renameConversation(c.id, title);
    replace(updated);
    onRenamed(updated);
  };

  const del = async (c: ConversationSummary, index: number): Promise<void> => {
    await client.deleteConversation(c.id);
    if (c.id !== currentId) focusRow.current = { index, olderLoaded: false };
    remove(c.id);
    onDeleted(c.id);
  };

  const searching = pages !== null && list.shownQuery !== query;
  const status = searching
    ? "Searching…"
    : query && pages
      ? searchStatus(pages.items.length, pages.more)
      : "";

  return (
    <>
      <div role="search" className="conversation-search">
        <label htmlFor="conversation-search" className="visually-hidden">
          Search conversations
        </label>
        <input
          id="conversation-search"
          type="search"
          placeholder="Search conversations"
          autoComplete="off"
          maxLength={SEARCH_MAX_CHARS}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      <p className="visually-hidden" role="status">
        {status}
      </p>
      {list.error ? (
        <p className="error" role="alert">
          Could not load your conversations: {list.error}
        </p>
      ) : pages === null ? (
        <p className="muted">Loading…</p>
      ) : pages.items.length === 0 ? (
        <p className="muted">{emptyText(list.shownQuery ?? "")}</p>
      ) : (
        <ul className="conversation-list" ref={listRef}>
          {pages.items.map((c, index) => (
            <ConversationRow
              key={c.id}
              conversation={c}
              current={c.id === currentId}
              onOpen={props.onOpen}
              onRename={(title) => rename(c, title)}
              onDelete={() => del(c, index)}
            />
          ))}
        </ul>
      )}
      {pages?.more && !list.error && (
        <button
          type="button"
          className="show-older"
          onClick={loadOlder}
          disabled={list.loadingOlder}
        >
          {list.loadingOlder ? "Loading older…" : "Show older"}
        </button>
      )}
      {list.olderError && (
        <p className="error" role="alert">
          Could not load older conversations: {list.olderError}
        </p>
      )}
    </>
  );
}
