/**
 * Part of `npm run build`: bundles the command line (`dist/bin.js`, compiled by tsc) into one file
 * in its place, with its dependencies (effect, @effect/cli, the platform packages, …) inside, so
 * that `presa-mcp` starts without resolving ~700 modules: a host that launches
 * `presa-mcp proxy …` as a stdio server gets its first answer sooner (docs/getting-started.md, "Start time").
 * The bin is a program, not a module to import, so its own copy of effect meets no other.
 * `require` is provided for the CommonJS dependencies that load Node built-ins (ws).
 */
import { build } from "esbuild"
import { rmSync } from "node:fs"

await build({
  entryPoints: ["dist/bin.js"],
  outfile: "dist/bin.js",
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // optional peers the command line never loads; esbuild: `presa-mcp app` bundles its page with
  // it only in a checkout (the package ships dist/app-page.js, built below)
  external: ["ioredis", "esbuild"],
  banner: {
    js: "import { createRequire as presaCreateRequire } from \"node:module\"\n" +
      "const require = presaCreateRequire(import.meta.url)"
  },
  legalComments: "eof",
  logLevel: "warning"
})
// tsc's map described the unbundled file
rmSync("dist/bin.js.map", { force: true })

// The page of `presa-mcp app` (the MCP Apps dev host): its script, with the host bridge
// (AppHost) and effect inside, for the browser. The bin reads it from beside itself.
await build({
  entryPoints: ["dist/internal/cli/appPage.js"],
  outfile: "dist/app-page.js",
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "warning"
})
