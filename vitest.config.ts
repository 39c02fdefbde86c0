import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = fileURLToPath(new URL("./src/", import.meta.url))

export default defineConfig({
  resolve: {
    // Tests import the package by name and run against src/ without a build, as tsc and tsx do
    // through tsconfig.json `paths`; the published `exports` map points at dist/.
    alias: [
      { find: /^presa-mcp$/, replacement: `${src}index.ts` },
      { find: /^presa-mcp\/(.+)$/, replacement: `${src}$1.ts` }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
