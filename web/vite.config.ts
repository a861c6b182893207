/// <reference types="vitest/config" />
// Builds the SPA into ../citewall/web_dist, which FastAPI serves at "/". The output must work
// under the API's strict CSP: no inline scripts or styles, so module preloading is done with
// plain <link> tags and the CSS goes to a file.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "../citewall/web_dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    // The URL gate is an entry of its own: the app imports it from assets/safe-url-<hash>.js,
    // whose exports keep their names, so the browser tests can run the URL-safety corpus in
    // Chromium against exactly the code the app runs.
    rolldownOptions: {
      input: { index: "index.html", "safe-url": "src/security/safeUrl.ts" },
      preserveEntrySignatures: "exports-only",
    },
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:8000" },
  },
  test: {
    include: ["tests/**/*.test.ts", "tests/**/*.test.tsx"],
    environment: "node",
  },
});
