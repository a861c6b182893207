/**
 * The client's names for the wire types of `/api/v1`, and the few types the OpenAPI document
 * does not describe. Everything here is an alias of the generated schema (`./types`, from
 * `scripts/gen-types`) except where a comment says why not; `./types` re-exports this module, so
 * the client imports every wire type from `./types`.
 */
import type { components, paths } from "./types";

type Schemas = components["schemas"];

/** The query parameters of a GET route. */
type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;

// -- member -----------------------------------------------------------------------------------

export type Me = Schemas["MePublic"];
export type Role = Me["role"];

/** What actually ran for a turn's retrieval; `null` when nothing was retrieved. */
export type HybridPath = Schemas["ChatResponsePublic"]["hybrid_path"];

/**
 * `answered`: the answer comes from the knowledge base, with its sources. `not_found`: one
 * honest sentence (or a small-talk reply) saying the knowledge base does not answer it; no
 * sources and no knowledge-base text. `other_language`: one sentence, in the question's language
 * where the server has it, saying which language the assistant answers in. `stopped`: the member
 * stopped the answer.
 */
export type AnswerStatus = Schemas["ChatResponsePublic"]["answer_status"];

/** A source as a member sees it: external cards only, metadata already allowlisted. */
export type Source = Schemas["SourcePublic"];
export type ChatResponse = Schemas["ChatResponsePublic"];
export type ConversationSummary = Schemas["ConversationSummaryPublic"];
export type Message = Schemas["MessagePublic"];
export type Conversation = Schemas["ConversationPublic"];
/** The receipt of a request for a person: stored, the helpdesk will receive it. */
export type HandoffReceipt = Schemas["HandoffReceipt"];

// -- stream events (POST /chat/stream): Server-Sent Events, which the OpenAPI does not describe --

export type StreamEvent =
  | { event: "meta"; data: { conversation_id: string } }
  | { event: "token"; data: { delta: string } }
  | { event: "final"; data: ChatResponse }
  | { event: "error"; data: { detail: string } };

// -- admin ------------------------------------------------------------------------------------

/**
 * A stored source exactly as the pipeline produced it (internal cards included). The server
 * sends stored sources as open objects, so this shape is the client's reading of them.
 */
export type StoredSource = {
  n?: number | null;
  card_id: string;
  title?: string | null;
  text?: string | null;
  span?: string | null;
  source_url?: string | null;
  source_license?: string | null;
  retrieved_score?: number | null;
  attributed?: boolean | null;
  metadata?: Record<string, unknown> | null;
};

/** A catalogue card (admin): internal cards included, with body and every metadata key. */
export type Card = Schemas["AdminCard"];
export type AdminHandoffPage = Schemas["AdminHandoffPage"];
export type ResolutionReport = Schemas["ResolutionReportPublic"];
export type ResolutionPeriod = Schemas["ResolutionPeriodPublic"];
export type Outcome = Schemas["OutcomeConversationPublic"]["outcome"];
export type OutcomeConversation = Schemas["OutcomeConversationPublic"];
export type CardResolution = Schemas["CardResolutionPublic"];
export type GapResolution = Schemas["GapResolutionPublic"];
export type AdminHandoff = Schemas["AdminHandoff"];
export type HandoffStatus = AdminHandoff["status"];
export type CardPage = Schemas["AdminCardPage"];

export type Period = NonNullable<QueryOf<"/api/v1/admin/analytics/entry-performance">["period"]>;

/** One card in one period of the entry-performance rollup. */
export type EntryPerformance = Schemas["EntryPerformanceRow"];

/** One retrieved card of one answer: its rank and score at every stage. */
export type RetrievalEvent = Schemas["RetrievalEventRow"];

export type RetrievalEventFilter = QueryOf<"/api/v1/admin/analytics/retrieval-events">;

export type GapPeriod = Schemas["KnowledgeGapReport"]["period"];
export type KnowledgeGapFilter = QueryOf<"/api/v1/admin/analytics/knowledge-gaps">;
export type ExposureFilter = QueryOf<"/api/v1/admin/analytics/exposure/{user_id}">;

// -- feedback (GET /admin/analytics/feedback) -------------------------------------------------

export type Rating = Schemas["RatedAnswer"]["rating"];
export type FeedbackFilter = QueryOf<"/api/v1/admin/analytics/feedback">;
export type HeadlineFilter = QueryOf<"/api/v1/admin/analytics/headline">;
export type AuditFilter = QueryOf<"/api/v1/admin/audit">;
export type AuditAction = NonNullable<AuditFilter["action"]>;
