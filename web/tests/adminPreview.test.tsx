import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";

import { PreviewAnswer, parseGroups } from "../src/admin/AdminPreview";
import type { AdminPreviewResponse } from "../src/api/types";
import { parseRoute } from "../src/router";

const answer: AdminPreviewResponse = {
  groups: ["enterprise"],
  answer: "Upload the identity provider metadata under Settings > Security.",
  answer_status: "answered",
  sources: [
    {
      card_id: "ent-sso-saml",
      title: "Single sign-on with SAML",
      url: "https://help.parcelry.example/enterprise/sso-saml",
      license: null,
      retrieved_score: null,
      excerpt: "Enterprise accounts can sign in with SAML single sign-on.",
      metadata: {},
    },
  ],
  hybrid_path: "rrf_only",
};

describe("answer as a member (admin preview)", () => {
  it("reads groups separated by commas or spaces, once each", () => {
    expect(parseGroups(" enterprise, beta  enterprise")).toEqual(["enterprise", "beta"]);
    expect(parseGroups("   ")).toEqual([]);
  });

  it("says whom it answered as, and shows the member's sources", () => {
    const html = renderToStaticMarkup(<PreviewAnswer result={answer} />);
    expect(html).toContain("As a member of enterprise:");
    expect(html).toContain('data-card-id="ent-sso-saml"');
    const none = renderToStaticMarkup(
      <PreviewAnswer result={{ ...answer, groups: [], sources: [] }} />,
    );
    expect(none).toContain("a member in no group");
    expect(none).not.toContain("Sources");
  });

  it("has its own admin page", () => {
    expect(parseRoute("/admin/preview")).toEqual({ name: "admin-preview" });
  });
});
