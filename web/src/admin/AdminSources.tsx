/**
 * Sources (admin): the registered sources the KB is synced from, as `citewall sources list`
 * shows them (kind, location, groups, schedule, last and next sync, cards, the last run's
 * counts with each refusal and stale page); a form that registers a site, a document folder or
 * a card file; and per source "Sync now" (a held run says why and offers to confirm it),
 * "Remove" (asked twice) and its run history. Each action is the CLI's own path on the server.
 */
import { useState, type FormEvent, type ReactNode } from "react";

import { ApiError, type ApiClient } from "../api/client";
import type { RegisteredSourcePublic, SourceCreate, SyncRunPublic } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, plural } from "../components/format";
import { useLoad } from "../components/useLoad";
import { DataTable, type Column } from "./DataTable";
import { FormField } from "./FormField";

export type SourceKind = SourceCreate["kind"];

/** What the add form holds, as text fields. */
export type SourceDraft = {
  kind: SourceKind;
  location: string;
  license: string;
  every: string;
  audiences: string;
};

export const EMPTY_SOURCE: SourceDraft = {
  kind: "site",
  location: "",
  license: "",
  every: "",
  audiences: "",
};

/** The body the server takes: a site's location is its `url`, a folder's or file's its
 * `server_path`; empty options are none; groups split at commas and spaces. */
export function sourceBody(d: SourceDraft): SourceCreate {
  const location = d.location.trim();
  const audiences = d.audiences
    .split(/[\s,]+/)
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
  const every = d.every.trim() || null;
  if (d.kind === "site") {
    return { kind: "site", url: location, license: d.license.trim() || null, every, audiences };
  }
  return { kind: d.kind, server_path: location, every, audiences };
}

/** A schedule in words: "every 6h", "every 1d 12h", or none. */
export function scheduleText(everyS: number | null | undefined): string {
  if (!everyS) return "only when synced";
  const parts: string[] = [];
  let rest = everyS;
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest}s`);
  return `every ${parts.join(" ")}`;
}

/** A run's counts, as `citewall sources list` words them. */
export function runCounts(run: SyncRunPublic): string {
  return (
    `added ${run.added}, updated ${run.updated}, unchanged ${run.unchanged}, ` +
    `removed ${run.removed}, refused ${run.refused}`
  );
}

/** What a failed "Sync now" or "Remove" says: a 409 is a sync already under way. */
export function actionProblem(error: unknown): string {
  if (error instanceof ApiError && error.status === 409) {
    return "A sync of this source is already running (here or on another server): try again when it ends.";
  }
  return error instanceof Error ? error.message : String(error);
}

/** What a source's row shows of the last action asked on it. */
export type RowAction =
  | { kind: "busy"; what: string }
  | { kind: "run"; run: SyncRunPublic }
  | { kind: "problem"; text: string };

export function RunSummary(props: { run: SyncRunPublic }): ReactNode {
  const { run } = props;
  return (
    <div className={`run run-${run.status}`} data-testid="run-summary">
      <p>
        <strong>{run.status}</strong> {formatDate(run.started_at)}: {runCounts(run)} (
        {run.duration_s.toFixed(1)} s)
      </p>
      {run.note && <p className="run-note">{run.note}</p>}
      {run.refusals.length > 0 && (
        <ul className="run-refusals" aria-label="Refused">
          {run.refusals.map((r, i) => (
            <li key={i}>
              refused <code>{r.where}</code>: {r.reason}
            </li>
          ))}
        </ul>
      )}
      {run.stale.length > 0 && (
        <ul className="run-stale" aria-label="Stale pages">
          {run.stale.map((url) => (
            <li key={url}>
              stale (unreadable several syncs in a row): <code>{url}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The answer to "Sync now": the run; a held one says why and offers to apply it. */
export function SyncResult(props: { action: RowAction; onConfirm: () => void }): ReactNode {
  const { action } = props;
  if (action.kind === "busy") return <p role="status">{action.what}</p>;
  if (action.kind === "problem") {
    return (
      <p className="error" role="alert" data-testid="sync-problem">
        {action.text}
      </p>
    );
  }
  const { run } = action;
  return (
    <div data-testid="sync-result">
      {run.status === "held" && <HeldRun run={run} onConfirm={props.onConfirm} />}
      <RunSummary run={run} />
    </div>
  );
}

/** A held run's warning and the button that applies it: after "Sync now", and for a source
 * whose last run (a scheduled one, or one before a reload) was held. */
export function HeldRun(props: { run: SyncRunPublic; onConfirm: () => void }): ReactNode {
  return (
    <div className="run-held" role="alert" data-testid="sync-held">
      <p>Not applied: {props.run.note}. Check the source; if the change is real, apply it.</p>
      <button type="button" onClick={props.onConfirm}>
        Confirm and apply
      </button>
    </div>
  );
}

export interface SourcesTableProps {
  sources: readonly RegisteredSourcePublic[];
  actions: Readonly<Record<number, RowAction>>;
  /** The source whose removal awaits its confirmation. */
  removing: number | null;
  onSync: (id: number, confirm: boolean) => void;
  onRemove: (id: number) => void;
  onAskRemove: (id: number | null) => void;
  onHistory: (id: number) => void;
}

function actionsCell(s: RegisteredSourcePublic, p: SourcesTableProps): ReactNode {
  const action = p.actions[s.id];
  const busy = action?.kind === "busy";
  return (
    <div className="source-actions">
      <button type="button" disabled={busy} onClick={() => p.onSync(s.id, false)}>
        Sync now
      </button>{" "}
      <button type="button" onClick={() => p.onHistory(s.id)}>
        History
      </button>{" "}
      {p.removing === s.id ? (
        <span role="group" aria-label="Confirm removal" data-testid="remove-confirm">
          Remove it and its {plural(s.cards, "card", "cards")} from the KB?{" "}
          <button type="button" disabled={busy} onClick={() => p.onRemove(s.id)}>
            Yes, remove
          </button>{" "}
          <button type="button" onClick={() => p.onAskRemove(null)}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="button" disabled={busy} onClick={() => p.onAskRemove(s.id)}>
          Remove
        </button>
      )}
      {action ? (
        <SyncResult action={action} onConfirm={() => p.onSync(s.id, true)} />
      ) : (
        s.last_run?.status === "held" && (
          <HeldRun run={s.last_run} onConfirm={() => p.onSync(s.id, true)} />
        )
      )}
    </div>
  );
}

export function SourcesTable(props: SourcesTableProps): ReactNode {
  const columns: readonly Column<RegisteredSourcePublic>[] = [
    { header: "Id", cell: (s) => s.id, numeric: true },
    { header: "Kind", cell: (s) => s.kind },
    { header: "Location", cell: (s) => <code className="source-location">{s.location}</code> },
    {
      header: "For",
      cell: (s) => (s.audiences.length > 0 ? s.audiences.join(", ") : "every member"),
    },
    { header: "Schedule", cell: (s) => scheduleText(s.every_s) },
    { header: "Last sync", cell: (s) => formatDate(s.last_sync_at ?? null) },
    { header: "Next sync", cell: (s) => formatDate(s.next_sync_at ?? null) },
    { header: "Cards", cell: (s) => s.cards, numeric: true, testId: "source-cards" },
    {
      header: "Last run",
      cell: (s) => (s.last_run ? <RunSummary run={s.last_run} /> : "never synced"),
    },
    { header: "", cell: (s) => actionsCell(s, props) },
  ];
  return (
    <DataTable
      label="Sources"
      className="sources-table"
      columns={columns}
      rows={props.sources}
      rowKey={(s) => String(s.id)}
      rowData={(s) => ({ source: String(s.id) })}
      empty="No sources yet: register a site, a folder or a card file above."
      emptyTestId="sources-empty"
    />
  );
}

const LOCATION_LABEL: Record<SourceKind, string> = {
  site: "URL (a sitemap, or one page)",
  folder: "Folder (a path on the server)",
  cards: "Card file (a JSONL path on the server)",
};

export function AddSourceForm(props: {
  onAdd: (body: SourceCreate) => Promise<RegisteredSourcePublic>;
}): ReactNode {
  const [draft, setDraft] = useState<SourceDraft>(EMPTY_SOURCE);
  const [fields, setFields] = useState<Readonly<Record<string, string>>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof SourceDraft) => (value: string) => setDraft({ ...draft, [key]: value });

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setFields({});
    try {
      const added = await props.onAdd(sourceBody(draft));
      setMessage({ ok: true, text: `Registered as source ${added.id}: "Sync now" syncs it.` });
      setDraft({ ...EMPTY_SOURCE, kind: draft.kind });
    } catch (error) {
      setFields(error instanceof ApiError ? error.fields : {});
      setMessage({ ok: false, text: error instanceof Error ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };
  const locationProblem = fields.url ?? fields.server_path;
  return (
    <form className="source-form" onSubmit={(e) => void submit(e)} data-testid="source-form">
      <div className="form-field">
        <label>
          Kind
          <br />
          <select
            value={draft.kind}
            onChange={(e) => setDraft({ ...draft, kind: e.target.value as SourceKind })}
          >
            <option value="site">Help center site</option>
            <option value="folder">Document folder</option>
            <option value="cards">Card file</option>
          </select>
        </label>
      </div>
      <FormField label={LOCATION_LABEL[draft.kind]} problem={locationProblem}>
        <input
          value={draft.location}
          onChange={(e) => set("location")(e.target.value)}
          required
          data-testid="source-location"
        />
      </FormField>
      {draft.kind === "site" && (
        <FormField label="Licence of its pages (optional)" problem={fields.license}>
          <input value={draft.license} onChange={(e) => set("license")(e.target.value)} />
        </FormField>
      )}
      <FormField label="Sync every (30m, 6h, 1d; empty: only when synced)" problem={fields.every}>
        <input value={draft.every} onChange={(e) => set("every")(e.target.value)} />
      </FormField>
      <FormField label="Groups (none: every member)" problem={fields.audiences}>
        <input value={draft.audiences} onChange={(e) => set("audiences")(e.target.value)} />
      </FormField>
      <button type="submit" disabled={busy}>
        {busy ? "Registering…" : "Register"}
      </button>
      {message && (
        <p role={message.ok ? "status" : "alert"} data-testid="source-message">
          {message.text}
        </p>
      )}
    </form>
  );
}

const RUN_COLUMNS: readonly Column<SyncRunPublic>[] = [
  { header: "Started", cell: (r) => formatDate(r.started_at) },
  { header: "Status", cell: (r) => r.status },
  { header: "Added", cell: (r) => r.added, numeric: true },
  { header: "Updated", cell: (r) => r.updated, numeric: true },
  { header: "Removed", cell: (r) => r.removed, numeric: true },
  { header: "Refused", cell: (r) => r.refused, numeric: true },
  { header: "Stale", cell: (r) => r.stale.length, numeric: true },
  { header: "Seconds", cell: (r) => r.duration_s.toFixed(1), numeric: true },
  {
    header: "Note",
    cell: (r) =>
      [r.note, ...r.refusals.map((x) => `${x.where}: ${x.reason}`)].filter(Boolean).join("; "),
  },
];

export function SourceHistory(props: {
  client: ApiClient;
  id: number;
  reloads: number;
}): ReactNode {
  const { client, id, reloads } = props;
  const state = useLoad(
    () => (reloads < 0 ? Promise.resolve([]) : client.sourceRuns(id)),
    [client, id, reloads],
  );
  return (
    <section aria-label={`Syncs of source ${id}`} data-testid="source-history">
      <h2>Syncs of source {id}</h2>
      <LoadState state={state} what="the syncs">
        {(runs) => (
          <DataTable
            label={`Syncs of source ${id}`}
            className="runs-table"
            columns={RUN_COLUMNS}
            rows={runs}
            rowKey={(r) => String(r.id)}
            empty="Never synced."
          />
        )}
      </LoadState>
    </section>
  );
}

export function AdminSources(props: { client: ApiClient }): ReactNode {
  const { client } = props;
  const [reloads, setReloads] = useState(0);
  const [actions, setActions] = useState<Readonly<Record<number, RowAction>>>({});
  const [removing, setRemoving] = useState<number | null>(null);
  const [history, setHistory] = useState<number | null>(null);
  // `reloads` is read so that a change reloads the list (it is never negative).
  const state = useLoad(
    () => (reloads < 0 ? Promise.resolve([]) : client.sources()),
    [client, reloads],
  );
  const setAction = (id: number, action: RowAction | null): void =>
    setActions((all) => {
      const next = { ...all };
      if (action === null) delete next[id];
      else next[id] = action;
      return next;
    });

  const sync = async (id: number, confirm: boolean): Promise<void> => {
    setAction(id, { kind: "busy", what: confirm ? "Applying the sync…" : "Syncing…" });
    try {
      setAction(id, { kind: "run", run: await client.syncSource(id, confirm) });
      setReloads((n) => n + 1);
    } catch (error) {
      setAction(id, { kind: "problem", text: actionProblem(error) });
    }
  };
  const remove = async (id: number): Promise<void> => {
    setAction(id, { kind: "busy", what: "Removing its cards…" });
    try {
      await client.removeSource(id);
      setAction(id, null);
      setRemoving(null);
      if (history === id) setHistory(null);
      setReloads((n) => n + 1);
    } catch (error) {
      setRemoving(null);
      setAction(id, { kind: "problem", text: actionProblem(error) });
    }
  };

  return (
    <section className="admin-page">
      <h1>Sources</h1>
      <p className="muted">
        What the KB is synced from. A sync adds and updates what changed and removes what is gone
        from the source; a source that suddenly shrinks by half or more is held until confirmed.
      </p>
      <h2>Register a source</h2>
      <AddSourceForm
        onAdd={async (body) => {
          const added = await client.addSource(body);
          setReloads((n) => n + 1);
          return added;
        }}
      />
      <h2>Registered sources</h2>
      <LoadState state={state} what="the sources">
        {(sources) => (
          <SourcesTable
            sources={sources}
            actions={actions}
            removing={removing}
            onSync={(id, confirm) => void sync(id, confirm)}
            onRemove={(id) => void remove(id)}
            onAskRemove={setRemoving}
            onHistory={(id) => setHistory(history === id ? null : id)}
          />
        )}
      </LoadState>
      {history !== null && <SourceHistory client={client} id={history} reloads={reloads} />}
    </section>
  );
}
