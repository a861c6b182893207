/**
 * The app: sign-in, who am I, then the shell (skip link, header, the page for the route).
 * Admin pages are offered only to the admin role (the API enforces it regardless).
 *
 * Without a stored token the app first asks who it is with no token at all: behind an
 * identity-aware proxy the proxy has signed the user in (its assertion rides on every request),
 * so there is no sign-in form and no sign-out (the proxy owns the session). Anywhere else the
 * answer is a 401 and the sign-in form shows.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";

import { ApiClient, ApiError } from "./api/client";
import type { Me } from "./api/types";
import { clearToken, loadToken, saveToken } from "./auth/session";
import { SignIn } from "./auth/SignIn";
import { AdminAnalytics } from "./admin/AdminAnalytics";
import { AdminCard } from "./admin/AdminCard";
import { AdminCards } from "./admin/AdminCards";
import { AdminPlaybooks, PlaybookPage } from "./admin/AdminPlaybooks";
import { AdminConversationView } from "./admin/AdminConversationView";
import { AdminConversations } from "./admin/AdminConversations";
import { AdminEvents } from "./admin/AdminEvents";
import { AdminAudit } from "./admin/AdminAudit";
import { AdminExposure } from "./admin/AdminExposure";
import { AdminMemberExposure } from "./admin/AdminMemberExposure";
import { AdminPreview } from "./admin/AdminPreview";
import { AdminGaps } from "./admin/AdminGaps";
import { AdminHandoffs } from "./admin/AdminHandoffs";
import { AdminResolution } from "./admin/AdminResolution";
import { AdminSources } from "./admin/AdminSources";
import { navigate, useRoute, type Route } from "./router";
import { ChatLayout } from "./shell/ChatLayout";
import { focusStart, MAIN_ID } from "./shell/focus";
import { Header } from "./shell/Header";
import { SkipLink } from "./shell/SkipLink";
import { routePageName, useDocumentTitle } from "./shell/title";
import { useDrawer } from "./shell/useDrawer";
import { SESSION_ENDED, signInProblem } from "./chat/problems";

type MeState =
  { status: "loading" } | { status: "ready"; me: Me } | { status: "error"; message: string };

/** Who vouches for the requests: a bearer token (kept in sessionStorage), the identity-aware
 * proxy (no token), or nobody yet (the sign-in form shows). */
type Credential = { kind: "token"; token: string } | { kind: "proxy" } | { kind: "none" };

function storedCredential(): Credential {
  const token = loadToken();
  return token ? { kind: "token", token } : { kind: "proxy" };
}

export function App(): ReactNode {
  const [credential, setCredential] = useState<Credential>(storedCredential);
  const [signInError, setSignInError] = useState<string | null>(null);
  const [meAttempt, setMeAttempt] = useState(0);
  const route = useRoute();
  const client = useMemo(
    () =>
      credential.kind === "none"
        ? null
        : new ApiClient(credential.kind === "token" ? credential.token : null),
    [credential],
  );
  const byProxy = credential.kind === "proxy";
  // Who the current client's token belongs to; loading until its answer arrives.
  const [answer, setAnswer] = useState<{ client: ApiClient; state: MeState } | null>(null);
  const meState: MeState =
    answer && answer.client === client ? answer.state : { status: "loading" };
  // Set by the sign-in form: once signed in, focus goes to the question box (not the body).
  const focusWhenReady = useRef(false);

  const signOut = useCallback((message: string | null = null) => {
    clearToken();
    setCredential({ kind: "none" });
    setSignInError(message);
  }, []);

  // Leaving on purpose starts the next session afresh at "/", whoever signs in next: the
  // conversation that was open is not theirs to reopen. A session token is revoked on the way
  // out; an API token is not a session (the server would refuse with 400), so it is only
  // forgotten. `/me` says which one the page holds.
  const holdsSession = meState.status === "ready" && meState.me.session;
  const leave = useCallback(() => {
    if (holdsSession) void client?.endSession().catch(() => undefined);
    navigate("/", true);
    signOut();
  }, [client, holdsSession, signOut]);

  useEffect(() => {
    if (!client) return;
    let live = true;
    client.me().then(
      (me) => live && setAnswer({ client, state: { status: "ready", me } }),
      (err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 401) {
          // No proxy signed the user in: the sign-in form, with nothing to apologise for.
          signOut(byProxy ? null : "That token was not accepted. Check it and try again.");
        } else {
          setAnswer({ client, state: { status: "error", message: signInProblem(err) } });
        }
      },
    );
    return () => {
      live = false;
    };
  }, [client, byProxy, signOut, meAttempt]);

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
          setCredential({ kind: "token", token: t });
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
        {!byProxy && (
          <button type="button" className="link-button" onClick={leave}>
            Sign out
          </button>
        )}
      </div>
    );
  }
  return (
    <SignedIn me={meState.me} client={client} route={route} onSignOut={byProxy ? null : leave} />
  );
}

function SignedIn(props: {
  me: Me;
  client: ApiClient;
  route: Route;
  /** Null when the identity-aware proxy signed the user in: it owns the session. */
  onSignOut: (() => void) | null;
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
          regenerateVaries={me.regenerate_varies}
          handoff={me.handoff}
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
    case "admin-playbooks":
      return <AdminPlaybooks client={client} />;
    case "admin-playbook":
      return <PlaybookPage client={client} id={route.id} />;
    case "admin-sources":
      return <AdminSources client={client} />;
    case "admin-analytics":
      return <AdminAnalytics client={client} />;
    case "admin-events":
      return <AdminEvents client={client} />;
    case "admin-gaps":
      return <AdminGaps client={client} />;
    case "admin-handoffs":
      return <AdminHandoffs client={client} />;
    case "admin-resolution":
      return <AdminResolution client={client} />;
    case "admin-exposure":
      return <AdminExposure client={client} />;
    case "admin-member-exposure":
      return <AdminMemberExposure client={client} userId={route.userId} />;
    case "admin-audit":
      return <AdminAudit client={client} />;
    case "admin-preview":
      return <AdminPreview client={client} />;
  }
}
