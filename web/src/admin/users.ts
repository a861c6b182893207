/** How an admin page names a user: by name, or by id when the name is empty. */
export function userName(user: { user_id: string; user_name: string }): string {
  return user.user_name || `user ${user.user_id}`;
}
