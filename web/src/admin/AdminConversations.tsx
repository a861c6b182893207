/** Every member's conversations (admin), newest first. */
import type { ReactNode } from "react";

import type { ApiClient } from "../api/client";
import { LoadState } from "../components/LoadState";
import { NavLink } from "../components/NavLink";
import { formatDate } from "../components/format";
import { useLoad } from "../components/useLoad";

export function AdminConversations(props: { client: ApiClient }): ReactNode {
  const state = useLoad(() => props.client.adminConversations(), [props.client]);
  return (
    <section className="admin-page">
      <h1>Conversations</h1>
      <LoadState state={state} what="conversations">
        {(items) =>
          items.length === 0 ? (
            <p className="muted">No conversations yet.</p>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Title</th>
                    <th scope="col">User</th>
                    <th scope="col">Messages</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {[...items]
                    .sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1))
                    .map((c) => (
                      <tr key={c.id}>
                        <td>
                          <NavLink to={`/admin/conversations/${encodeURIComponent(c.id)}`}>
                            {c.title || "Untitled"}
                          </NavLink>
                        </td>
                        <td>
                          <code>{c.user_id}</code>
                        </td>
                        <td className="num">{c.message_count}</td>
                        <td>{formatDate(c.updated_at)}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          )
        }
      </LoadState>
    </section>
  );
}
