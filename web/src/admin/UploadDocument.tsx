/**
 * Upload a document (admin, on the Playbooks page): a PDF, DOCX, HTML or Markdown file, internal
 * or external with the URL it is cited with, its licence and groups. The file is read as base64
 * in the browser and ingested by the server as a document folder is; the run's counts and any
 * refusal are shown, a refusal beside the field it names. Below, the uploaded documents with a
 * button that removes each (and its cards) from the KB.
 */
import { useState, type FormEvent, type ReactNode } from "react";

import { ApiError, type ApiClient } from "../api/client";
import type { SyncRunPublic, UploadCreate, UploadPublic } from "../api/types";
import { LoadState } from "../components/LoadState";
import { formatDate, plural } from "../components/format";
import { useLoad } from "../components/useLoad";
import { ConfirmButton } from "./ConfirmButton";
import { DataTable, type Column } from "./DataTable";
import { FormField } from "./FormField";

/** The file types the server reads (by suffix). */
export const UPLOAD_ACCEPT = ".pdf,.docx,.html,.htm,.md,.markdown";

/** Bytes as standard, padded base64 (in slices, so a large file does not overflow the stack). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  const slice = 0x8000;
  for (let i = 0; i < bytes.length; i += slice) {
    binary += String.fromCharCode(...bytes.subarray(i, i + slice));
  }
  return btoa(binary);
}

/** What the form holds, as text fields. */
export type UploadDraft = {
  visibility: "internal" | "external";
  url: string;
  license: string;
  audiences: string;
};

export const EMPTY_UPLOAD: UploadDraft = {
  visibility: "internal",
  url: "",
  license: "",
  audiences: "",
};

/** The body the server takes: an internal document sends no url; groups split at commas and
 * spaces; an empty licence is none. */
export function uploadBody(filename: string, content: string, d: UploadDraft): UploadCreate {
  return {
    filename,
    content_base64: content,
    visibility: d.visibility,
    url: d.visibility === "external" && d.url.trim() ? d.url.trim() : null,
    license: d.license.trim() ? d.license.trim() : null,
    audiences: d.audiences
      .split(/[\s,]+/)
      .map((a) => a.trim())
      .filter((a) => a.length > 0),
  };
}

/** A run's counts in a line: "3 added, 0 updated, 0 unchanged, 0 removed, 0 refused (0.4 s)". */
export function runSummary(run: SyncRunPublic): string {
  return (
    `${run.added} added, ${run.updated} updated, ${run.unchanged} unchanged, ` +
    `${run.removed} removed, ${run.refused} refused (${run.duration_s.toFixed(1)} s)`
  );
}

function uploadColumns(
  busy: boolean,
  remove: (u: UploadPublic) => void,
): readonly Column<UploadPublic>[] {
  return [
    { header: "Document", cell: (u) => u.name },
    {
      header: "Visibility",
      cell: (u) => (u.visibility === "external" ? `external: ${u.url ?? ""}` : "internal"),
    },
    { header: "Cards", cell: (u) => u.card_ids.length, numeric: true },
    { header: "Uploaded", cell: (u) => `${formatDate(u.uploaded_at)} by ${u.uploaded_by}` },
    { header: "Run", cell: (u) => (u.run ? runSummary(u.run) : "") },
    {
      header: "",
      cell: (u) => (
        <ConfirmButton
          label={`Remove ${u.name}`}
          question={`Remove ${u.name} and its ${plural(u.card_ids.length, "card", "cards")} from the KB?`}
          confirm="Yes, remove"
          disabled={busy}
          onConfirm={() => remove(u)}
        />
      ),
    },
  ];
}

export function UploadDocument(props: { client: ApiClient }): ReactNode {
  const { client } = props;
  const [reloads, setReloads] = useState(0);
  // `reloads` is read so that a change (an upload, a removal) loads the list again.
  const list = useLoad(
    () => (reloads >= 0 ? client.uploads() : Promise.resolve([])),
    [client, reloads],
  );
  const [file, setFile] = useState<File | null>(null);
  const [draft, setDraft] = useState<UploadDraft>(EMPTY_UPLOAD);
  const [fields, setFields] = useState<Readonly<Record<string, string>>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [done, setDone] = useState<UploadPublic | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: "url" | "license" | "audiences") => (value: string) =>
    setDraft({ ...draft, [key]: value });

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!file) {
      setFields({ content_base64: "choose a file" });
      return;
    }
    setBusy(true);
    setFields({});
    setDone(null);
    try {
      const content = bytesToBase64(new Uint8Array(await file.arrayBuffer()));
      const made = await client.upload(uploadBody(file.name, content, draft));
      setDone(made);
      setMessage({ ok: true, text: `Uploaded ${made.name}: ${made.card_ids.length} card(s).` });
      setReloads((n) => n + 1);
    } catch (error) {
      setFields(error instanceof ApiError ? error.fields : {});
      setMessage({ ok: false, text: error instanceof Error ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };
  const remove = async (u: UploadPublic): Promise<void> => {
    setBusy(true);
    setFields({});
    try {
      const gone = await client.removeUpload(u.id);
      setMessage({ ok: true, text: `Removed ${gone.name}: ${runSummary(gone.run)}.` });
      setDone(null);
      setReloads((n) => n + 1);
    } catch (error) {
      setMessage({ ok: false, text: error instanceof Error ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  };
  const fileProblem = fields.content_base64 ?? fields.filename;

  return (
    <section aria-labelledby="upload-heading" data-testid="upload-document">
      <h2 id="upload-heading">Upload a document</h2>
      <p className="muted">
        A PDF, Word (DOCX), HTML or Markdown file, read as a document folder is. Internal: answers
        may draw on it, members never see it as a source. External: cited with its URL. Uploading a
        file of the same name replaces it.
      </p>
      <form className="playbook-form" onSubmit={(e) => void submit(e)} data-testid="upload-form">
        <FormField label="File" problem={fileProblem}>
          <input
            type="file"
            accept={UPLOAD_ACCEPT}
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </FormField>
        <FormField label="Visibility" problem={undefined}>
          <select
            value={draft.visibility}
            onChange={(e) =>
              setDraft({
                ...draft,
                visibility: e.target.value === "external" ? "external" : "internal",
              })
            }
          >
            <option value="internal">Internal (never a source)</option>
            <option value="external">External (cited with its URL)</option>
          </select>
        </FormField>
        {draft.visibility === "external" && (
          <FormField label="URL it is cited with" problem={fields.url}>
            <input
              type="url"
              value={draft.url}
              onChange={(e) => set("url")(e.target.value)}
              placeholder="https://help.example.com/guide"
            />
          </FormField>
        )}
        {draft.visibility === "internal" && fields.url && (
          <p className="field-problem" role="alert">
            {fields.url}
          </p>
        )}
        <FormField label="Licence (optional)" problem={fields.license}>
          <input value={draft.license} onChange={(e) => set("license")(e.target.value)} />
        </FormField>
        <FormField label="Groups (none: every member)" problem={fields.audiences}>
          <input value={draft.audiences} onChange={(e) => set("audiences")(e.target.value)} />
        </FormField>
        <button type="submit" disabled={busy}>
          {busy ? "Uploading…" : "Upload"}
        </button>
        {message && (
          <p role={message.ok ? "status" : "alert"} data-testid="upload-message">
            {message.text}
          </p>
        )}
        {done?.run && <UploadRun run={done.run} />}
      </form>
      <h3>Uploaded documents</h3>
      <LoadState state={list} what="the uploads">
        {(uploads) => (
          <DataTable
            label="Uploaded documents"
            className="uploads-table"
            columns={uploadColumns(busy, (u) => void remove(u))}
            rows={uploads}
            rowKey={(u) => String(u.id)}
            empty="No documents uploaded yet."
          />
        )}
      </LoadState>
    </section>
  );
}

/** The run of an upload: its counts, then each refusal with where it was. */
export function UploadRun(props: { run: SyncRunPublic }): ReactNode {
  const { run } = props;
  return (
    <div data-testid="upload-run">
      <p>Ingest run: {runSummary(run)}.</p>
      {run.refusals.length > 0 && (
        <ul>
          {run.refusals.map((r) => (
            <li key={`${r.where}-${r.reason}`}>
              {r.where}: {r.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
