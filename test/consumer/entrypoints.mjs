// Imports every entry point of the installed package's `exports` map with plain `node` and checks
// that `presa-mcp/internal/*` (and an unlisted subpath) are refused. Prints one line per subpath.
// The project does not install the optional peer @effect/ai: every entry point but
// `presa-mcp/AiToolkit` loads without it, and that one fails naming it.
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const pkg = require("presa-mcp/package.json")
let failures = 0
for (const key of Object.keys(pkg.exports)) {
  if (key === "./package.json" || key.includes("*")) continue
  const specifier = key === "." ? "presa-mcp" : `presa-mcp/${key.slice(2)}`
  if (specifier === "presa-mcp/AiToolkit") {
    // The @effect/ai bridge needs its optional peer, which this project does not install: it must
    // fail to load naming @effect/ai (and every other entry point above and below loads without it).
    try {
      await import(specifier)
      failures++
      console.log(`FAIL ${specifier} loaded without @effect/ai installed`)
    } catch (error) {
      const ok = error.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("@effect/ai")
      if (!ok) failures++
      console.log(`${ok ? "ok" : "FAIL"} ${specifier} needs @effect/ai: ${error.code}`)
    }
    continue
  }
  try {
    const mod = await import(specifier)
    const names = Object.keys(mod)
    if (names.length === 0) throw new Error("no exports")
    console.log(`ok ${specifier} (${names.length} exports)`)
  } catch (error) {
    failures++
    console.log(`FAIL ${specifier}: ${error}`)
  }
}
for (const specifier of ["presa-mcp/internal/client/connect", "presa-mcp/internal/client/connect.js", "presa-mcp/Nope"]) {
  try {
    await import(specifier)
    failures++
    console.log(`FAIL ${specifier} resolved; it must not`)
  } catch (error) {
    const ok = error.code === "ERR_PACKAGE_PATH_NOT_EXPORTED"
    if (!ok) failures++
    console.log(`${ok ? "ok" : "FAIL"} ${specifier} refused: ${error.code}`)
  }
}
process.exitCode = failures === 0 ? 0 : 1
