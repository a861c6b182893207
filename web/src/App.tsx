/**
 * The shell: sign-in, who am I, the header with navigation, and the page for the route.
 * Admin pages are offered only to the admin role (the API enforces it regardless).
 */
import { useCallback, useEffect, useMemo, useState, type ReactNode } from "react";

import { ApiClient, ApiError } from "./api/client";
import type { Me } from "./api/types";
import { clearToken, loadToken, saveToken } from "./auth/session";
import { SignIn } from "./auth/SignIn";
import { AdminAnalytics } from "./admin/AdminAnalytics";
import { AdminCards } from "./admin/AdminCards";
import { AdminConversationView } from "./admin/AdminConversationView";
import { AdminConversations } from "./admin/AdminConversations";
import { AdminEvents } from "./admin/AdminEvents";
import { AdminExposure } from "./admin/AdminExposure";
import { AdminMemberExposure } from "./admin/AdminMemberExposure";
import { AdminGaps } from "./admin/AdminGaps";
import { SESSION_ENDED, UNAVAILABLE, UNREACHABLE } from "./chat/problems";
import { NavLink } from "./components/NavLink";
import { ChatPage } from "./member/ChatPage";
import { useRoute, type Route } from "./router";

type MeState =
  { status: "loading" } | { status: "ready"; me: Me } | { status: "error"; message: string };

export function App(): ReactNode {
  const [token, setToken] = useState<string | null>(() => loadToken());
  const [signInError, setSignInError] = useState<string | null>(null);
  const [meState, setMeState] = useState<MeState>({ status: "loading" });
  const [meAttempt, setMeAttempt] = useState(0);
  const route = useRoute();
  const client = useMemo(() => (token ? new ApiClient(token) : null), [token]);

  const signOut = useCallback((message: string | null = null) => {
    clearToken();
    setToken(null);
    setSignInError(message);
  }, []);

  useEffect(() => {
    if (!client) return;
    let live = true;
    setMeState({ status: "loading" });
    client.me().then(
      (me) => live && setMeState({ status: "ready", me }),
      (err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 401) {
          signOut("That token was not accepted. Check it and try again.");
        } else {
          setMeState({
            status: "error",
            message: err instanceof ApiError ? UNAVAILABLE : UNREACHABLE,
          });
        }
      },
    );
    return () => {
      live = false;
    };
  }, [client, signOut, meAttempt]);

  // A token refused after it was accepted (revoked, user disabled): back to sign-in, saying so.
  useEffect(() => client?.onSessionEnded(() => signOut(SESSION_ENDED)), [client, signOut]);

  if (!client) {
    return (
      <SignIn
        error={signInError}
        onSubmit={(t) => {
          saveToken(t);
          setSignInError(null);
          setToken(t);
        }}
      />
    );
  }
  if (meState.status === "loading") {
    return (
      <p className="page-status" role="status">
        Signing in…
      </p>
    );
  }
  if (meState.status === "error") {
    return (
      <div className="page-status" role="alert">
        <p>{meState.message}</p>
        <button type="button" onClick={() => setMeAttempt((n) => n + 1)}>
          Retry
        </button>
        <button type="button" className="link-button" onClick={() => signOut()}>
          Sign out
        </button>
      </div>
    );
  }
  const me = meState.me;
  return (
    <div className="app">
      <header className="app-header">
        <span className="brand">citewall</span>
        <nav aria-label="Main">
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
          {me.name} <span className="role-badge">{me.role}</span>
        </span>
        <button type="button" className="link-button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main className="app-main" id="main">
        <Page route={route} client={client} me={me} />
      </main>
    </div>
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
        <NavLink to="/admin/cards" current={r === "admin-cards"}>
          Cards
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
        <NavLink
          to="/admin/exposure"
          current={r === "admin-exposure" || r === "admin-member-exposure"}
        >
          Exposure
        </NavLink>
      </li>
    </>
  );
}

function Page(props: { route: Route; client: ApiClient; me: Me }): ReactNode {
  const { route, client, me } = props;
  if (route.name === "chat") {
    return <ChatPage client={client} conversationId={route.conversationId} role={me.role} />;
  }
  if (route.name === "not-found") {
    return <p role="alert">There is no page here.</p>;
  }
  if (me.role !== "admin") {
    return <p role="alert">This page is for administrators.</p>;
  }
  switch (route.name) {
    case "admin-conversations":
      return <AdminConversations client={client} />;
    case "admin-conversation":
      return <AdminConversationView client={client} id={route.id} />;
    case "admin-cards":
      return <AdminCards client={client} />;
    case "admin-analytics":
      return <AdminAnalytics client={client} />;
    case "admin-events":
      return <AdminEvents client={client} />;
    case "admin-gaps":
      return <AdminGaps client={client} />;
    case "admin-exposure":
      return <AdminExposure client={client} />;
    case "admin-member-exposure":
      return <AdminMemberExposure client={client} userId={route.userId} />;
  }
}
