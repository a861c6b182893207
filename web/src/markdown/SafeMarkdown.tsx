/**
 * Model-written Markdown rendered to React elements, never to an HTML string.
 *
 * markdown-it only tokenises, with raw HTML, links, autolinks, reference definitions and images
 * switched off, so `<script>`, `[x](javascript:...)`, `<https://...>` and bare URLs all stay
 * literal text. The token walker below builds elements from a fixed list of tags and copies no
 * attribute from the model except an ordered list's start number and a table cell's alignment
 * (both checked). React escapes every text node, and nothing here uses innerHTML.
 */
import MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";
import { createElement, type ReactNode } from "react";

import { stripMarkers } from "./markers";

const parser = new MarkdownIt("commonmark", { html: false, linkify: false, typographer: false });
// Parsing rules that could produce a link, an image or raw HTML are off; "table" and
// "strikethrough" are on because answers use them.
parser.disable(["link", "image", "autolink", "html_inline", "html_block", "reference"]);
parser.enable(["table", "strikethrough"]);
parser.validateLink = () => false;

/** Block and inline tags the renderer may create, keyed by markdown-it token tag. */
const ALLOWED_TAGS = new Set([
  "p",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "strong",
  "em",
  "s",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "hr",
  "br",
  "pre",
  "code",
]);

// Headings in an answer sit under the page's own headings.
const HEADING_TAG: Record<string, string> = {
  h1: "h3",
  h2: "h4",
  h3: "h5",
  h4: "h6",
  h5: "h6",
  h6: "h6",
};

export interface SafeMarkdownOptions {
  /** Remove `[n]` citation markers from prose (member view). Admins see them. */
  stripCitationMarkers: boolean;
}

/** Parse `source` and return React nodes built only from the allowed tags. */
export function renderSafeMarkdown(source: string, options: SafeMarkdownOptions): ReactNode[] {
  const tokens = parser.parse(source, {});
  return new Walker(options).blocks(tokens);
}

interface Frame {
  tag: string;
  props: Record<string, unknown>;
  children: ReactNode[];
}

class Walker {
  private key = 0;

  constructor(private readonly options: SafeMarkdownOptions) {}

  /** Fold a flat token stream (open/close pairs) into a tree. */
  blocks(tokens: Token[]): ReactNode[] {
    const root: Frame = { tag: "root", props: {}, children: [] };
    const stack: Frame[] = [root];
    const top = (): Frame => stack[stack.length - 1] ?? root;
    for (const token of tokens) {
      if (token.nesting === 1) {
        // Tight lists mark their paragraphs hidden: their content goes straight into the <li>.
        const tag = token.hidden ? "" : this.tagFor(token);
        stack.push({ tag, props: this.propsFor(token), children: [] });
      } else if (token.nesting === -1) {
        const frame = stack.length > 1 ? stack.pop() : undefined;
        if (frame && frame.tag === "") top().children.push(...frame.children);
        else if (frame) top().children.push(this.element(frame));
      } else if (token.type === "inline") {
        top().children.push(...this.inline(token.children ?? []));
      } else if (token.type === "fence" || token.type === "code_block") {
        top().children.push(
          this.element({
            tag: "pre",
            props: {},
            children: [this.element({ tag: "code", props: {}, children: [token.content] })],
          }),
        );
      } else if (token.type === "hr") {
        top().children.push(this.element({ tag: "hr", props: {}, children: [] }));
      } else if (token.content) {
        // An unknown block token: keep what the model wrote, as text.
        top().children.push(token.content);
      }
    }
    while (stack.length > 1) {
      const frame = stack.pop();
      if (frame && frame.tag === "") top().children.push(...frame.children);
      else if (frame) top().children.push(this.element(frame));
    }
    return root.children;
  }

  private inline(tokens: Token[]): ReactNode[] {
    const root: Frame = { tag: "root", props: {}, children: [] };
    const stack: Frame[] = [root];
    const top = (): Frame => stack[stack.length - 1] ?? root;
    let text = "";
    const flush = (): void => {
      if (text === "") return;
      top().children.push(this.options.stripCitationMarkers ? stripMarkers(text) : text);
      text = "";
    };
    for (const token of tokens) {
      if (token.type === "text" || token.type === "text_special") {
        // Adjacent text tokens are joined first so a marker split across them is still seen.
        text += token.content;
        continue;
      }
      if (token.type === "softbreak") {
        text += "\n";
        continue;
      }
      flush();
      if (token.type === "hardbreak") {
        top().children.push(this.element({ tag: "br", props: {}, children: [] }));
      } else if (token.type === "code_inline") {
        top().children.push(this.element({ tag: "code", props: {}, children: [token.content] }));
      } else if (token.nesting === 1) {
        stack.push({ tag: this.tagFor(token), props: {}, children: [] });
      } else if (token.nesting === -1) {
        const frame = stack.length > 1 ? stack.pop() : undefined;
        if (frame) top().children.push(this.element(frame));
      } else if (token.content) {
        text += token.content;
      }
    }
    flush();
    while (stack.length > 1) {
      const frame = stack.pop();
      if (frame) top().children.push(this.element(frame));
    }
    return root.children;
  }

  private tagFor(token: Token): string {
    const tag = HEADING_TAG[token.tag] ?? token.tag;
    // Anything outside the list (a future markdown-it rule, say) renders as a neutral span.
    return ALLOWED_TAGS.has(tag) ? tag : "span";
  }

  private propsFor(token: Token): Record<string, unknown> {
    if (token.type === "ordered_list_open") {
      const start = Number(token.attrGet("start") ?? "1");
      return Number.isInteger(start) && start > 1 && start < 1_000_000 ? { start } : {};
    }
    if (token.type === "th_open" || token.type === "td_open") {
      const style = token.attrGet("style") ?? "";
      const align = /text-align:(left|right|center)/.exec(style)?.[1];
      return align ? { className: `md-align-${align}` } : {};
    }
    return {};
  }

  private element(frame: Frame): ReactNode {
    this.key += 1;
    const props = { ...frame.props, key: this.key };
    if (frame.tag === "br" || frame.tag === "hr") return createElement(frame.tag, props);
    return createElement(frame.tag, props, ...frame.children);
  }
}

/** The rendered answer: a `div.markdown` holding the safe element tree. */
export function SafeMarkdown(props: { source: string; stripCitationMarkers: boolean }): ReactNode {
  return createElement(
    "div",
    { className: "markdown" },
    ...renderSafeMarkdown(props.source, { stripCitationMarkers: props.stripCitationMarkers }),
  );
}
