/**
 * Not a server: the floor of the memory rows. It loads `effect/Schema` (which every presa-mcp
 * server needs: wire decoding, tool parameters), writes one line `ready` and waits for stdin to end.
 * Its RSS is what any Effect-based server starts from before a module of its own is loaded.
 * `node --import tsx bench/servers/schema-only.ts`.
 */
import * as Schema from "effect/Schema"

// use the module, so no bundler or loader can drop the import
process.stdout.write(Schema.is(Schema.String)("ready") ? "ready\n" : "not ready\n")
process.stdin.resume()
process.stdin.on("end", () => process.exit(0))
