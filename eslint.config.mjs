// ESLint flat config modelled on the Effect repositories: typescript-eslint + @effect/eslint-plugin
// (dprint formatting rule with Effect's settings).
import effectPlugin from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/**", "conformance/node_modules/**", "bench/out/**", "**/*.mjs"] },
  ...tseslint.configs.recommended,
  {
    plugins: { "@effect": effectPlugin },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-imports": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "no-console": "error"
    }
  },
  {
    // Node-only code lives in src/transport/ (the Node entry points) and src/internal/node/; the
    // rest of src/ is platform-neutral: no Node imports and no Node globals (src/internal/runtime.ts
    // reaches Node's fast paths through globalThis, with standard fallbacks). src/bin.ts, the
    // command line's entry point, is the Node edge of src/internal/cli/ (which stays neutral): it
    // alone hands the process's streams, terminal and runtime to it.
    files: ["src/**/*.ts"],
    ignores: ["src/transport/**", "src/internal/node/**", "src/bin.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{ group: ["node:*", "@effect/platform-node", "@effect/platform-node/*"], message: "Node APIs belong in src/transport/ and src/internal/node/ only." }]
      }],
      "no-restricted-globals": ["error",
        ...["process", "Buffer", "global", "require", "module", "__dirname", "__filename", "setImmediate", "clearImmediate"].map((name) => ({ name, message: "Node globals belong in src/transport/ and src/internal/node/ only (timers and fast paths: src/internal/runtime.ts)." }))
      ]
    }
  },
  {
    // One concept per function: the closures that grew past this became state records plus module
    // functions (issue #33, point 4); the limit keeps it so.
    files: ["src/**/*.ts"],
    rules: {
      "max-lines-per-function": ["error", { max: 150, skipBlankLines: true, skipComments: true, IIFEs: true }]
    }
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "examples/**/*.ts", "bin/**/*.ts", "conformance/**/*.ts"],
    rules: { "no-console": "off" }
  }
)
