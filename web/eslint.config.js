// Lint for the web UI: typescript-eslint's type-aware recommended rules and React's hooks rules
// (the rules of hooks, exhaustive effect dependencies and the React Compiler's checks).
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  { ignores: ["node_modules/"] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  reactHooks.configs.flat["recommended-latest"],
  {
    files: ["src/**", "tests/**", "vite.config.ts"],
    languageOptions: {
      globals: { ...globals.browser },
      parserOptions: { project: ["./tsconfig.test.json"], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // useLoad(load, deps) is checked like useEffect(effect, deps).
      "react-hooks/exhaustive-deps": ["error", { additionalHooks: "^useLoad$" }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
    },
  },
  {
    files: ["tests/**", "vite.config.ts", "eslint.config.js"],
    languageOptions: { globals: { ...globals.node } },
  },
  { files: ["eslint.config.js"], extends: [tseslint.configs.disableTypeChecked] },
  // The embed loader: a plain browser script served as is (no build, no types).
  {
    files: ["public/**/*.js"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.browser }, sourceType: "script" },
  },
);
