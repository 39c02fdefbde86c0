/**
 * esbuild bundles of the compiled bench servers, the recipe README.md gives for deploying a server
 * ("Start time: bundling a server"): `--bundle --platform=node --format=esm` and a `require` banner
 * for CommonJS dependencies that load Node built-ins. The start suite times them; the memory suite
 * measures ours bundled too.
 */
import { build } from "esbuild"
import * as path from "node:path"
import { BENCH_DIR, BUNDLE_DIR } from "./harness.js"

/** The bundle of a server script: `ours-stdio.ts` → `ours-stdio.bundle.mjs` (`serverCommand` runs it). */
export const bundleScript = (script: string): string => script.replace(/\.ts$/, ".bundle.mjs")

/** Bundles each compiled server script (bench/out/js/servers/<name>.js) into bench/out/bundle/. */
export const bundle = async (scripts: ReadonlyArray<string>): Promise<void> => {
  for (const script of scripts) {
    const name = script.replace(/\.ts$/, "")
    await build({
      entryPoints: [path.join(BENCH_DIR, "out", "js", "servers", `${name}.js`)],
      outfile: path.join(BUNDLE_DIR, `${name}.bundle.mjs`),
      bundle: true,
      platform: "node",
      format: "esm",
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      logLevel: "warning"
    })
  }
}
