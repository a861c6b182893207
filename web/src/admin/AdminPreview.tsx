/**
 * Answer as a member (admin): the question, the groups of the member to answer as, and what
 * that member would receive (prose and external sources). It runs the member path on the
 * server (`POST /api/v1/admin/preview`) and stores nothing.
 */
import { type FormEvent, type ReactNode, useState } from "react";

import { ApiError, type ApiClient } from "../api/client";
import type { AdminPreviewResponse } from "../api/types";
import { namedProblem } from "./plainProblem";

/** "enterprise, beta" -> ["enterprise", "beta"]: group names separated by commas or spaces. */
export function parseGroups(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

/** A refused preview in plain words, naming the field ("Groups: ..."). */
export function previewProblem(err: unknown): string {
  if (err instanceof ApiError && Object.keys(err.fields).length > 0) {
    return Object.entries(err.fields)
      .map(([field, text]) => namedProblem(PREVIEW_FIELDS[field] ?? field, text))
      .join(" ");
  }
  return err instanceof Error ? err.message : "The preview failed.";
}

const PREVIEW_FIELDS: Readonly<Record<string, string>> = { message: "Question", groups: "Groups" };

export function AdminPreview(props: { client: ApiClient }): ReactNode {
  const [question, setQuestion] = useState("");
  const [groups, setGroups] = useState("");
  const [result, setResult] = useState<AdminPreviewResponse | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    if (!question.trim()) return;
    setBusy(true);
    setProblem(null);
    // The answer shown is the last request's: none while it runs or when it fails.
    setResult(null);
    props.client
      .adminPreview({ message: question, groups: parseGroups(groups) })
      .then(setResult, (err: unknown) => setProblem(previewProblem(err)))
      .finally(() => setBusy(false));
  };
  return (
    <section aria-label="Answer as a member">
      <h1>Answer as a member</h1>
      <p className="muted">
        What a member of these groups would be answered: the same retrieval, answer and sources as
        theirs. Nothing is stored.
      </p>
      <form onSubmit={submit}>
        <label>
          Question <input value={question} onChange={(e) => setQuestion(e.target.value)} />
        </label>
        <label>
          Groups{" "}
          <input
            value={groups}
            placeholder="enterprise, beta (none: a member in no group)"
            onChange={(e) => setGroups(e.target.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Answer
        </button>
      </form>
      {problem && (
        <p className="error" role="alert" data-testid="preview-problem">
          {problem}
        </p>
      )}
      {result && <PreviewAnswer result={result} />}
    </section>
  );
}

export function PreviewAnswer(props: { result: AdminPreviewResponse }): ReactNode {
  const r = props.result;
  const who = r.groups.length ? `a member of ${r.groups.join(", ")}` : "a member in no group";
  return (
    <article data-testid="preview-answer">
      <p className="muted">As {who}:</p>
      <p>{r.answer}</p>
      {r.sources.length > 0 && (
        <ol aria-label="Sources">
          {r.sources.map((s) => (
            <li key={s.card_id} data-card-id={s.card_id}>
              {s.title} <span className="muted">{s.url}</span>
            </li>
          ))}
        </ol>
      )}
    </article>
  );
}
