/**
 * Where keyboard focus goes when the shell moves it: the chat page's question box when it can
 * take input, else the page's main region. Both are found by id: the question box belongs to
 * the chat page, the main region to the shell.
 */

/** The id of the chat page's question box (its `<textarea>`). */
export const QUESTION_ID = "question";
/** The id of the page's `<main>` (focusable with `tabIndex={-1}`, the skip link's target). */
export const MAIN_ID = "main";

/** Focus the question box if it is on the page and enabled; report whether it was. */
export function focusQuestion(): boolean {
  const box = document.getElementById(QUESTION_ID);
  if (!(box instanceof HTMLTextAreaElement || box instanceof HTMLInputElement) || box.disabled)
    return false;
  box.focus();
  return true;
}

/** Focus the question box, or else the main region. */
export function focusStart(): void {
  if (!focusQuestion()) document.getElementById(MAIN_ID)?.focus();
}
