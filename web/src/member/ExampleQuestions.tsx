/**
 * Example questions on an empty conversation (from the server's settings, never from the
 * knowledge base's internal cards). Choosing one asks it. When there are none, or they cannot
 * be read, the page just invites a question.
 */
import { useEffect, useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";

export function ExampleQuestions(props: {
  client: ApiClient;
  onAsk: (question: string) => void;
}): ReactNode {
  const { client } = props;
  const [questions, setQuestions] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    client.examples().then(
      (examples) => live && setQuestions(examples.questions.filter((q) => q.trim() !== "")),
      // Examples are a convenience: without them the page still invites a question.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [client]);

  return (
    <div className="examples">
      <p className="empty-hint">Ask a question about the knowledge base to start.</p>
      {questions.length > 0 && (
        <section aria-labelledby="examples-heading">
          <h2 id="examples-heading" className="examples-heading">
            Try asking
          </h2>
          <ul className="example-list">
            {questions.map((q, i) => (
              <li key={`${i}-${q}`}>
                <button type="button" className="example-question" onClick={() => props.onAsk(q)}>
                  {q}
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
