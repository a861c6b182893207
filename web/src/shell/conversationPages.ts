/**
 * The member's conversation list, page by page (`limit`/`offset` on `GET /conversations`,
 * newest first). "Show older" is offered while a page comes back full; a search (`q`) starts
 * from its first page; a stored turn reloads as many rows as are shown.
 */
import { useCallback, useEffect, useRef, useState } from "react";

import type { ApiClient } from "../api/client";
import type { ConversationSummary } from "../api/types";

export const PAGE_SIZE = 50;

export interface ConversationPages {
  items: ConversationSummary[];
  /** The last page came back full: older conversations may follow. */
  more: boolean;
}

/**
 * `page` appended to `pages`, each conversation once: one that moved up between two requests
 * (a new conversation shifts every offset by one) stays where it was first listed.
 */
export function appendPage(
  pages: ConversationPages | null,
  page: ConversationSummary[],
  size: number = PAGE_SIZE,
): ConversationPages {
  const items = pages ? [...pages.items] : [];
  const seen = new Set(items.map((c) => c.id));
  for (const c of page) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    items.push(c);
  }
  return { items, more: page.length >= size };
}

/** How many pages to request so that `shown` rows are listed again (at least one). */
export function pagesFor(shown: number, size: number = PAGE_SIZE): number {
  return Math.max(1, Math.ceil(shown / size));
}

/** The first `count` pages of the list for `q`, merged (stops at a short page). */
export async function loadPages(
  client: ApiClient,
  q: string,
  count: number,
): Promise<ConversationPages> {
  const offsets = Array.from({ length: count }, (_, i) => i * PAGE_SIZE);
  const pages = await Promise.all(
    offsets.map((offset) => client.conversations({ limit: PAGE_SIZE, offset, q })),
  );
  let result: ConversationPages = { items: [], more: false };
  for (const page of pages) {
    result = appendPage(result, page);
    if (!result.more) break;
  }
  return result;
}

export interface ConversationPagesState {
  /** `null` until the first answer. */
  pages: ConversationPages | null;
  /** The search the shown pages answer (differs from the asked one while a search runs). */
  shownQuery: string | null;
  error: string | null;
  loadingOlder: boolean;
  olderError: string | null;
  /** Fetch the next page; resolves `true` once it is shown. */
  loadOlder: () => Promise<boolean>;
  /** Show a renamed conversation in place. */
  replace: (c: ConversationSummary) => void;
  /** Drop a deleted conversation. */
  remove: (id: string) => void;
}

export function useConversationPages(
  client: ApiClient,
  q: string,
  version: number,
): ConversationPagesState {
  const [pages, setPages] = useState<ConversationPages | null>(null);
  const [shownQuery, setShownQuery] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  // Answers to anything but the latest request are dropped.
  const request = useRef(0);
  // Rows shown and the search they answer, so a refresh lists as many again.
  const shown = useRef({ q: "", rows: 0 });
  useEffect(() => {
    shown.current = { q: shownQuery ?? "", rows: pages?.items.length ?? 0 };
  }, [pages, shownQuery]);

  useEffect(() => {
    const id = ++request.current;
    const rows = shown.current.q === q ? shown.current.rows : 0;
    loadPages(client, q, pagesFor(rows)).then(
      (result) => {
        if (id !== request.current) return;
        setPages(result);
        setShownQuery(q);
        setError(null);
        setOlderError(null);
      },
      (err: unknown) => {
        if (id === request.current) setError(String((err as Error).message ?? err));
      },
    );
  }, [client, q, version]);

  const loadOlder = useCallback(async (): Promise<boolean> => {
    if (!pages) return false;
    const id = request.current;
    setLoadingOlder(true);
    setOlderError(null);
    try {
      // Older rows of the search the list shows (a newer search may still be loading).
      const page = await client.conversations({
        limit: PAGE_SIZE,
        offset: pages.items.length,
        q: shownQuery ?? "",
      });
      if (id !== request.current) return false;
      setPages(appendPage(pages, page));
      return true;
    } catch (err) {
      if (id === request.current) setOlderError(String((err as Error).message ?? err));
      return false;
    } finally {
      setLoadingOlder(false);
    }
  }, [client, pages, shownQuery]);

  const replace = useCallback((c: ConversationSummary) => {
    setPages((p) => p && { ...p, items: p.items.map((x) => (x.id === c.id ? c : x)) });
  }, []);

  const remove = useCallback((id: string) => {
    setPages((p) => p && { ...p, items: p.items.filter((x) => x.id !== id) });
  }, []);

  return { pages, shownQuery, error, loadingOlder, olderError, loadOlder, replace, remove };
}
