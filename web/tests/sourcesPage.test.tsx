// @vitest-environment happy-dom
/**
 * The admin Sources page: the body the add form sends, each source's row (schedule, counts,
 * refusals, stale pages), "Sync now" showing its run (a held one with "Confirm and apply",
 * which syncs with confirm), a 409 said as "already running", and a removal asked twice.
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import {
  AdminSources,
  EMPTY_SOURCE,
  SourcesTable,
  actionProblem,
  scheduleText,
  sourceBody,
  type SourcesTableProps,
} from "../src/admin/AdminSources";
import { ApiError, type ApiClient } from "../src/api/client";
import type { RegisteredSourcePublic, SyncRunPublic } from "../src/api/types";
import { parseRoute } from "../src/router";
import { routePageName } from "../src/shell/title";

const run: SyncRunPublic = {
  id: 4,
  status: "applied",
  started_at: "2026-12-01T10:00:00Z",
  duration_s: 1.25,
  added: 2,
  updated: 1,
  unchanged: 5,
  removed: 1,
  refused: 1,
  refusals: [{ where: "https://help.example/broken", reason: "HTTP 500" }],
  note: "",
  stale: ["https://help.example/slow"],
};
const held: SyncRunPublic = {
  ...run,
  id: 5,
  status: "held",
  added: 0,
  updated: 0,
  removed: 0,
  refused: 0,
  refusals: [],
  stale: [],
  note: "the source lists nothing where the KB has 8 of its cards: not applied",
};
const site: RegisteredSourcePublic = {
  id: 3,
  kind: "site",
  location: "https://help.example/sitemap.xml",
  license: "CC-BY-4.0",
  every_s: 21600,
  audiences: ["enterprise"],
  cards: 8,
  last_sync_at: "2026-12-01T10:00:00Z",
  next_sync_at: "2026-12-01T16:00:00Z",
  last_run: run,
};

function props(over: Partial<SourcesTableProps> = {}): SourcesTableProps {
  return {
    sources: [site],
    actions: {},
    removing: null,
    onSync: vi.fn(),
    onRemove: vi.fn(),
    onAskRemove: vi.fn(),
    onHistory: vi.fn(),
    ...over,
  };
}

describe("the Sources page's parts", () => {
  it("sends a site's url and licence, a folder's path, and splits the groups", () => {
    const body = sourceBody({
      ...EMPTY_SOURCE,
      location: " https://help.example/sitemap.xml ",
      license: "CC-BY-4.0",
      every: "6h",
      audiences: "enterprise, beta",
    });
    expect(body).toEqual({
      kind: "site",
      url: "https://help.example/sitemap.xml",
      license: "CC-BY-4.0",
      every: "6h",
      audiences: ["enterprise", "beta"],
    });
    expect(sourceBody({ ...EMPTY_SOURCE, kind: "folder", location: "/kb/docs" })).toEqual({
      kind: "folder",
      server_path: "/kb/docs",
      every: null,
      audiences: [],
    });
  });

  it("words schedules, routes the page and titles it", () => {
    expect(scheduleText(21600)).toBe("every 6h");
    expect(scheduleText(129600)).toBe("every 1d 12h");
    expect(scheduleText(null)).toBe("only when synced");
    expect(parseRoute("/admin/sources")).toEqual({ name: "admin-sources" });
    expect(routePageName({ name: "admin-sources" }, true)).toBe("Admin · Sources");
  });

  it("shows a source's schedule, cards and its last run's counts, refusals and stale pages", () => {
    const html = renderToStaticMarkup(<SourcesTable {...props()} />);
    expect(html).toContain("every 6h");
    expect(html).toContain("enterprise");
    expect(html).toContain("added 2, updated 1, unchanged 5, removed 1, refused 1");
    expect(html).toContain("https://help.example/broken</code>: HTTP 500");
    expect(html).toContain("https://help.example/slow");
    expect(html).toContain('data-source="3"');
    expect(html).not.toContain("<a "); // an admin-entered location is text, not a link
  });

  it("says so when there is no source", () => {
    const html = renderToStaticMarkup(<SourcesTable {...props({ sources: [] })} />);
    expect(html).toContain('data-testid="sources-empty"');
  });

  it("shows a held run's reason with Confirm and apply, and a 409 as already running", () => {
    const heldHtml = renderToStaticMarkup(
      <SourcesTable {...props({ actions: { 3: { kind: "run", run: held } } })} />,
    );
    expect(heldHtml).toContain('data-testid="sync-held"');
    expect(heldHtml).toContain("lists nothing where the KB has 8");
    expect(heldHtml).toContain("Confirm and apply");
    expect(actionProblem(new ApiError(409, "a sync of source 3 is already running"))).toContain(
      "already running",
    );
    expect(actionProblem(new Error("no source 3"))).toBe("no source 3");
  });

  it("offers Confirm and apply for a source whose last run was held, after a reload too", () => {
    const [first] = props().sources;
    const reloaded = renderToStaticMarkup(
      <SourcesTable {...props({ sources: [{ ...first!, last_run: held }] })} />,
    );
    expect(reloaded).toContain('data-testid="sync-held"');
    expect(reloaded).toContain("Confirm and apply");
    expect(renderToStaticMarkup(<SourcesTable {...props()} />)).not.toContain("Confirm and apply");
  });

  it("asks before removing, naming the cards that go", () => {
    const html = renderToStaticMarkup(<SourcesTable {...props({ removing: 3 })} />);
    expect(html).toContain("Remove it and its 8 cards from the KB?");
    expect(html).toContain("Yes, remove");
  });
});

describe("the Sources page against its client", () => {
  let container: HTMLDivElement;
  let root: Root;

  beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
  });

  afterEach(() => {
    act(() => root.unmount());
    container.remove();
  });

  const click = (name: string): void => {
    const button = [...container.querySelectorAll("button")].find((b) => b.textContent === name);
    if (!button) throw new Error(`no button ${name}: ${container.innerHTML}`);
    act(() => button.click());
  };

  function fakeClient(sync: (id: number, confirm: boolean) => Promise<SyncRunPublic>) {
    const syncSource = vi.fn(sync);
    const removeSource = vi.fn(() =>
      Promise.resolve({ source: { ...site, last_run: null }, deleted: 8 }),
    );
    const client = {
      sources: () => Promise.resolve([{ ...site, last_run: null }]),
      sourceRuns: () => Promise.resolve([run]),
      addSource: vi.fn(),
      syncSource,
      removeSource,
    } as unknown as ApiClient;
    return { client, syncSource, removeSource };
  }

  it("syncs, shows the held run, and confirms it with confirm=true", async () => {
    const { client, syncSource } = fakeClient((_id, confirm) =>
      Promise.resolve(confirm ? run : held),
    );
    act(() => root.render(<AdminSources client={client} />));
    await vi.waitFor(() => expect(container.textContent).toContain("never synced"));
    click("Sync now");
    await vi.waitFor(() =>
      expect(container.querySelector("[data-testid=sync-held]")?.textContent).toContain(
        "lists nothing",
      ),
    );
    click("Confirm and apply");
    await vi.waitFor(() =>
      expect(container.querySelector("[data-testid=sync-result]")?.textContent).toContain(
        "added 2",
      ),
    );
    expect(container.querySelector("[data-testid=sync-held]")).toBeNull();
    expect(syncSource).toHaveBeenNthCalledWith(1, 3, false);
    expect(syncSource).toHaveBeenNthCalledWith(2, 3, true);
  });

  it("says a sync is already running on a 409, and removes only once confirmed", async () => {
    const { client, removeSource } = fakeClient(() =>
      Promise.reject(new ApiError(409, "a sync of source 3 is already running")),
    );
    act(() => root.render(<AdminSources client={client} />));
    await vi.waitFor(() => expect(container.textContent).toContain("never synced"));
    click("Sync now");
    await vi.waitFor(() =>
      expect(container.querySelector("[data-testid=sync-problem]")?.textContent).toContain(
        "already running",
      ),
    );
    click("History");
    await vi.waitFor(() =>
      expect(container.querySelector("[data-testid=source-history]")?.textContent).toContain(
        "applied",
      ),
    );
    click("Remove");
    expect(removeSource).not.toHaveBeenCalled();
    click("Yes, remove");
    await vi.waitFor(() => expect(removeSource).toHaveBeenCalledWith(3));
  });
});
