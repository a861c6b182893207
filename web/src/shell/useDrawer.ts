/**
 * The conversation list on a phone: a drawer the header's button opens. While it is open the
 * rest of the page is inert, focus moves into it, and closing it moves focus back to the button
 * (or to the question box when a conversation was chosen). On wider screens the list is a
 * sidebar and there is no drawer.
 */
import { useCallback, useEffect, useRef, useState } from "react";

import { focusStart } from "./focus";
import { useMediaQuery } from "./useMediaQuery";

/** Below this width the list is a drawer (the same breakpoint as the stylesheets). */
export const NARROW_SCREEN = "(max-width: 720px)";
export const DRAWER_ID = "conversations";
export const DRAWER_TOGGLE_ID = "conversations-toggle";

/** Where focus goes when the drawer closes: back to its button, or to the question box. */
export type FocusAfterClose = "toggle" | "question";

export interface Drawer {
  /** The screen is narrow: the list is a drawer, not a sidebar. */
  narrow: boolean;
  /** The drawer is open (only ever on a narrow screen). */
  open: boolean;
  show: () => void;
  hide: (focus: FocusAfterClose) => void;
}

export function useDrawer(): Drawer {
  const narrow = useMediaQuery(NARROW_SCREEN);
  const [wanted, setWanted] = useState(false);
  const focusAfter = useRef<FocusAfterClose | null>(null);
  const open = narrow && wanted;

  // After the commit that opens or closes it: the page is no longer inert where focus goes.
  useEffect(() => {
    if (open) {
      document.getElementById(DRAWER_ID)?.focus();
      return;
    }
    const after = focusAfter.current;
    focusAfter.current = null;
    if (after === "toggle") document.getElementById(DRAWER_TOGGLE_ID)?.focus();
    else if (after === "question") focusStart();
  }, [open]);

  const show = useCallback(() => setWanted(true), []);
  const hide = useCallback((focus: FocusAfterClose) => {
    focusAfter.current = focus;
    setWanted(false);
  }, []);
  return { narrow, open, show, hide };
}
