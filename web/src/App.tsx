/**
 * The app: sign-in, who am I, then the shell (skip link, header, the page for the route).
 * Admin pages are offered only to the admin role (the API enforces it regardless).
 */
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";

import { ApiClient, ApiError } from "./api/client";
import type { Me } from "./api/types";
import { clearToken, loadToken, saveToken } from "./auth/session";
import { SignIn } from "./auth/SignIn";
import { AdminAnalytics } from "./admin/AdminAnalytics";
import { AdminCard } from "./admin/AdminCard";
import { AdminCards } from "./admin/AdminCards";
import { AdminConversationView } from "./admin/AdminConversationView";
import { AdminConversations } from "./admin/AdminConversations";
import { AdminEvents } from "./admin/AdminEvents";
import { AdminExposure } from "./admin/AdminExposure";
import { AdminMemberExposure } from "./admin/AdminMemberExposure";
import { AdminGaps } from "./admin/AdminGaps";
import { navigate, useRoute, type Route } from "./router";
import { ChatLayout } from "./shell/ChatLayout";
import { focusStart, MAIN_ID } from "./shell/focus";
import { Header } from "./shell/Header";
import { SkipLink } from "./shell/SkipLink";
import { routePageName, useDocumentTitle } from "./shell/title";
import { useDrawer } from "./shell/useDrawer";
import { SESSION_ENDED, UNAVAILABLE, UNREACHABLE } from "./chat/problems";

type MeState =
  { status: "loading" } | { status: "ready"; me: Me } | { status: "error"; message: string };

export function App(): ReactNode {
  const [token, setToken] = useState<string | null>(() => loadToken());
  const [signInError, setSignInError] = useState<string | null>(null);
  const [meAttempt, setMeAttempt] = useState(0);
  const route = useRoute();
  const client = useMemo(() => (token ? new ApiClient(token) : null), [token]);
  // Who the current client's token belongs to; loading until its answer arrives.
  const [answer, setAnswer] = useState<{ client: ApiClient; state: MeState } | null>(null);
  const meState: MeState =
    answer && answer.client === client ? answer.state : { status: "loading" };
  // Set by the sign-in form: once signed in, focus goes to the question box (not the body).
  const focusWhenReady = useRef(false);

  const signOut = useCallback((message: string | null = null) => {
    clearToken();
    setToken(null);
    setSignInError(message);
  }, []);

  // Leaving on purpose starts the next session afresh at "/", whoever signs in next: the
  // conversation that was open is not theirs to reopen.
  const leave = useCallback(() => {
    navigate("/", true);
    signOut();
  }, [signOut]);

  useEffect(() => {
    if (!client) return;
    let live = true;
    client.me().then(
      (me) => live && setAnswer({ client, state: { status: "ready", me } }),
      (err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 401) {
          signOut("That token was not accepted. Check it and try again.");
        } else {
          const message = err instanceof ApiError ? UNAVAILABLE : UNREACHABLE;
          setAnswer({ client, state: { status: "error", message } });
        }
      },
    );
    return () => {
      live = false;
    };
  }, [client, signOut, meAttempt]);

  // A token refused after it was accepted (revoked, user disabled): back to sign-in, saying so.
  useEffect(() => client?.onSessionEnded(() => signOut(SESSION_ENDED)), [client, signOut]);

  const signedIn = meState.status === "ready";
  useEffect(() => {
    if (!signedIn || !focusWhenReady.current) return;
    focusWhenReady.current = false;
    focusStart();
  }, [signedIn]);

  if (!client) {
    return (
      <SignIn
        error={signInError}
        onSubmit={(t) => {
          saveToken(t);
          setSignInError(null);
          focusWhenReady.current = true;
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
        <button type="button" className="link-button" onClick={leave}>
          Sign out
        </button>
      </div>
    );
  }
  return <SignedIn me={meState.me} client={client} route={route} onSignOut={leave} />;
}

function SignedIn(props: {
  me: Me;
  client: ApiClient;
  route: Route;
  onSignOut: () => void;
}): ReactNode {
  const { me, client, route } = props;
  const drawer = useDrawer();
  const chat = route.name === "chat";
  // The chat page names the tab after its conversation; the shell names every other page.
  useDocumentTitle(chat ? undefined : routePageName(route, me.role === "admin"));
  return (
    <div className="app">
      <SkipLink to={chat ? "question" : "main"} inert={drawer.open} />
      <Header me={me} route={route} drawer={chat ? drawer : null} onSignOut={props.onSignOut} />
      {route.name === "chat" ? (
        <ChatLayout
          client={client}
          conversationId={route.conversationId}
          drawer={drawer}
          role={me.role}
        />
      ) : (
        <main className="app-main" id={MAIN_ID} tabIndex={-1}>
          <Page route={route} client={client} me={me} />
        </main>
      )}
    </div>
  );
}

function Page(props: {
  route: Exclude<Route, { name: "chat" }>;
  client: ApiClient;
  me: Me;
}): ReactNode {
  const { route, client, me } = props;
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
    case "admin-card":
      return <AdminCard client={client} id={route.id} />;
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
