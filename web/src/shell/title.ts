/**
 * The browser tab's title names the page: "<page> - citewall". The chat page names it after the
 * open conversation; the shell names every other page after its route.
 */
import { useEffect } from "react";

import type { Route } from "../router";

export const APP_NAME = "citewall";

/**
 * The tab title for a page.
 *
 * @example documentTitle("Refund window") // "Refund window - citewall"
 */
export function documentTitle(page: string | null): string {
  const name = page?.trim();
  return name ? `${name} - ${APP_NAME}` : APP_NAME;
}

const ADMIN_PAGES: Partial<Record<Route["name"], string>> = {
  "admin-conversations": "Conversations",
  "admin-conversation": "Conversation",
  "admin-cards": "Cards",
  "admin-card": "Card",
  "admin-playbooks": "Playbooks",
  "admin-playbook": "Playbook",
  "admin-sources": "Sources",
  "admin-analytics": "Analytics",
  "admin-events": "Retrieval events",
  "admin-gaps": "Knowledge gaps",
  "admin-handoffs": "Handoffs",
  "admin-resolution": "Resolution",
  "admin-exposure": "Exposure",
  "admin-member-exposure": "Member exposure",
  "admin-audit": "Audit log",
};

/** The name of a page the shell titles (every route but the chat, which titles itself). */
export function routePageName(route: Route, isAdmin: boolean): string {
  if (route.name === "not-found") return "Page not found";
  const admin = ADMIN_PAGES[route.name];
  if (admin === undefined) return "Chat";
  return isAdmin ? `Admin · ${admin}` : "Administrators only";
}

/** Set the tab title while the calling component shows `page` (`undefined`: leave it alone). */
export function useDocumentTitle(page: string | null | undefined): void {
  useEffect(() => {
    if (page !== undefined) document.title = documentTitle(page);
  }, [page]);
}
