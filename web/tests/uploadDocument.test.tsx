// @vitest-environment happy-dom
/**
 * Upload a document: the file read as base64 in the browser, the body the server takes, the
 * run's counts and refusals, and the form on the Playbooks page.
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { AdminPlaybooks } from "../src/admin/AdminPlaybooks";
import {
  EMPTY_UPLOAD,
  UploadRun,
  bytesToBase64,
  runSummary,
  uploadBody,
} from "../src/admin/UploadDocument";
import { ApiClient, fieldProblems } from "../src/api/client";
import type { SyncRunPublic } from "../src/api/types";

const RUN: SyncRunPublic = {
  id: 4,
  status: "failed",
  started_at: "2026-12-03T10:00:00Z",
  duration_s: 0.42,
  added: 0,
  updated: 0,
  unchanged: 0,
  removed: 0,
  refused: 1,
  refusals: [{ where: "locked.pdf", reason: "locked.pdf: the PDF is encrypted" }],
  note: "",
  stale: [],
};

describe("upload a document", () => {
  it("reads bytes as standard padded base64, also past one slice", () => {
    expect(bytesToBase64(new TextEncoder().encode("Pallet"))).toBe("UGFsbGV0");
    expect(bytesToBase64(new Uint8Array([0xff, 0xfe]))).toBe("//4=");
    const big = new Uint8Array(0x8000 * 2 + 5).map((_, i) => i % 251);
    expect(atob(bytesToBase64(big)).length).toBe(big.length);
    expect(atob(bytesToBase64(big)).charCodeAt(0x8000 + 3)).toBe((0x8000 + 3) % 251);
  });

  it("sends no url for an internal document and splits the groups", () => {
    const internal = uploadBody("a.pdf", "QQ==", {
      ...EMPTY_UPLOAD,
      url: "https://left.over/x",
      audiences: "enterprise, beta  partners",
      license: " ",
    });
    expect(internal).toEqual({
      filename: "a.pdf",
      content_base64: "QQ==",
      visibility: "internal",
      url: null,
      license: null,
      audiences: ["enterprise", "beta", "partners"],
    });
    const external = uploadBody("a.pdf", "QQ==", {
      ...EMPTY_UPLOAD,
      visibility: "external",
      url: " https://help.example.com/a ",
      license: "CC-BY-4.0",
    });
    expect(external.url).toBe("https://help.example.com/a");
    expect(external.license).toBe("CC-BY-4.0");
  });

  it("keys a refused upload's problems by field, the loader's beside the file", () => {
    const body = {
      detail: [
        {
          loc: ["body", "content_base64"],
          msg: "notes.md:5: no link (field 'reply')",
          type: "document",
        },
        { loc: ["body", "url"], msg: "unsafe url", type: "document" },
      ],
    };
    expect(fieldProblems(body)).toEqual({
      content_base64: "notes.md:5: no link (field 'reply')",
      url: "unsafe url",
    });
  });

  it("shows a run's counts and each refusal", () => {
    expect(runSummary(RUN)).toBe("0 added, 0 updated, 0 unchanged, 0 removed, 1 refused (0.4 s)");
    const html = renderToStaticMarkup(<UploadRun run={RUN} />);
    expect(html).toContain("1 refused");
    expect(html).toContain("locked.pdf: locked.pdf: the PDF is encrypted");
  });

  it("is a section of the Playbooks page with a file input", () => {
    const html = renderToStaticMarkup(<AdminPlaybooks client={new ApiClient("t")} />);
    expect(html).toContain("Upload a document");
    expect(html).toMatch(/<input type="file" accept="\.pdf,\.docx,\.html,\.htm,\.md,\.markdown"/);
    expect(html).toContain("Internal (never a source)");
  });
});
