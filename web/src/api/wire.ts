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
 * sources and no knowledge-base text.
 */
export type AnswerStatus = Schemas["ChatResponsePublic"]["answer_status"];

/** A source as a member sees it: external cards only, metadata already allowlisted. */
export type Source = Schemas["SourcePublic"];
export type ChatResponse = Schemas["ChatResponsePublic"];
export type ConversationSummary = Schemas["ConversationSummaryPublic"];
export type Message = Schemas["MessagePublic"];
export type Conversation = Schemas["ConversationPublic"];

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
export type CardPage = Schemas["AdminCardPage"];

export type Period = NonNullable<QueryOf<"/api/v1/admin/analytics/entry-performance">["period"]>;

/** One card in one period (the server sends these rows as open objects). */
export type EntryPerformance = {
  card_id: string;
  period_start: string | null;
  times_retrieved: number;
  times_cited: number;
  cite_rate: number | null;
  mean_rank: number | null;
  last_cited: string | null;
  is_external: boolean;
  /** Thumbs up on answers that cited the card (absent from a server without feedback). */
  helpful?: number;
  /** Thumbs down on answers that cited the card. */
  unhelpful?: number;
  /** `helpful / (helpful + unhelpful)`; null when nobody rated. */
  helpful_rate?: number | null;
};

/** One retrieved card in one turn (the server sends these rows as open objects). */
export type RetrievalEvent = {
  id?: number | string;
  message_id?: string | null;
  conversation_id?: string | null;
  card_id: string;
  /** The text retrieval ran with (a follow-up's includes the earlier question). */
  query?: string | null;
  final_rank?: number | null;
  dense_rank?: number | null;
  dense_score?: number | null;
  bm25_rank?: number | null;
  bm25_score?: number | null;
  rrf_rank?: number | null;
  rrf_score?: number | null;
  rerank_rank?: number | null;
  /** The cross-encoder's raw logit (the member-facing score is 100 * sigmoid of it). */
  rerank_logit?: number | null;
  hybrid_path?: HybridPath;
  cited?: boolean | null;
  is_external?: boolean | null;
  created_at?: string | null;
};

export type RetrievalEventFilter = QueryOf<"/api/v1/admin/analytics/retrieval-events">;

export type GapPeriod = Schemas["KnowledgeGapReport"]["period"];
export type KnowledgeGapFilter = QueryOf<"/api/v1/admin/analytics/knowledge-gaps">;
export type ExposureFilter = QueryOf<"/api/v1/admin/analytics/exposure/{user_id}">;

// -- feedback (GET /admin/analytics/feedback) -------------------------------------------------

export type Rating = "up" | "down";

/** Thumbs on the answers that cited one card. */
export type FeedbackCard = {
  card_id: string;
  title: string;
  external: boolean;
  up: number;
  down: number;
  /** `up / (up + down)`; null when nobody rated. */
  helpful_rate: number | null;
};

/** A rated answer: the answer as stored (markers kept), its question and the rating. */
export type RatedAnswer = {
  message_id: string;
  conversation_id: string;
  user_id: string;
  user_name: string;
  question: string | null;
  answer: string;
  rating: Rating;
  comment: string | null;
  created_at: string;
  updated_at?: string;
};

/** Members' thumbs up and down in a window: per card, and the worst-rated answers. */
export type FeedbackReport = {
  since: string | null;
  until: string | null;
  up: number;
  down: number;
  helpful_rate: number | null;
  /** Most thumbs down first. */
  cards: FeedbackCard[];
  /** Thumbs down first, then newest first. */
  worst: RatedAnswer[];
};

export type FeedbackFilter = { since?: string; until?: string; limit?: number };
