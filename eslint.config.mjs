// ESLint: the JavaScript and TypeScript recommended rules, and Effect's rule that keeps imports off barrel
// packages. Floating Effects, wrong `yield*` and untagged failures are the language service's
// (`effect-language-service diagnostics`, run beside this by `npm run lint`).
import js from "@eslint/js"
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/**", "data/**", "node_modules/**", "**/*.mjs", "**/*.cjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore names what a signature or a destructuring must hold but the body does not use.
      // A variable a closure reads before its one assignment (a timer its own teardown clears) stays `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true }
      ]
    }
  },
  {
    // Tests and benchmarks read responses as the raw JSON a client receives, malformed ones included; the typed
    // client is for what is valid.
    files: ["test/**", "scripts/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  },
  {
    plugins: { "@effect": effect },
    rules: {
      "@effect/no-import-from-barrel-package": ["error", { packageNames: ["effect", "@effect/platform", "@effect/sql"] }]
    }
  }
)
