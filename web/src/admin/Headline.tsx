/**
 * The admin overview's headline numbers for a look-back window: questions asked, the share of
 * answers that said "not found", and the share rated "Not helpful". Small talk ("hi", "thanks")
 * is no question: the server counts it apart, and it is shown apart.
 */
import { useState, type ReactNode } from "react";

import type { ApiClient } from "../api/client";
import type { HeadlineNumbers } from "../api/types";
import { LoadState } from "../components/LoadState";
import { LookbackSelect, sinceFor, type Lookback } from "../components/LookbackSelect";
import { formatRate } from "../components/format";
import { useLoad } from "../components/useLoad";

export function Headline(props: { client: ApiClient }): ReactNode {
  const [lookback, setLookback] = useState<Lookback>("week");
  const state = useLoad(
    () => props.client.headline({ since: sinceFor(lookback) }),
    [props.client, lookback],
  );
  return (
    <section aria-labelledby="headline-heading">
      <h2 id="headline-heading">At a glance</h2>
      <div className="filters">
        <LookbackSelect
          id="headline-window"
          label="Window"
          value={lookback}
          onChange={setLookback}
        />
      </div>
      <LoadState state={state} what="headline numbers">
        {(numbers) => <HeadlineView numbers={numbers} />}
      </LoadState>
    </section>
  );
}

export function HeadlineView(props: { numbers: HeadlineNumbers }): ReactNode {
  const n = props.numbers;
  const of = (count: number): string => `${count} of ${n.answers} answers`;
  return (
    <dl className="headline">
      <div>
        <dt>Questions</dt>
        <dd data-testid="headline-questions">
          {n.questions}
          {n.small_talk > 0 && (
            <>
              {" "}
              <span className="muted" data-testid="headline-small-talk">
                (and {n.small_talk} small talk: greetings and thanks)
              </span>
            </>
          )}
        </dd>
      </div>
      <div>
        <dt>Not found</dt>
        <dd data-testid="headline-not-found">
          {formatRate(n.not_found_rate)} <span className="muted">({of(n.not_found)})</span>
        </dd>
      </div>
      <div>
        <dt>Rated “Not helpful”</dt>
        <dd data-testid="headline-rated-down">
          {formatRate(n.rated_down_rate)} <span className="muted">({of(n.rated_down)})</span>
        </dd>
      </div>
    </dl>
  );
}
