/**
 * Wire types of the citewall HTTP API (`/api/v1`), in one place. They mirror the server's
 * `*Public` schemas; when the server changes a shape, this file and `client.ts` change with it.
 */

export type Role = "member" | "admin";

/** What actually ran for a turn's retrieval; `null` when nothing was retrieved. */
export type HybridPath = "full" | "rrf_only" | "dense_only" | null;

export interface Me {
  name: string;
  role: Role;
}

/**
 * `answered`: the answer comes from the knowledge base, with its sources. `not_found`: one
 * honest sentence (or a small-talk reply) saying the knowledge base does not answer it; no
 * sources and no knowledge-base text. `stopped`: the member stopped it; the prose said so far.
 */
export type AnswerStatus = "answered" | "not_found" | "stopped";

/** A source as a member sees it: external cards only, metadata already allowlisted. */
export interface Source {
  card_id: string;
  title: string;
  url: string;
  license?: string | null;
  /** 0-100, set only when the answer was reranked (`hybrid_path === "full"`). */
  retrieved_score?: number | null;
  excerpt?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface ChatRequest {
  message: string;
  conversation_id: string | null;
}

export interface ChatResponse {
  conversation_id: string;
  message_id: string;
  answer: string;
  /** Missing only from an older server; the UI then treats the answer as `answered`. */
  answer_status?: AnswerStatus;
  sources: Source[];
  hybrid_path: HybridPath;
  created_at: string;
}

export interface ConversationSummary {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  message_count: number;
}

export interface Message {
  id: string;
  role: "user" | "assistant";
  content: string;
  /** Assistant messages only (null on the member's own messages). */
  answer_status?: AnswerStatus | null;
  sources?: Source[] | null;
  hybrid_path?: HybridPath;
  /** The member's own rating (assistant messages only). */
  feedback?: FeedbackPublic | null;
  /** The answer this one replaced (a regenerated answer); the earlier one stays before it. */
  regenerated_from?: string | null;
  created_at: string;
}

export interface Conversation {
  id: string;
  title: string | null;
  created_at: string;
  messages: Message[];
}

// -- stream events (POST /chat/stream) --------------------------------------------------------

export type StreamEvent =
  | { event: "meta"; data: { conversation_id: string } }
  | { event: "token"; data: { delta: string } }
  | { event: "final"; data: ChatResponse }
  | { event: "error"; data: { detail: string } };

// -- admin ------------------------------------------------------------------------------------

export interface AdminConversationSummary extends ConversationSummary {
  user_id: string;
}

/** A stored source exactly as the pipeline produced it (internal cards included). */
export interface StoredSource {
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
}

/**
 * A stored value that is not the object it should be (null, a double-encoded JSON string, a
 * number): the server sends this placeholder in its place rather than failing the page.
 */
export interface UnreadableStored {
  unreadable: true;
  /** What is wrong, for a person. */
  title: string;
  /** The stored value as JSON text (shortened). */
  raw: string;
}

export interface AdminMessage {
  id: string;
  seq?: number;
  role: "user" | "assistant";
  content: string;
  sources?: (StoredSource | UnreadableStored)[] | null;
  hybrid_path?: HybridPath;
  created_at: string;
  timings?: Record<string, unknown> | null;
  generator?: string | null;
  dropped_markers?: unknown;
  /** Assistant messages: `answered` or `not_found` (a plain string, as stored). */
  answer_status?: string | null;
  /** Best dense similarity between the retrieval query and a retrieved card, when measured. */
  support?: number | null;
  /** Why the answer used external cards only (`exposure_budget`), or null. */
  restricted?: string | null;
}

export interface AdminConversation {
  id: string;
  user_id: string;
  title: string | null;
  created_at: string;
  updated_at?: string;
  messages: AdminMessage[];
  retrieval_events?: RetrievalEvent[] | null;
}

/** A catalogue card (admin): internal cards included, with body and every metadata key. */
export interface Card {
  id: string;
  title: string;
  url?: string | null;
  license?: string | null;
  external: boolean;
  body?: string | null;
  metadata?: Record<string, unknown> | null;
  /** Other catalogue columns (content hash, ingest version, timestamps). */
  extra?: Record<string, unknown> | null;
}

export interface CardPage {
  cards: Card[];
  total: number;
  limit: number;
  offset: number;
}

export type Period = "day" | "week" | "month" | "all";

export interface EntryPerformance {
  card_id: string;
  period_start: string | null;
  times_retrieved: number;
  times_cited: number;
  cite_rate: number | null;
  mean_rank: number | null;
  last_cited: string | null;
  is_external: boolean;
}

export interface RetrievalEvent {
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
}

export interface RetrievalEventFilter {
  card_id?: string;
  hybrid_path?: string;
  since?: string;
  until?: string;
  limit?: number;
  offset?: number;
}

// -- knowledge gaps (GET /admin/analytics/knowledge-gaps) ----------------------------------------

export type GapPeriod = "day" | "week" | "month";

export interface KnowledgeGapQuestion {
  message_id: string;
  conversation_id: string;
  question: string;
  answer_status: string;
  support: number | null;
  asked_at: string;
}

export interface KnowledgeGapPeriod {
  /** ISO date the period starts on (UTC; weeks start on Monday). */
  period_start: string;
  count: number;
}

/** Similar questions the knowledge base did not answer well, named by the newest one. */
export interface KnowledgeGap {
  question: string;
  count: number;
  not_found: number;
  low_support: number;
  last_asked: string | null;
  per_period: KnowledgeGapPeriod[];
  examples: KnowledgeGapQuestion[];
}

export interface KnowledgeGapReport {
  period: GapPeriod;
  /** Answered questions with support below this count as gaps (`not_found` ones always do). */
  low_support_below: number;
  since: string | null;
  until: string | null;
  /** Questions counted (before grouping). */
  questions: number;
  groups: KnowledgeGap[];
}

export interface KnowledgeGapFilter {
  period: GapPeriod;
  since?: string;
  until?: string;
  limit?: number;
}

// -- exposure (GET /admin/analytics/exposure[/{user_id}]) -------------------------------------

/** The exposure budget in force: distinct internal cards per member per rolling window. */
export interface ExposureBudget {
  /** 0 when the budget is off. */
  cards: number;
  window_hours: number;
}

/** One member's exposure to internal cards over the report's window. */
export interface ExposureMember {
  user_id: string;
  name: string;
  role: string;
  /** Answers that drew on at least one internal card. */
  turns: number;
  /** Distinct internal cards those answers drew on. */
  cards: number;
  /** `cards` over the internal cards in the catalogue (null when there are none). */
  corpus_share: number | null;
  /** Distinct internal sentences the answers repeated whole. */
  verbatim_sentences: number;
  /** Longest run of words one answer shared with one card. */
  longest_span: number;
  first_exposed: string | null;
  last_exposed: string | null;
  /** Answers limited to external knowledge because the budget was spent (the alert). */
  restricted_turns: number;
  first_restricted: string | null;
}

export interface ExposureReport {
  since: string | null;
  until: string | null;
  budget: ExposureBudget;
  internal_cards: number;
  /** Members with exposure or restricted answers in the window (`members` is the top). */
  members_total: number;
  members: ExposureMember[];
}

export interface ExposureDay {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  cards: number;
  verbatim_sentences: number;
  turns: number;
  restricted_turns: number;
}

/** One internal card in one answer. */
export interface ExposureCard {
  card_id: string;
  title: string | null;
  cited: boolean;
  verbatim_sentences: number;
  card_sentences: number;
  longest_span: number;
}

export interface ExposureTurn {
  message_id: string;
  conversation_id: string;
  created_at: string;
  question: string | null;
  /** Why the answer was limited to external knowledge, null when it was not. */
  restricted: string | null;
  cards: ExposureCard[];
}

export interface MemberExposureReport {
  since: string | null;
  until: string | null;
  budget: ExposureBudget;
  internal_cards: number;
  member: ExposureMember;
  /** Per UTC day, oldest first. */
  days: ExposureDay[];
  turns_total: number;
  offset: number;
  limit: number;
  /** One page of the turns, newest first. */
  turns: ExposureTurn[];
}

export interface ExposureFilter {
  since?: string;
  until?: string;
  limit?: number;
  offset?: number;
}

// -- feedback and examples (member) -----------------------------------------------------------

export type Rating = "up" | "down";

/** PUT /messages/{id}/feedback: one rating per member per answer; a new PUT replaces it. */
export interface FeedbackRequest {
  rating: Rating;
  /** At most 2000 characters once trimmed; empty means none. */
  comment: string | null;
}

/** The member's own rating of one answer. */
export interface FeedbackPublic {
  message_id: string;
  rating: Rating;
  comment: string | null;
  updated_at: string;
}

/** GET /examples: example questions for an empty conversation. */
export interface ExamplesPublic {
  questions: string[];
}
