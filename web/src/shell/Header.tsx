/**
 * The header: on the chat, the button that opens the conversation drawer (phones only); the
 * app's name, the navigation (admin pages for admins), who is signed in, and Sign out (unless
 * an identity-aware proxy signed the user in: then the proxy's own sign-out ends the session).
 * On a phone every link stays whole: a member's header is one row; an admin's navigation takes
 * a row of its own under it and wraps, rather than scrolling links out of sight.
 */
import type { ReactNode } from "react";

import type { Me } from "../api/types";
import { NavLink } from "../components/NavLink";
import type { Route } from "../router";
import { DRAWER_ID, DRAWER_TOGGLE_ID, type Drawer } from "./useDrawer";

export function Header(props: {
  me: Me;
  route: Route;
  /** The conversation drawer, on the chat route. */
  drawer: Drawer | null;
  /** Null: no Sign out (the identity-aware proxy owns the session). */
  onSignOut: (() => void) | null;
}): ReactNode {
  const { me, route, drawer } = props;
  return (
    <header className="app-header" inert={drawer?.open}>
      {drawer?.narrow && (
        <button
          type="button"
          id={DRAWER_TOGGLE_ID}
          className="drawer-toggle"
          aria-label="Conversations"
          aria-controls={DRAWER_ID}
          aria-expanded={drawer.open}
          onClick={drawer.show}
        >
          <span className="bars" aria-hidden="true" />
        </button>
      )}
      <span className="brand">citewall</span>
      <nav aria-label="Main" className={me.role === "admin" ? "nav-admin" : undefined}>
        <ul className="nav-list">
          <li>
            <NavLink to="/" current={route.name === "chat"}>
              Chat
            </NavLink>
          </li>
          {me.role === "admin" && <AdminNav route={route} />}
        </ul>
      </nav>
      <span className="who">
        <span className="visually-hidden">Signed in as </span>
        <span className="who-name">{me.name}</span> <span className="role-badge">{me.role}</span>
      </span>
      {props.onSignOut && (
        <button type="button" className="link-button sign-out" onClick={props.onSignOut}>
          Sign out
        </button>
      )}
    </header>
  );
}

function AdminNav(props: { route: Route }): ReactNode {
  const r = props.route.name;
  return (
    <>
      <li>
        <NavLink
          to="/admin/conversations"
          current={r === "admin-conversations" || r === "admin-conversation"}
        >
          Conversations
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/cards" current={r === "admin-cards" || r === "admin-card"}>
          Cards
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/playbooks" current={r === "admin-playbooks" || r === "admin-playbook"}>
          Playbooks
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/sources" current={r === "admin-sources"}>
          Sources
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/analytics" current={r === "admin-analytics"}>
          Analytics
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/events" current={r === "admin-events"}>
          Retrieval events
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/gaps" current={r === "admin-gaps"}>
          Knowledge gaps
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/resolution" current={r === "admin-resolution"}>
          Resolution
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/handoffs" current={r === "admin-handoffs"}>
          Handoffs
        </NavLink>
      </li>
      <li>
        <NavLink
          to="/admin/exposure"
          current={r === "admin-exposure" || r === "admin-member-exposure"}
        >
          Exposure
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/audit" current={r === "admin-audit"}>
          Audit log
        </NavLink>
      </li>
      <li>
        <NavLink to="/admin/preview" current={r === "admin-preview"}>
          Answer as a member
        </NavLink>
      </li>
    </>
  );
}
