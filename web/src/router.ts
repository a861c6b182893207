/**
 * A minimal history-API router. The server answers every non-API path with index.html, so
 * a reload of /c/<id> or /admin/analytics lands back on the same view.
 */
import { useEffect, useState } from "react";

export type Route =
  | { name: "chat"; conversationId: string | null }
  | { name: "admin-conversations" }
  | { name: "admin-conversation"; id: string }
  | { name: "admin-cards" }
  | { name: "admin-card"; id: string }
  | { name: "admin-playbooks" }
  | { name: "admin-playbook"; id: string | null }
  | { name: "admin-sources" }
  | { name: "admin-analytics" }
  | { name: "admin-events" }
  | { name: "admin-gaps" }
  | { name: "admin-handoffs" }
  | { name: "admin-resolution" }
  | { name: "admin-exposure" }
  | { name: "admin-member-exposure"; userId: string }
  | { name: "admin-audit" }
  | { name: "admin-preview" }
  | { name: "not-found" };

/** Map a pathname to a route. */
export function parseRoute(pathname: string): Route {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { name: "chat", conversationId: null };
  if (parts[0] === "c" && parts.length === 2 && parts[1]) {
    return { name: "chat", conversationId: parts[1] };
  }
  if (parts[0] === "admin") {
    if (parts.length === 1 || parts[1] === "conversations") {
      if (parts.length === 3 && parts[2]) return { name: "admin-conversation", id: parts[2] };
      if (parts.length <= 2) return { name: "admin-conversations" };
    }
    if (parts.length === 2 && parts[1] === "cards") return { name: "admin-cards" };
    if (parts.length === 3 && parts[1] === "cards" && parts[2]) {
      return { name: "admin-card", id: parts[2] };
    }
    if (parts.length === 2 && parts[1] === "playbooks") return { name: "admin-playbooks" };
    if (parts.length === 3 && parts[1] === "playbooks" && parts[2]) {
      return { name: "admin-playbook", id: parts[2] === "new" ? null : parts[2] };
    }
    if (parts.length === 2 && parts[1] === "sources") return { name: "admin-sources" };
    if (parts.length === 2 && parts[1] === "analytics") return { name: "admin-analytics" };
    if (parts.length === 2 && parts[1] === "events") return { name: "admin-events" };
    if (parts.length === 2 && parts[1] === "gaps") return { name: "admin-gaps" };
    if (parts.length === 2 && parts[1] === "handoffs") return { name: "admin-handoffs" };
    if (parts.length === 2 && parts[1] === "resolution") return { name: "admin-resolution" };
    if (parts.length === 2 && parts[1] === "audit") return { name: "admin-audit" };
    if (parts.length === 2 && parts[1] === "preview") return { name: "admin-preview" };
    if (parts[1] === "exposure") {
      if (parts.length === 2) return { name: "admin-exposure" };
      if (parts.length === 3 && parts[2])
        return { name: "admin-member-exposure", userId: parts[2] };
    }
  }
  return { name: "not-found" };
}

/** Whether `pathname` is the embeddable chat (`/embed` and the paths under it), which is not
 * the app: no routes, no sign-in form. */
export function isEmbedPath(pathname: string): boolean {
  return pathname === "/embed" || pathname.startsWith("/embed/");
}

/** The app path of a member's conversation. */
export function conversationPath(id: string): string {
  return `/c/${encodeURIComponent(id)}`;
}

/**
 * Whether a click on an in-app link is the app's to follow: a plain primary click. A click with
 * a modifier (new tab, new window, download) or another button is left to the browser.
 */
export function isPlainClick(e: {
  button: number;
  metaKey: boolean;
  ctrlKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  defaultPrevented: boolean;
}): boolean {
  return (
    !e.defaultPrevented && e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey && !e.altKey
  );
}

/** Push `path` and notify the app. */
export function navigate(path: string, replace = false): void {
  if (window.location.pathname === path) return;
  if (replace) window.history.replaceState(null, "", path);
  else window.history.pushState(null, "", path);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export function useRoute(): Route {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const onPop = (): void => setRoute(parseRoute(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  return route;
}
