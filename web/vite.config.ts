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
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:8000" },
  },
  test: {
    include: ["tests/**/*.test.ts", "tests/**/*.test.tsx"],
    environment: "node",
  },
});
