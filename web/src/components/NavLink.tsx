/**
 * An in-app navigation link: a real `<a href>` (so it can be opened in a new tab and is announced
 * as a link) whose plain click is handled by the router. Its `to` is always an app path we
 * wrote, never data.
 */
import type { MouseEvent, ReactNode } from "react";

import { isPlainClick, navigate } from "../router";

export function NavLink(props: { to: string; current?: boolean; children: ReactNode }): ReactNode {
  const onClick = (e: MouseEvent<HTMLAnchorElement>): void => {
    if (!isPlainClick(e)) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={props.to} onClick={onClick} aria-current={props.current ? "page" : undefined}>
      {props.children}
    </a>
  );
}
