/** One saved version of a playbook as it was: what an admin reads before rolling back to it. */
import type { ReactNode } from "react";

import type { PlaybookVersionPublic } from "../api/types";
import { formatDate } from "../components/format";
import { SafeMarkdown } from "../markdown/SafeMarkdown";

export function PlaybookVersionText(props: {
  version: PlaybookVersionPublic;
  onClose: () => void;
}): ReactNode {
  const v = props.version;
  return (
    <section
      className="card-body playbook-version"
      aria-label={`Version ${v.version}`}
      data-testid="playbook-version"
    >
      <h3>
        Version {v.version}: {v.title}
      </h3>
      <p className="muted">
        Saved {formatDate(v.saved_at ?? null)} by {v.saved_by}. Groups:{" "}
        {v.audiences.length ? v.audiences.join(", ") : "none (every member)"}.
      </p>
      <SafeMarkdown source={v.body} stripCitationMarkers={false} />
      {v.reply && (
        <>
          <h4>Tell the member</h4>
          <p className="card-reply">{v.reply}</p>
        </>
      )}
      <button type="button" className="quiet-button" onClick={props.onClose}>
        Close version {v.version}
      </button>
    </section>
  );
}
