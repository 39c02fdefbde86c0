// The package's public entry points, derived from src/: `presa-mcp` (src/index.ts),
// `presa-mcp/<Module>` for every other src/*.ts and `presa-mcp/transport/<Module>` for
// src/transport/*.ts, each to dist/ (`types` + `default`, ESM). `./internal/*` stays blocked.
// One explicit entry per module (no `./*` pattern) so that a misspelt subpath fails with
// ERR_PACKAGE_PATH_NOT_EXPORTED and `attw` checks every entry point. src/bin.ts is the command
// line (package.json `bin`), a program that runs when loaded: not an entry point to import.
//
//   node scripts/exports.mjs          rewrites `exports` and `typesVersions` in package.json
//   node scripts/exports.mjs --check  exits 1 when package.json differs from what src/ implies
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const modules = (dir) =>
  readdirSync(`${root}src/${dir}`, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") && e.name !== "index.ts" && !(dir === "" && e.name === "bin.ts"))
    .map((e) => `${dir === "" ? "" : `${dir}/`}${e.name.slice(0, -3)}`)
    .sort()

const subpaths = [...modules(""), ...modules("transport")]
const entry = (name) => ({ types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` })

const exportsMap = {
  ".": entry("index"),
  "./package.json": "./package.json",
  ...Object.fromEntries(subpaths.map((p) => [`./${p}`, entry(p)])),
  "./internal/*": null
}
// `moduleResolution: node10` ignores `exports`: it finds subpaths through typesVersions.
const typesVersions = { "*": Object.fromEntries(subpaths.map((p) => [p, [`./dist/${p}.d.ts`]])) }

const file = `${root}package.json`
const text = readFileSync(file, "utf8")
const pkg = JSON.parse(text)
const next = { ...pkg, exports: exportsMap, typesVersions }
const same = JSON.stringify(pkg.exports) === JSON.stringify(exportsMap) &&
  JSON.stringify(pkg.typesVersions) === JSON.stringify(typesVersions)

if (process.argv.includes("--check")) {
  if (!same) {
    console.error("package.json `exports`/`typesVersions` do not match src/: run `node scripts/exports.mjs`")
    process.exit(1)
  }
  console.log(`exports: ${subpaths.length + 1} entry points match src/`)
} else if (!same) {
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`)
  console.log(`package.json: ${subpaths.length + 1} entry points written`)
}
