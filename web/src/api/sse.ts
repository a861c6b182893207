/**
 * A Server-Sent Events parser for `fetch` streams. EventSource cannot POST or send an
 * Authorization header, so the chat stream is read with `fetch` and parsed here.
 *
 * Follows the WHATWG event-stream format: events end at a blank line, `data:` lines join with
 * "\n", one optional space after the colon is dropped, lines starting with ":" are comments,
 * and CRLF, LF and CR all end a line.
 */

export interface RawSseEvent {
  event: string;
  data: string;
}

/** Incremental parser: feed decoded text with `push`, get back every completed event. */
export class SseParser {
  private buffer = "";
  private eventName = "";
  private dataLines: string[] = [];

  /** Add a chunk of decoded text; return the events completed by it, in order. */
  push(chunk: string): RawSseEvent[] {
    this.buffer += chunk;
    const out: RawSseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone "\r" at the end of a chunk may be the first half of "\r\n": wait for more.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event) out.push(event);
    }
    return out;
  }

  /** End of stream: an event not followed by a blank line is discarded, as the spec says. */
  finish(): RawSseEvent[] {
    this.buffer = "";
    this.eventName = "";
    this.dataLines = [];
    return [];
  }

  private line(line: string): RawSseEvent | null {
    if (line === "") {
      if (this.dataLines.length === 0) {
        this.eventName = "";
        return null;
      }
      const event = { event: this.eventName || "message", data: this.dataLines.join("\n") };
      this.eventName = "";
      this.dataLines = [];
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventName = value;
    else if (field === "data") this.dataLines.push(value);
    return null;
  }
}
