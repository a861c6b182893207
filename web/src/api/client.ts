/**
 * The typed HTTP client for `/api/v1`. Every request carries the session's bearer token, or,
 * behind an identity-aware proxy, none: then the browser sends the proxy's cookie (same origin
 * only) and the proxy adds its assertion. Every unsafe request carries `X-Citewall-CSRF: 1`,
 * which no other site's page can send (CORS never allows it). An error response becomes an
 * `ApiError` with the server's `detail` text and status (and, for a 429, when to retry).
 */
import { SseParser } from "./sse";
import type {
  AbstentionPublic,
  AdminPreviewRequest,
  AdminPreviewResponse,
  AdminConversation,
  AdminConversationSummary,
  AdminHandoffPage,
  AuditFilter,
  AuditPage,
  Card,
  CardPage,
  ChatRequest,
  ChatResponse,
  Conversation,
  ConversationRename,
  ConversationSummary,
  EntryPerformance,
  EvalQuestionAdmin,
  EvalQuestionCreate,
  ExamplesPublic,
  ExposureFilter,
  ExposureReport,
  FeedbackFilter,
  FeedbackReport,
  HeadlineFilter,
  HeadlineNumbers,
  SessionPublic,
  FeedbackPublic,
  FeedbackRequest,
  HandoffReceipt,
  HandoffStatus,
  Outcome,
  OutcomeConversation,
  CardResolution,
  GapResolution,
  ResolutionReport,
  KnowledgeGapFilter,
  KnowledgeGapReport,
  Me,
  MemberExposureReport,
  Period,
  PlaybookCreate,
  PlaybookPublic,
  PlaybookUpdate,
  PlaybookVersionPublic,
  RegisteredSourcePublic,
  RetentionSettings,
  RetrievalEvent,
  RetrievalEventFilter,
  SourceCreate,
  SourceRemoved,
  StreamEvent,
  SyncRunPublic,
  UploadCreate,
  UploadPublic,
  UploadRemoved,
} from "./types";

const BASE = "/api/v1";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds to wait before asking again (the response's `Retry-After`), when it said. */
    readonly retryAfterS: number | null = null,
    /** A 422's problems by the field they name (what a form shows beside each field). */
    readonly fields: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A `Retry-After` header in seconds: delay-seconds, or an HTTP date from `now` (ms); null when
 * absent or unreadable. */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | null {
  const value = header?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The `ApiError` of a refused response whose body was read as `body`. */
function refusal(response: Response, body: unknown): ApiError {
  return new ApiError(
    response.status,
    errorDetail(body, response.status),
    retryAfterSeconds(response.headers.get("Retry-After")),
    fieldProblems(body),
  );
}

/** A 422 body's problems keyed by the field each names (the last part of its `loc`). */
export function fieldProblems(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!body || typeof body !== "object" || !("detail" in body)) return out;
  const detail: unknown = body.detail;
  if (!Array.isArray(detail)) return out;
  for (const d of detail as unknown[]) {
    if (!d || typeof d !== "object" || !("loc" in d) || !("msg" in d)) continue;
    const loc = Array.isArray(d.loc) ? (d.loc as unknown[]) : [];
    const last = loc[loc.length - 1];
    const field = typeof last === "string" || typeof last === "number" ? String(last) : "";
    if (field && !(field in out)) out[field] = String(d.msg);
  }
  return out;
}

/** Turn a FastAPI error body (`{"detail": str | [{msg}]}`) into one readable line. */
export function errorDetail(body: unknown, status: number): string {
  if (body && typeof body === "object" && "detail" in body) {
    const detail: unknown = body.detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) {
      return (detail as unknown[])
        .map((d) => (d && typeof d === "object" && "msg" in d ? String(d.msg) : JSON.stringify(d)))
        .join("; ");
    }
  }
  return `request failed (HTTP ${status})`;
}

function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The header, with its value, that marks an unsafe request as sent by citewall's own UI. */
export const CSRF_HEADER = "X-Citewall-CSRF";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What `POST /auth/session` answers: citewall's session for a host site's signed token. */
export type Session = SessionPublic;

/** Ask the host site for a fresh token and exchange it for a session; the session token, or
 * null when there is none to be had. */
export type Renew = () => Promise<string | null>;

/** Exchange a host site's signed token for a citewall session (`POST /auth/session`). */
export async function createSession(hostToken: string): Promise<Session> {
  const response = await fetch(`${BASE}/auth/session`, {
    method: "POST",
    body: JSON.stringify({ token: hostToken }),
    headers: { "Content-Type": "application/json", [CSRF_HEADER]: "1" },
    credentials: "omit",
  });
  if (!response.ok) {
    const body: unknown = await response.json().catch(() => null);
    throw refusal(response, body);
  }
  return (await response.json()) as Session;
}

interface Send {
  method?: string;
  body?: string;
  accept?: string;
  signal?: AbortSignal;
}

export class ApiClient {
  // Set once the server has accepted the token: a 401 after that means the session ended.
  private accepted = false;
  private readonly sessionEndListeners = new Set<() => void>();
  // The renewal under way: requests refused together wait for the same fresh token.
  private renewing: Promise<string | null> | null = null;

  /**
   * `token`: the bearer token, or null behind an identity-aware proxy. `renew`: called when a
   * token that had been accepted is refused; the request is sent once more with the token it
   * gives (the embedded chat asks its host page for a fresh one).
   */
  constructor(
    private token: string | null,
    private readonly renew: Renew | null = null,
  ) {}

  /**
   * Call `listener` when a request is refused with 401 after the token had been accepted (it
   * was revoked, or the user was disabled). Returns the function that removes the listener.
   */
  onSessionEnded(listener: () => void): () => void {
    this.sessionEndListeners.add(listener);
    return () => {
      this.sessionEndListeners.delete(listener);
    };
  }

  private refused(status: number): void {
    if (status !== 401 || !this.accepted) return;
    for (const listener of this.sessionEndListeners) listener();
  }

  private fetch(path: string, init: Send, token: string | null): Promise<Response> {
    const method = init.method ?? "GET";
    const headers: Record<string, string> = {};
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    if (init.body !== undefined) headers["Content-Type"] = "application/json";
    if (init.accept) headers.Accept = init.accept;
    if (!SAFE_METHODS.has(method)) headers[CSRF_HEADER] = "1";
    return fetch(BASE + path, {
      method,
      body: init.body,
      headers,
      // A bearer token is the whole credential; without one, the proxy's cookie is.
      credentials: token === null ? "same-origin" : "omit",
      signal: init.signal,
    });
  }

  /** Send a request; a 401 for a token that had been accepted renews it once and resends. */
  private async send(path: string, init: Send = {}): Promise<Response> {
    const used = this.token;
    const response = await this.fetch(path, init, used);
    if (response.status !== 401 || !this.accepted || !this.renew) return response;
    // Another request may have renewed the token while this one was under way.
    const fresh = this.token !== used ? this.token : await this.renewed(this.renew);
    if (fresh === null) return response;
    this.token = fresh;
    return this.fetch(path, init, fresh);
  }

  private renewed(renew: Renew): Promise<string | null> {
    this.renewing ??= renew()
      .catch(() => null)
      .finally(() => {
        this.renewing = null;
      });
    return this.renewing;
  }

  private async request<T>(path: string, init: Send = {}): Promise<T> {
    const response = await this.send(path, init);
    if (!response.ok) {
      const body: unknown = await response.json().catch(() => null);
      this.refused(response.status);
      throw refusal(response, body);
    }
    this.accepted = true;
    // 204 No Content: the callers of such paths ask for `void`.
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  me(): Promise<Me> {
    return this.request<Me>("/me");
  }

  /** Revoke this client's session token (`DELETE /auth/session`; an API token is refused). */
  endSession(): Promise<void> {
    return this.request<void>("/auth/session", { method: "DELETE" });
  }

  /** The member's own conversations, most recently updated first; `q` filters on the title
   * and the member's questions. */
  conversations(
    params: { limit?: number; offset?: number; q?: string } = {},
  ): Promise<ConversationSummary[]> {
    return this.request<ConversationSummary[]>(`/conversations${query(params)}`);
  }

  renameConversation(id: string, title: string): Promise<ConversationSummary> {
    return this.request<ConversationSummary>(`/conversations/${encodeURIComponent(id)}`, {
      method: "PATCH",
      body: JSON.stringify({ title } satisfies ConversationRename),
    });
  }

  /** Hides the conversation from its member (its turns stay stored). */
  deleteConversation(id: string): Promise<void> {
    return this.request<void>(`/conversations/${encodeURIComponent(id)}`, { method: "DELETE" });
  }

  conversation(id: string): Promise<Conversation> {
    return this.request<Conversation>(`/conversations/${encodeURIComponent(id)}`);
  }

  chat(body: ChatRequest): Promise<ChatResponse> {
    return this.request<ChatResponse>("/chat", { method: "POST", body: JSON.stringify(body) });
  }

  /**
   * POST /chat/stream and call `onEvent` for each event as it arrives. Resolves when the
   * stream ends; rejects with ApiError when the request itself is refused, and with an
   * AbortError when `signal` aborts (closing the connection stops the answer on the server).
   */
  chatStream(
    body: ChatRequest,
    onEvent: (event: StreamEvent) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    return this.postStream("/chat/stream", JSON.stringify(body), onEvent, signal);
  }

  /**
   * POST /conversations/{id}/regenerate: answer the conversation's last question again, as a
   * stream of the same events as `chatStream`. The new answer is stored; the earlier one stays.
   */
  regenerateStream(
    conversationId: string,
    onEvent: (event: StreamEvent) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const path = `/conversations/${encodeURIComponent(conversationId)}/regenerate`;
    return this.postStream(path, undefined, onEvent, signal);
  }

  private async postStream(
    path: string,
    body: string | undefined,
    onEvent: (event: StreamEvent) => void,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const response = await this.send(path, {
      method: "POST",
      body,
      accept: "text/event-stream",
      signal,
    });
    if (!response.ok || !response.body) {
      const data: unknown = await response.json().catch(() => null);
      this.refused(response.status);
      throw refusal(response, data);
    }
    this.accepted = true;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const raw of parser.push(value)) {
        const event = toStreamEvent(raw.event, raw.data);
        if (event) onEvent(event);
      }
    }
    parser.finish();
  }

  /** The member's rating of an answer (PUT replaces an earlier one). */
  rateAnswer(messageId: string, feedback: FeedbackRequest): Promise<FeedbackPublic> {
    return this.request<FeedbackPublic>(`/messages/${encodeURIComponent(messageId)}/feedback`, {
      method: "PUT",
      body: JSON.stringify(feedback),
    });
  }

  /** Withdraw the member's rating of an answer. */
  unrateAnswer(messageId: string): Promise<void> {
    return this.request<void>(`/messages/${encodeURIComponent(messageId)}/feedback`, {
      method: "DELETE",
    });
  }

  /** Ask for a person on one of the member's conversations, with an optional message. */
  requestHandoff(conversationId: string, message: string | null): Promise<HandoffReceipt> {
    return this.request<HandoffReceipt>(
      `/conversations/${encodeURIComponent(conversationId)}/handoff`,
      { method: "POST", body: JSON.stringify({ message }) },
    );
  }

  /** Example questions for an empty conversation. */
  examples(): Promise<ExamplesPublic> {
    return this.request<ExamplesPublic>("/examples");
  }

  // -- admin ----------------------------------------------------------------------------------

  adminConversations(): Promise<AdminConversationSummary[]> {
    return this.request<AdminConversationSummary[]>("/admin/conversations");
  }

  /** Conversations by outcome per day or week. */
  resolution(period: "day" | "week"): Promise<ResolutionReport> {
    return this.request<ResolutionReport>(`/admin/analytics/resolution${query({ period })}`);
  }

  /** The conversations behind a number of the resolution report (with `outcome`, with
   * `topCardId` as their top card, and of the knowledge-gap group `gapGroup` (its `group_id`),
   * when given), newest first. */
  outcomeConversations(
    outcome: Outcome | null,
    topCardId: string | null = null,
    gapGroup: string | null = null,
  ): Promise<OutcomeConversation[]> {
    const params = { outcome, top_card_id: topCardId, gap_group: gapGroup, limit: 200 };
    return this.request<OutcomeConversation[]>(
      `/admin/analytics/resolution/conversations${query(params)}`,
    );
  }

  /** Conversations by top card and outcome, the cards with most conversations first. */
  cardResolution(): Promise<CardResolution[]> {
    return this.request<CardResolution[]>("/admin/analytics/resolution/cards");
  }

  /** The knowledge-gap groups with the outcomes of their conversations. */
  gapResolution(): Promise<GapResolution[]> {
    return this.request<GapResolution[]>("/admin/analytics/resolution/gaps");
  }

  /** The handoff outbox, newest first (only `status` ones when given). */
  adminHandoffs(status: HandoffStatus | null = null): Promise<AdminHandoffPage> {
    return this.request<AdminHandoffPage>(`/admin/handoffs${query({ status, limit: 200 })}`);
  }

  adminConversation(id: string): Promise<AdminConversation> {
    return this.request<AdminConversation>(`/admin/conversations/${encodeURIComponent(id)}`);
  }

  adminCards(params: {
    q?: string;
    external?: boolean | null;
    limit?: number;
    offset?: number;
  }): Promise<CardPage> {
    return this.request<CardPage>(`/admin/cards${query(params)}`);
  }

  adminCard(id: string): Promise<Card> {
    return this.request<Card>(`/admin/cards/${encodeURIComponent(id)}`);
  }

  /** Stop serving a card (kept, out of every index) or serve it again. */
  setCardEnabled(id: string, enabled: boolean): Promise<Card> {
    const change = enabled ? "enable" : "disable";
    return this.request<Card>(`/admin/cards/${encodeURIComponent(id)}/${change}`, {
      method: "POST",
    });
  }

  playbooks(): Promise<PlaybookPublic[]> {
    return this.request<PlaybookPublic[]>("/admin/playbooks");
  }

  playbook(id: string): Promise<PlaybookPublic> {
    return this.request<PlaybookPublic>(`/admin/playbooks/${encodeURIComponent(id)}`);
  }

  playbookVersions(id: string): Promise<PlaybookVersionPublic[]> {
    return this.request<PlaybookVersionPublic[]>(
      `/admin/playbooks/${encodeURIComponent(id)}/versions`,
    );
  }

  createPlaybook(body: PlaybookCreate): Promise<PlaybookPublic> {
    return this.request<PlaybookPublic>("/admin/playbooks", {
      method: "POST",
      body: JSON.stringify(body),
    });
  }

  /** Save an edit as the next version (`base_version`: the version the edit began from). */
  updatePlaybook(id: string, body: PlaybookUpdate): Promise<PlaybookPublic> {
    return this.request<PlaybookPublic>(`/admin/playbooks/${encodeURIComponent(id)}`, {
      method: "PUT",
      body: JSON.stringify(body),
    });
  }

  rollbackPlaybook(id: string, version: number): Promise<PlaybookPublic> {
    return this.request<PlaybookPublic>(`/admin/playbooks/${encodeURIComponent(id)}/rollback`, {
      method: "POST",
      body: JSON.stringify({ version }),
    });
  }

  /** The registered sources, each with its schedule, card count and last sync. */
  sources(): Promise<RegisteredSourcePublic[]> {
    return this.request<RegisteredSourcePublic[]>("/admin/sources");
  }

  /** A source's syncs, newest first. */
  sourceRuns(id: number): Promise<SyncRunPublic[]> {
    return this.request<SyncRunPublic[]>(`/admin/sources/${id}/runs`);
  }

  addSource(body: SourceCreate): Promise<RegisteredSourcePublic> {
    return this.request<RegisteredSourcePublic>("/admin/sources", {
      method: "POST",
      body: JSON.stringify(body),
    });
  }

  /** Sync the source now; `confirm` applies a sync held because the source shrank by half. A
   * sync already running (here or on a replica) is a 409. */
  syncSource(id: number, confirm = false): Promise<SyncRunPublic> {
    return this.request<SyncRunPublic>(`/admin/sources/${id}/sync${query({ confirm })}`, {
      method: "POST",
    });
  }

  /** Delete the source's cards from the KB, then unregister it. */
  removeSource(id: number): Promise<SourceRemoved> {
    return this.request<SourceRemoved>(`/admin/sources/${id}`, { method: "DELETE" });
  }

  /** The documents uploaded from the admin pages, newest first. */
  uploads(): Promise<UploadPublic[]> {
    return this.request<UploadPublic[]>("/admin/uploads");
  }

  /** Upload a document (its bytes base64): read and ingested as a document folder is. */
  upload(body: UploadCreate): Promise<UploadPublic> {
    return this.request<UploadPublic>("/admin/uploads", {
      method: "POST",
      body: JSON.stringify(body),
    });
  }

  /** Remove an uploaded document and its cards from every index. */
  removeUpload(id: number): Promise<UploadRemoved> {
    return this.request<UploadRemoved>(`/admin/uploads/${id}`, { method: "DELETE" });
  }

  feedbackReport(filter: FeedbackFilter): Promise<FeedbackReport> {
    return this.request<FeedbackReport>(`/admin/analytics/feedback${query({ ...filter })}`);
  }

  headline(filter: HeadlineFilter): Promise<HeadlineNumbers> {
    return this.request<HeadlineNumbers>(`/admin/analytics/headline${query({ ...filter })}`);
  }

  /** Per card and period; with `audience`, of the members of that group only. */
  entryPerformance(period: Period, audience?: string): Promise<EntryPerformance[]> {
    return this.request<EntryPerformance[]>(
      `/admin/analytics/entry-performance${query({ period, audience })}`,
    );
  }

  retrievalEvents(filter: RetrievalEventFilter): Promise<RetrievalEvent[]> {
    return this.request<RetrievalEvent[]>(
      `/admin/analytics/retrieval-events${query({ ...filter })}`,
    );
  }

  /** Save the question a stored answer answered as a test question (`citewall eval kb`). */
  saveEvalQuestion(body: EvalQuestionCreate): Promise<EvalQuestionAdmin> {
    return this.request<EvalQuestionAdmin>("/admin/eval-questions", {
      method: "POST",
      body: JSON.stringify(body),
    });
  }

  /** The abstention thresholds in use and the calibration fitted on the KB at ingest. */
  abstention(): Promise<AbstentionPublic> {
    return this.request<AbstentionPublic>("/admin/abstention");
  }

  /** What a member of `body.groups` would be answered (the member path; nothing stored). */
  adminPreview(body: AdminPreviewRequest): Promise<AdminPreviewResponse> {
    return this.request<AdminPreviewResponse>("/admin/preview", {
      method: "POST",
      body: JSON.stringify(body),
    });
  }

  knowledgeGaps(filter: KnowledgeGapFilter): Promise<KnowledgeGapReport> {
    return this.request<KnowledgeGapReport>(
      `/admin/analytics/knowledge-gaps${query({ ...filter })}`,
    );
  }

  exposure(filter: ExposureFilter): Promise<ExposureReport> {
    return this.request<ExposureReport>(`/admin/analytics/exposure${query({ ...filter })}`);
  }

  /** The audit log, newest first (who read or changed members' data). */
  auditLog(filter: AuditFilter): Promise<AuditPage> {
    return this.request<AuditPage>(`/admin/audit${query({ ...filter })}`);
  }

  /** How long members' words and audit lines are kept. */
  retention(): Promise<RetentionSettings> {
    return this.request<RetentionSettings>("/admin/retention");
  }

  memberExposure(userId: string, filter: ExposureFilter): Promise<MemberExposureReport> {
    return this.request<MemberExposureReport>(
      `/admin/analytics/exposure/${encodeURIComponent(userId)}${query({ ...filter })}`,
    );
  }
}

/** Decode one raw SSE event into a typed StreamEvent; unknown or malformed events are skipped. */
export function toStreamEvent(name: string, data: string): StreamEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object") return null;
  const obj = parsed as Record<string, unknown>;
  switch (name) {
    case "meta":
      return typeof obj.conversation_id === "string"
        ? { event: "meta", data: { conversation_id: obj.conversation_id } }
        : null;
    case "token":
      return typeof obj.delta === "string" ? { event: "token", data: { delta: obj.delta } } : null;
    case "final":
      return typeof obj.answer === "string"
        ? { event: "final", data: parsed as ChatResponse }
        : null;
    case "error":
      return {
        event: "error",
        data: { detail: typeof obj.detail === "string" ? obj.detail : "the answer failed" },
      };
    default:
      return null;
  }
}
