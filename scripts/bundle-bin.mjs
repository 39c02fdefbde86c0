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
  // optional peers the command line never loads
  external: ["ioredis"],
  banner: {
    js: "import { createRequire as presaCreateRequire } from \"node:module\"\n" +
      "const require = presaCreateRequire(import.meta.url)"
  },
  legalComments: "eof",
  logLevel: "warning"
})
// tsc's map described the unbundled file
rmSync("dist/bin.js.map", { force: true })
