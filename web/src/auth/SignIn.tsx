/** The sign-in form: paste the bearer token that `citewall users add` printed. */
import { useState, type FormEvent, type ReactNode } from "react";

import { useDocumentTitle } from "../shell/title";

export function SignIn(props: {
  error: string | null;
  onSubmit: (token: string) => void;
}): ReactNode {
  const [token, setToken] = useState("");
  useDocumentTitle("Sign in");
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    if (token.trim()) props.onSubmit(token.trim());
  };
  return (
    <main className="sign-in">
      <h1>citewall</h1>
      <p>Answers from your knowledge base, with sources you can check.</p>
      <form onSubmit={submit} aria-describedby={props.error ? "sign-in-error" : undefined}>
        <label htmlFor="token">Access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          // The only thing to do on this page; after a sign-out focus starts here.
          autoFocus
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
        />
        <button type="submit">Sign in</button>
        {props.error && (
          <p id="sign-in-error" className="error" role="alert">
            {props.error}
          </p>
        )}
      </form>
    </main>
  );
}
