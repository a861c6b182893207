/**
 * Markdown as plain prose: an answer for the clipboard (the words the member reads, without
 * Markdown syntax, citation markers, or any of the page's own labels), and a source's excerpt
 * for its popover. Lists keep a "- " or "1. " in front of each item, code keeps its lines, a
 * table becomes tab-separated rows.
 */
import MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";

import { stripMarkers } from "../markdown/markers";

// Parsed as SafeMarkdown parses it, so the copy has the structure the reader saw.
const parser = new MarkdownIt("commonmark", { html: false, linkify: false, typographer: false });
parser.disable(["link", "image", "autolink", "html_inline", "html_block", "reference"]);
parser.enable(["table", "strikethrough"]);

// An excerpt is a card's own Markdown: its links become their text, images their alt text.
const excerptParser = new MarkdownIt("commonmark", { html: false, linkify: false });
excerptParser.disable(["html_inline", "html_block"]);
excerptParser.enable(["table", "strikethrough"]);

// Emphasis and code delimiters an excerpt's cut left unpaired ("**Press" from "**Press X**"),
// and a heading's hashes that such a delimiter hid from the parser.
const STRAY_DELIMITERS = /\*\*+|__+|~~+|`+/g;
const STRAY_HEADING = /^[ \t]*(?:#{1,6}[ \t]+)+/gm;

interface List {
  ordered: boolean;
  next: number;
}

/** The text of an inline token's children: markers stripped from prose, code kept as written. */
function inlineText(tokens: readonly Token[], cleanProse: (text: string) => string): string {
  let out = "";
  let prose = "";
  const flush = (): void => {
    out += cleanProse(prose);
    prose = "";
  };
  for (const t of tokens) {
    if (t.type === "text" || t.type === "text_special") prose += t.content;
    else if (t.type === "softbreak" || t.type === "hardbreak") prose += "\n";
    else if (t.type === "code_inline") {
      flush();
      out += t.content;
    } else if (t.nesting === 0 && t.content) prose += t.content;
  }
  flush();
  return out;
}

/**
 * `markdown` (an answer as the server sends it) as plain text.
 *
 * @example answerPlainText("Reset it **now** [1].\n\n- one\n- two") // "Reset it now.\n\n- one\n- two"
 */
export function answerPlainText(markdown: string): string {
  return plainText(parser.parse(markdown, {}), stripMarkers);
}

/**
 * A source's `excerpt` (Markdown from the knowledge base, possibly cut mid-sentence) as plain
 * text: emphasis, code, headings and link syntax become their words. Never rendered as HTML.
 *
 * @example excerptPlainText("## Refunds\n\nPress **Save** in [Settings](https://x.test).") // "Refunds\n\nPress Save in Settings."
 */
export function excerptPlainText(markdown: string): string {
  return plainText(excerptParser.parse(markdown, {}), (text) =>
    stripMarkers(text).replace(STRAY_DELIMITERS, "").replace(STRAY_HEADING, ""),
  );
}

function plainText(tokens: readonly Token[], cleanProse: (text: string) => string): string {
  const blocks: string[] = [];
  let lastTight = false;
  const push = (text: string, tight: boolean): void => {
    if (blocks.length > 0) blocks.push(tight && lastTight ? "\n" : "\n\n");
    blocks.push(text);
    lastTight = tight;
  };
  const lists: List[] = [];
  let prefix = "";
  let row: string[] | null = null;
  for (const token of tokens) {
    const inList = lists.length > 0;
    switch (token.type) {
      case "bullet_list_open":
      case "ordered_list_open":
        // A list starts a block of its own; a nested one continues its item.
        if (!inList) lastTight = false;
        lists.push({
          ordered: token.type === "ordered_list_open",
          next: Number(token.attrGet("start") ?? "1") || 1,
        });
        break;
      case "bullet_list_close":
      case "ordered_list_close":
        lists.pop();
        break;
      case "list_item_open": {
        const list = lists[lists.length - 1];
        const indent = "  ".repeat(lists.length - 1);
        if (list) prefix = indent + (list.ordered ? `${list.next++}. ` : "- ");
        break;
      }
      case "tr_open":
        row = [];
        break;
      case "tr_close":
        if (row) push(row.join("\t"), true);
        row = null;
        break;
      case "inline": {
        const text = inlineText(token.children ?? [], cleanProse);
        if (row) row.push(text);
        else {
          push(prefix + text, inList);
          prefix = "";
        }
        break;
      }
      case "fence":
      case "code_block":
        push(prefix + token.content.replace(/\n$/, ""), inList);
        prefix = "";
        break;
      default:
        break;
    }
  }
  return blocks.join("").trim();
}
