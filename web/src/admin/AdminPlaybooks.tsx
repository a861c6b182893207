/**
 * Playbooks (admin): the internal cards written here, each saved as a new version. The list,
 * a form to write a new one or edit one with a Markdown preview (rendered by `SafeMarkdown`,
 * never as HTML), the history of its versions and a rollback to any of them. Each save is
 * ingested as a card file would be; a refusal is shown beside the field it names.
 */
import { useState, type FormEvent, type ReactNode } from "react";

import { ApiError, type ApiClient } from "../api/client";
import type { PlaybookPublic, PlaybookVersionPublic } from "../api/types";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";
import { SafeMarkdown } from "../markdown/SafeMarkdown";
import { navigate } from "../router";
import { cardPath } from "./AdminCard";
import { ConfirmButton } from "./ConfirmButton";
import { DataTable, type Column } from "./DataTable";
import { FormField } from "./FormField";
import { namedProblem } from "./plainProblem";
import { PlaybookVersionText } from "./PlaybookVersionText";
import { UploadDocument } from "./UploadDocument";

export function playbookPath(id: string | null): string {
  return id === null ? "/admin/playbooks/new" : `/admin/playbooks/${encodeURIComponent(id)}`;
}

/** What the form holds, as text fields. */
export type Draft = { id: string; title: string; body: string; reply: string; audiences: string };

export const EMPTY_DRAFT: Draft = { id: "", title: "", body: "", reply: "", audiences: "" };

export function draftOf(
  p: Pick<PlaybookPublic, "id" | "title" | "body" | "reply" | "audiences">,
): Draft {
  return {
    id: p.id,
    title: p.title,
    body: p.body,
    reply: p.reply ?? "",
    audiences: p.audiences.join(", "),
  };
}

/** The fields the server takes: an empty reply is none; groups split at commas and spaces. */
export function writeOf(d: Draft): {
  title: string;
  body: string;
  reply: string | null;
  audiences: string[];
} {
  return {
    title: d.title.trim(),
    body: d.body,
    reply: d.reply.trim() ? d.reply.trim() : null,
    audiences: d.audiences
      .split(/[\s,]+/)
      .map((a) => a.trim())
      .filter((a) => a.length > 0),
  };
}

const LIST_COLUMNS: readonly Column<PlaybookPublic>[] = [
  { header: "Title", cell: (p) => <NavLink to={playbookPath(p.id)}>{p.title || p.id}</NavLink> },
  { header: "Version", cell: (p) => p.version, numeric: true },
  { header: "Saved", cell: (p) => formatDate(p.saved_at ?? null) },
  { header: "By", cell: (p) => p.saved_by },
  {
    header: "Served",
    cell: (p) => (p.disabled ? "disabled" : p.in_catalogue ? "yes" : "not in the KB"),
  },
];

/** The form's fields, by the name the server's problems use, as the page names them. */
export const FIELD_NAMES: Readonly<Record<string, string>> = {
  id: "Id",
  title: "Title",
  audiences: "Groups",
  body: "Staff notes",
  reply: "Tell the member",
};

/** Under Save, once: problems of no field on the form (those are shown beside their field). */
export function formProblem(text: string, fields: Readonly<Record<string, string>>): string {
  const placed = Object.keys(fields).filter((k) => k in FIELD_NAMES);
  const others = Object.entries(fields).filter(([k]) => !(k in FIELD_NAMES));
  if (placed.length === 0 && others.length === 0) return text;
  const rest = others.map(([k, v]) => namedProblem(k, v)).join(" ");
  return placed.length ? `Not saved: see the problems marked above. ${rest}`.trim() : rest;
}

function historyColumns(
  current: PlaybookPublic | null,
  busy: boolean,
  rollback: (version: number) => void,
  read: (version: PlaybookVersionPublic) => void,
): readonly Column<PlaybookVersionPublic>[] {
  return [
    {
      header: "Version",
      cell: (v) => `${v.version}${v.restored_from ? ` (restores ${v.restored_from})` : ""}`,
    },
    { header: "Saved", cell: (v) => formatDate(v.saved_at ?? null) },
    { header: "By", cell: (v) => v.saved_by },
    { header: "Title", cell: (v) => v.title },
    {
      header: "",
      cell: (v) =>
        current && v.version !== current.version ? (
          <>
            <button type="button" className="quiet-button" onClick={() => read(v)}>
              Read version {v.version}
            </button>{" "}
            <ConfirmButton
              label={`Roll back to version ${v.version}`}
              question={`Roll back to version ${v.version}? Its text is saved as a new version.`}
              confirm="Roll back"
              disabled={busy}
              onConfirm={() => rollback(v.version)}
            />
          </>
        ) : null,
    },
  ];
}

export function AdminPlaybooks(props: { client: ApiClient }): ReactNode {
  const state = useLoad(() => props.client.playbooks(), [props.client]);
  return (
    <section className="admin-page">
      <h1>Playbooks</h1>
      <p className="muted">
        Internal cards written here: answers may draw on them, members never see them as a source.
        Every save is a new version.
      </p>
      <p>
        <NavLink to={playbookPath(null)}>New playbook</NavLink>
      </p>
      <LoadState state={state} what="the playbooks">
        {(list) => (
          <DataTable
            label="Playbooks"
            className="playbooks-table"
            columns={LIST_COLUMNS}
            rows={list}
            rowKey={(p) => p.id}
            empty="No playbooks yet."
          />
        )}
      </LoadState>
      <UploadDocument client={props.client} />
    </section>
  );
}

export function PlaybookPage(props: { client: ApiClient; id: string | null }): ReactNode {
  const { client, id } = props;
  const [reloads, setReloads] = useState(0);
  const state = useLoad(
    () =>
      reloads < 0 || id === null
        ? Promise.resolve(null)
        : Promise.all([client.playbook(id), client.playbookVersions(id)]),
    [client, id, reloads],
  );
  return (
    <section className="admin-page">
      <p>
        <NavLink to="/admin/playbooks">All playbooks</NavLink>
      </p>
      <LoadState state={state} what="the playbook">
        {(loaded) => (
          <PlaybookEditor
            key={loaded ? `${loaded[0].id}-${loaded[0].version}` : "new"}
            current={loaded ? loaded[0] : null}
            versions={loaded ? loaded[1] : []}
            onSave={async (draft, base) => {
              const saved =
                base === null
                  ? await client.createPlaybook({ id: draft.id.trim(), ...writeOf(draft) })
                  : await client.updatePlaybook(base.id, {
                      ...writeOf(draft),
                      base_version: base.version,
                    });
              if (base === null) navigate(playbookPath(saved.id));
              else setReloads((n) => n + 1);
              return saved;
            }}
            onRollback={async (version) => {
              if (!loaded) return;
              await client.rollbackPlaybook(loaded[0].id, version);
              setReloads((n) => n + 1);
            }}
          />
        )}
      </LoadState>
    </section>
  );
}

export function PlaybookEditor(props: {
  current: PlaybookPublic | null;
  versions: readonly PlaybookVersionPublic[];
  onSave: (draft: Draft, base: PlaybookPublic | null) => Promise<PlaybookPublic>;
  onRollback: (version: number) => Promise<void>;
}): ReactNode {
  const { current } = props;
  const [draft, setDraft] = useState<Draft>(current ? draftOf(current) : EMPTY_DRAFT);
  const [fields, setFields] = useState<Readonly<Record<string, string>>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [reading, setReading] = useState<PlaybookVersionPublic | null>(null);
  const set = (key: keyof Draft) => (value: string) => setDraft({ ...draft, [key]: value });
  /** A refused field's problem in plain words, after the field's name (`FIELD_NAMES`). */
  const named = (name: string): string | undefined => {
    const problem = fields[name];
    return problem === undefined ? undefined : namedProblem(FIELD_NAMES[name] ?? name, problem);
  };

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setFields({});
    try {
      const saved = await props.onSave(draft, current);
      setMessage({ ok: true, text: `Saved as version ${saved.version}.` });
    } catch (error) {
      const problems = error instanceof ApiError ? error.fields : {};
      setFields(problems);
      const text = error instanceof Error ? error.message : String(error);
      setMessage({ ok: false, text: formProblem(text, problems) });
    } finally {
      setBusy(false);
    }
  };
  const rollback = async (version: number): Promise<void> => {
    setBusy(true);
    try {
      await props.onRollback(version);
    } catch (error) {
      setMessage({ ok: false, text: error instanceof Error ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>{current ? `Edit ${current.title || current.id}` : "New playbook"}</h1>
      {current && (
        <p className="muted" data-testid="playbook-state">
          Version {current.version}, saved {formatDate(current.saved_at ?? null)} by{" "}
          {current.saved_by}.{" "}
          {current.disabled ? "Disabled: not served." : current.in_catalogue ? "Served." : ""}{" "}
          <NavLink to={cardPath(current.id)}>Card page</NavLink>
        </p>
      )}
      <form className="playbook-form" onSubmit={(e) => void submit(e)} data-testid="playbook-form">
        <FormField label="Id" problem={named("id")}>
          <input
            value={draft.id}
            disabled={current !== null}
            onChange={(e) => set("id")(e.target.value)}
            placeholder="pb-refund-exceptions"
          />
        </FormField>
        <FormField label="Title" problem={named("title")}>
          <input value={draft.title} onChange={(e) => set("title")(e.target.value)} />
        </FormField>
        <FormField label="Groups (none: every member)" problem={named("audiences")}>
          <input value={draft.audiences} onChange={(e) => set("audiences")(e.target.value)} />
        </FormField>
        <FormField label="Staff notes (Markdown)" problem={named("body")}>
          <textarea rows={10} value={draft.body} onChange={(e) => set("body")(e.target.value)} />
        </FormField>
        <FormField label="Tell the member (plain prose, optional)" problem={named("reply")}>
          <textarea rows={3} value={draft.reply} onChange={(e) => set("reply")(e.target.value)} />
        </FormField>
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : "Save"}
        </button>
        {message && (
          <p
            role={message.ok ? "status" : "alert"}
            className={message.ok ? undefined : "error"}
            data-testid="playbook-message"
          >
            {message.text}
          </p>
        )}
      </form>
      <h2>Preview</h2>
      <div className="card-body" data-testid="playbook-preview">
        <SafeMarkdown source={draft.body} stripCitationMarkers={false} />
        {draft.reply.trim() && (
          <>
            <h3>Tell the member</h3>
            <p className="card-reply">{draft.reply}</p>
          </>
        )}
      </div>
      {props.versions.length > 0 && (
        <>
          <h2>History</h2>
          <DataTable
            label="History"
            className="playbook-history"
            columns={historyColumns(current, busy, (v) => void rollback(v), setReading)}
            rows={props.versions}
            rowKey={(v) => String(v.version)}
            empty="No versions."
          />
          {reading && <PlaybookVersionText version={reading} onClose={() => setReading(null)} />}
        </>
      )}
    </>
  );
}
