import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/generated/**",
      "**/node_modules/**",
      "**/.turbo/**",
      "docs/dist/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": ["error", { allow: ["warn", "error"] }],
    },
  },
  {
    // The benches are Node programs whose output is their result.
    files: ["bench/**/*.mjs"],
    languageOptions: {
      globals: Object.fromEntries(
        [
          "Buffer",
          "URL",
          "clearTimeout",
          "console",
          "fetch",
          "performance",
          "process",
          "setTimeout",
        ].map((name) => [name, "readonly"]),
      ),
    },
    rules: { "no-console": "off" },
  },
);
