/**
 * What went wrong, in words a member can act on. Server details ("Internal Server Error",
 * "rate limit exceeded", "Failed to fetch") are written for operators; the chat shows one
 * plain sentence and says whether trying again can help.
 */
import { ApiError } from "../api/client";

export interface ChatProblem {
  message: string;
  /** Whether sending the same request again may work (the UI offers Retry). */
  retry: boolean;
}

export const SESSION_ENDED = "Your session has ended. Sign in again to continue.";
export const UNREACHABLE = "Could not reach citewall. Check your connection, then try again.";
export const UNAVAILABLE = "citewall is unavailable right now. Try again in a moment.";
const SERVER_FAILED = "citewall could not answer just now. Nothing was saved; please try again.";
const STREAM_FAILED = "The answer could not be finished. Nothing was saved; please try again.";
const STREAM_CUT = "The connection was lost before the answer finished. Please try again.";
const BUSY = "Too many questions in a short time.";
const BUSY_PAGE = "Too many requests in a short time.";
const TOO_LONG = "That question is too long. Shorten it and send it again.";
const FULL = "This conversation is full. Start a new conversation to ask more.";
const NOT_ACCEPTED = "citewall could not accept that question. Edit it and send it again.";
const GONE = "This conversation no longer exists. Start a new conversation.";
const NO_ACCESS = "You do not have access to this.";

/** When to try again, from a 429's `Retry-After` (null: it did not say).
 *
 * "Wait a moment, then try again." / "Try again in 30 seconds." / "Try again in 2 minutes." */
export function retryWhen(seconds: number | null): string {
  if (seconds === null || seconds <= 1) return "Wait a moment, then try again.";
  if (seconds < 60) return `Try again in ${seconds} seconds.`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "Try again in a minute." : `Try again in ${minutes} minutes.`;
}

/** What the page says when it could not even load who is signed in (`GET /me`, as on a
 * reload): over the rate limit, that and when to try again; else that citewall is down. */
export function signInProblem(err: unknown): string {
  if (!(err instanceof ApiError)) return UNREACHABLE;
  if (err.status === 429) return `${BUSY_PAGE} ${retryWhen(err.retryAfterS)}`;
  return UNAVAILABLE;
}

/** The problem behind a rejected request: an `ApiError` by its status, anything else as a
 * network failure (fetch rejects with a TypeError when the server cannot be reached). */
export function problemFor(err: unknown): ChatProblem {
  if (!(err instanceof ApiError)) return { message: UNREACHABLE, retry: true };
  switch (err.status) {
    case 401:
      return { message: SESSION_ENDED, retry: false };
    case 403:
      return { message: NO_ACCESS, retry: false };
    case 404:
      return { message: GONE, retry: false };
    case 409:
      return { message: FULL, retry: false };
    case 413:
      return { message: TOO_LONG, retry: false };
    case 429:
      return { message: `${BUSY} ${retryWhen(err.retryAfterS)}`, retry: true };
    default:
      if (err.status >= 500) return { message: SERVER_FAILED, retry: true };
      return { message: NOT_ACCEPTED, retry: false };
  }
}

/** A stream's `error` event: the server stored nothing of the turn; trying again may work. */
export function streamProblem(): ChatProblem {
  return { message: STREAM_FAILED, retry: true };
}

/** A stream that closed without its `final` event. */
export function streamCut(): ChatProblem {
  return { message: STREAM_CUT, retry: true };
}

/** Regenerate refused with 409: the conversation is full, has no answer to replace, or
 * changed meanwhile (the page offers Regenerate only on a shown answer). */
export function regenerateProblem(err: unknown): ChatProblem {
  if (err instanceof ApiError && err.status === 409) {
    return {
      message: "This answer cannot be answered again here. Start a new conversation to ask again.",
      retry: false,
    };
  }
  return problemFor(err);
}

/** A rating that was not saved. */
export function feedbackProblem(err: unknown): ChatProblem {
  if (!(err instanceof ApiError)) return { message: UNREACHABLE, retry: true };
  if (err.status === 401) return { message: SESSION_ENDED, retry: false };
  return { message: "Your feedback could not be saved. Please try again.", retry: true };
}
