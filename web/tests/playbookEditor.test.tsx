// @vitest-environment happy-dom
/**
 * The playbook editor's refusals and confirmations: each field's problem once, beside its
 * field, in plain words after the field's name, styled as an error; Roll back, Disable and
 * Enable asked about in the page first; an older version readable before rolling back to it;
 * the preview's refusal in plain words, and no answer left from an earlier request.
 */
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { ServeControl } from "../src/admin/AdminCard";
import { PlaybookEditor } from "../src/admin/AdminPlaybooks";
import { AdminPreview } from "../src/admin/AdminPreview";
import { namedProblem, plainProblem } from "../src/admin/plainProblem";
import { ApiClient, ApiError } from "../src/api/client";
import type { Card, PlaybookPublic } from "../src/api/types";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let host: HTMLDivElement;
let root: Root;

beforeEach(() => {
  host = document.createElement("div");
  document.body.append(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  vi.unstubAllGlobals();
});

function button(name: string): HTMLButtonElement {
  const found = [...host.querySelectorAll("button")].find((b) => b.textContent === name);
  if (!found) throw new Error(`no button ${name}: ${host.innerHTML}`);
  return found;
}

function typeInto(el: HTMLInputElement, value: string): void {
  // React tracks the value it set: set it the way typing does, then announce the input.
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set?.call(el, value);
  el.dispatchEvent(new Event("input", { bubbles: true }));
}

const current: PlaybookPublic = {
  id: "pb-x",
  version: 2,
  title: "Refund exceptions",
  body: "Current **steps**.",
  reply: null,
  audiences: [],
  saved_by: "ada",
  saved_at: "2026-11-30T12:00:00Z",
  restored_from: null,
  disabled: false,
  in_catalogue: true,
};

const REFUSED = {
  id: "String should match pattern '^[a-z0-9][a-z0-9._-]*$' (got 'Bad Id!')",
  title: "String should have at least 1 character (got '')",
  audiences:
    "Value error, 'Enterprise' is not a group name: use lower-case letters, digits, '-' and " +
    "'_' (at most 64, starting with a letter or digit) (got ['Enterprise', 'Plan'])",
};

describe("a field's problem in plain words", () => {
  it("drops the validator's prefix and echo, and says its rules as words", () => {
    expect(plainProblem(REFUSED.title)).toBe("required");
    expect(plainProblem(REFUSED.id)).toBe(
      "use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit",
    );
    expect(plainProblem(REFUSED.audiences)).toBe(
      "'Enterprise' is not a group name: use lower-case letters, digits, '-' and '_' (at most " +
        "64, starting with a letter or digit)",
    );
    expect(plainProblem("String should have at most 200 characters")).toBe(
      "too long: at most 200 characters",
    );
    expect(namedProblem("Title", REFUSED.title)).toBe("Title: required.");
  });
});

describe("the playbook editor", () => {
  it("shows each refused field's problem once, beside it, as an error", async () => {
    const refusal = new ApiError(422, Object.values(REFUSED).join("; "), null, REFUSED);
    act(() =>
      root.render(
        <PlaybookEditor
          current={null}
          versions={[]}
          onSave={() => Promise.reject(refusal)}
          onRollback={() => Promise.resolve()}
        />,
      ),
    );
    await act(async () => {
      host.querySelector("form")!.requestSubmit();
      await Promise.resolve();
    });
    const problems = [...host.querySelectorAll(".field-problem")];
    expect(problems.map((p) => p.textContent)).toEqual([
      "Id: use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit.",
      "Title: required.",
      expect.stringMatching(/^Groups: 'Enterprise' is not a group name/),
    ]);
    for (const p of problems) {
      expect(p.getAttribute("role")).toBe("alert");
      expect(p.classList.contains("error")).toBe(true);
    }
    const message = host.querySelector('[data-testid="playbook-message"]')!;
    expect(message.textContent).toBe("Not saved: see the problems marked above.");
    expect(host.textContent).not.toContain("String should");
    expect(host.textContent).not.toContain("(got");
  });

  it("lets the admin read an older version, and asks before rolling back to it", async () => {
    const onRollback = vi.fn(() => Promise.resolve());
    const older = { ...current, version: 1, body: "Older **text**.", title: "Old title" };
    act(() =>
      root.render(
        <PlaybookEditor
          current={current}
          versions={[current, older]}
          onSave={() => Promise.resolve(current)}
          onRollback={onRollback}
        />,
      ),
    );
    act(() => button("Read version 1").click());
    const shown = host.querySelector('[data-testid="playbook-version"]')!;
    expect(shown.innerHTML).toContain("Older <strong>text</strong>.");
    expect(shown.textContent).toContain("Old title");

    act(() => button("Roll back to version 1").click());
    expect(onRollback).not.toHaveBeenCalled();
    expect(host.textContent).toContain(
      "Roll back to version 1? Its text is saved as a new version.",
    );
    expect(document.activeElement?.textContent).toBe("Roll back");
    act(() => button("Cancel").click());
    expect(onRollback).not.toHaveBeenCalled();
    expect(document.activeElement?.textContent).toBe("Roll back to version 1");

    act(() => button("Roll back to version 1").click());
    await act(async () => {
      button("Roll back").click();
      await Promise.resolve();
    });
    expect(onRollback).toHaveBeenCalledWith(1);
  });
});

describe("Disable and Enable on the card page", () => {
  it("ask first, in the page", async () => {
    const card: Card = { id: "pb-x", title: "X", external: false, metadata: {} };
    const onChange = vi.fn(() => Promise.resolve(card));
    act(() => root.render(<ServeControl card={card} onChange={onChange} onChanged={vi.fn()} />));
    act(() => button("Disable").click());
    expect(onChange).not.toHaveBeenCalled();
    expect(host.textContent).toContain("Disable this card?");
    await act(async () => {
      host.querySelector<HTMLButtonElement>(".confirm .danger-button")!.click();
      await Promise.resolve();
    });
    expect(onChange).toHaveBeenCalledWith(false);
  });
});

describe("the admin preview", () => {
  it("says a refused group in plain words and drops the earlier answer", async () => {
    const replies = [
      new Response(JSON.stringify({ answer: "Refunds take five days.", groups: [], sources: [] }), {
        status: 200,
        headers: { "Content-Type": "application/json" },
      }),
      new Response(
        JSON.stringify({
          detail: [{ loc: ["body", "groups"], msg: REFUSED.audiences, type: "value_error" }],
        }),
        { status: 422, headers: { "Content-Type": "application/json" } },
      ),
    ];
    vi.stubGlobal(
      "fetch",
      vi.fn(() => Promise.resolve(replies.shift()!)),
    );
    act(() => root.render(<AdminPreview client={new ApiClient("t")} />));
    const [question, groups] = [...host.querySelectorAll("input")];
    act(() => typeInto(question!, "How long do refunds take?"));
    await act(async () => {
      host.querySelector("form")!.requestSubmit();
      await new Promise((r) => setTimeout(r, 0));
    });
    await vi.waitFor(() => expect(host.textContent).toContain("Refunds take five days."));

    act(() => typeInto(groups!, "Enterprise Plan"));
    await act(async () => {
      host.querySelector("form")!.requestSubmit();
      await new Promise((r) => setTimeout(r, 0));
    });
    const problem = await vi.waitFor(() => {
      const p = host.querySelector('[data-testid="preview-problem"]');
      expect(p).not.toBeNull();
      return p!;
    });
    expect(problem.textContent).toMatch(/^Groups: 'Enterprise' is not a group name/);
    expect(problem.textContent).not.toContain("Value error");
    expect(problem.classList.contains("error")).toBe(true);
    expect(host.querySelector('[data-testid="preview-answer"]')).toBeNull();
  });
});
