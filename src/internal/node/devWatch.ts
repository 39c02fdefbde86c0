/**
 * The file watcher of `presa-mcp dev` (issue #40, point 3): the changes under some directories
 * (recursively, on chokidar), without `node_modules`, `.git` and `dist`, as a stream of paths.
 *
 * @internal
 */
import { watch } from "chokidar"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as path from "node:path"

const IGNORED = new Set(["node_modules", ".git", "dist"])

/** Whether a path lies in a folder the watcher leaves out. */
const ignored = (file: string): boolean => file.split(path.sep).some((part) => IGNORED.has(part))

/**
 * Every added, changed or removed file under `dirs`, by its absolute path. The stream starts once
 * the watcher has read the trees (so a change made after the first element is asked for is not
 * missed) and closes the watcher when it ends.
 *
 * @internal
 */
export const changes = (dirs: ReadonlyArray<string>): Stream.Stream<string> =>
  Stream.asyncScoped<string>((emit) =>
    Effect.gen(function*() {
      const watcher = yield* Effect.acquireRelease(
        Effect.sync(() => watch([...dirs], { ignoreInitial: true, ignored })),
        (w) => Effect.promise(() => w.close())
      )
      watcher.on("all", (_event, file) => {
        void emit.single(path.resolve(file))
      })
      yield* Effect.async<void>((resume) => {
        watcher.once("ready", () => resume(Effect.void))
      })
    })
  )
