/**
 * The signed-in token lives in sessionStorage: it survives a reload of the tab but not the
 * tab itself, and it is never put in a cookie (the API uses bearer tokens only).
 */
const KEY = "citewall.token";

export function loadToken(): string | null {
  try {
    const token = window.sessionStorage.getItem(KEY);
    return token && token.trim() ? token : null;
  } catch {
    return null;
  }
}

export function saveToken(token: string): void {
  window.sessionStorage.setItem(KEY, token.trim());
}

export function clearToken(): void {
  window.sessionStorage.removeItem(KEY);
}
