/**
 * Keep the newest message in view. While the reader is at the end of the conversation, the
 * view follows it as it grows (a question sent, a streamed delta, a conversation opened); once
 * they scroll up, it stays where they put it and `showJump` offers a way back.
 */
import { useEffect, useRef, useState, type RefObject } from "react";

/** Closer to the end than this (px) counts as at the end. */
const AT_END_PX = 24;

/** The element that scrolls `el`: its nearest ancestor that scrolls vertically, else the
 * document. */
export function scrollerOf(el: HTMLElement): HTMLElement {
  for (let node = el.parentElement; node; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowY;
    if (overflow === "auto" || overflow === "scroll") return node;
  }
  return (document.scrollingElement as HTMLElement | null) ?? document.documentElement;
}

function distanceToEnd(s: HTMLElement): number {
  return s.scrollHeight - s.scrollTop - s.clientHeight;
}

function scrollToEnd(s: HTMLElement, smooth: boolean): void {
  const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  s.scrollTo({ top: s.scrollHeight, behavior: smooth && !reduce ? "smooth" : "instant" });
}

export interface Follow {
  /** The reader is away from the end: show "Jump to latest". */
  showJump: boolean;
  /** Scroll to the end and follow again (the reader asked a question, or jumped). */
  jump: (smooth?: boolean) => void;
}

/** Follow the end of the element `anchor` points to (the list of messages) as it grows. */
export function useFollow(anchor: RefObject<HTMLElement | null>): Follow {
  const following = useRef(true);
  const [showJump, setShowJump] = useState(false);

  useEffect(() => {
    const el = anchor.current;
    if (!el) return;
    const s = scrollerOf(el);
    const target: HTMLElement | Window = s === document.scrollingElement ? window : s;
    let lastTop = s.scrollTop;
    const settle = (): void => {
      lastTop = s.scrollTop;
      setShowJump(distanceToEnd(s) > AT_END_PX);
    };
    const onScroll = (): void => {
      // Scrolling up means the reader wants to read: stop following. Reaching the end (by
      // hand or by jumping) follows again. Content that shrinks moves the view up too, but
      // then the view is at the end.
      if (distanceToEnd(s) <= AT_END_PX) following.current = true;
      else if (s.scrollTop < lastTop) following.current = false;
      settle();
    };
    // The messages grew or shrank, or the window changed size.
    const onResize = (): void => {
      if (following.current) scrollToEnd(s, false);
      settle();
    };
    const observer = new ResizeObserver(onResize);
    observer.observe(el);
    target.addEventListener("scroll", onScroll, { passive: true });
    window.addEventListener("resize", onResize);
    return () => {
      observer.disconnect();
      target.removeEventListener("scroll", onScroll);
      window.removeEventListener("resize", onResize);
    };
  }, [anchor]);

  const jump = (smooth = true): void => {
    following.current = true;
    const el = anchor.current;
    if (el) scrollToEnd(scrollerOf(el), smooth);
  };

  return { showJump, jump };
}
