/**
 * `McpProxy`: resource and template URIs namespaced per backend (issue #37 item 2; docs/proxy.md,
 * "Resource URIs"), and the per-backend filters for prompts, resources and templates.
 *
 * Two backends (our servers, in process) serve the same URIs of every shape — `file:///`,
 * `ui://`, `urn:` (no `//`), a template with `{var}` expressions — and one proxy serves both: the
 * proxy lists each under its backend's prefix, reads, completes, subscribes and forwards
 * `notifications/resources/updated` through the owning backend, and maps the URIs inside the
 * contents. Filters are set in code and in a configuration file.
 *
 * Live clock; every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { InProcess, McpClient, McpServer, Prompt, Resource } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"

const WAIT: Duration.DurationInput = "20 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

const textOf = (contents: ReadonlyArray<McpSchema.ResourceContents>): string => {
  const first = contents[0]
  return first !== undefined && "text" in first ? first.text : ""
}

/** A backend named `label` serving the same URIs as every other. */
const makeBackend = (label: string) =>
  McpServer.make({
    name: label,
    version: "1.0.0",
    subscribe: true,
    resources: [
      Resource.make({ uri: "file:///notes.txt", name: "notes", handler: () => `notes of ${label}` }),
      Resource.make({ uri: "ui://dice/view.html", name: "view", handler: () => `<p>${label}</p>` }),
      Resource.make({ uri: "urn:isbn:123", name: "book", handler: () => `book of ${label}` }),
      Resource.make({ uri: "file:///secret.txt", name: "secret", handler: () => `secret of ${label}` })
    ],
    resourceTemplates: [
      Resource.template({
        uriTemplate: "file:///items/{id}{?v}",
        name: "item",
        handler: ({ id }, ctx) => [{ uri: ctx.uri, text: `item ${id} of ${label}` }],
        complete: { id: (value) => [`${label}-1`, `${label}-2`].filter((v) => v.startsWith(value)) }
      }),
      Resource.template({ uriTemplate: "mem://{+path}", name: "mem", handler: ({ path }) => `mem ${path} of ${label}` })
    ],
    prompts: [
      Prompt.make({ name: "hello", handler: () => `hello from ${label}` }),
      Prompt.make({ name: "bye", handler: () => `bye from ${label}` })
    ]
  })

const connect = (server: McpServer.McpServer) =>
  Effect.flatMap(InProcess.client(server), (t) => McpClient.connect(t, McpProxy.inputHandlers))

describe("McpProxy resource namespaces", () => {
  it.live("two backends serving the same URIs work through one proxy (list, read, complete, subscribe)", () =>
    Effect.gen(function*() {
      const a = yield* makeBackend("a")
      const b = yield* makeBackend("b")
      const proxy = yield* McpProxy.make([
        { prefix: "a", client: yield* connect(a) },
        { prefix: "b", client: yield* connect(b), resources: { exclude: ["file:///secret.txt"] } }
      ])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))

      const uris = (yield* front.listAllResources).map((r) => r.uri).sort()
      expect(uris).toEqual([
        "file://a//notes.txt",
        "file://a//secret.txt",
        "file://b//notes.txt",
        "ui://a/dice/view.html",
        "ui://b/dice/view.html",
        "urn:a:isbn:123",
        "urn:b:isbn:123"
      ])
      expect((yield* front.listAllResourceTemplates).map((t) => t.uriTemplate).sort()).toEqual([
        "file://a//items/{id}{?v}",
        "file://b//items/{id}{?v}",
        "mem://a/{+path}",
        "mem://b/{+path}"
      ])

      for (const label of ["a", "b"]) {
        assert.strictEqual(
          textOf((yield* front.readResource(`file://${label}//notes.txt`)).contents),
          `notes of ${label}`
        )
        assert.strictEqual(
          textOf((yield* front.readResource(`ui://${label}/dice/view.html`)).contents),
          `<p>${label}</p>`
        )
        assert.strictEqual(textOf((yield* front.readResource(`urn:${label}:isbn:123`)).contents), `book of ${label}`)
        // a template read: the URI goes back to the backend's form, the contents' URI comes back in the proxy's
        const item = yield* front.readResource(`file://${label}//items/7?v=2`)
        assert.strictEqual(textOf(item.contents), `item 7 of ${label}`)
        assert.strictEqual(item.contents[0]?.uri, `file://${label}//items/7?v=2`)
        assert.strictEqual(
          textOf((yield* front.readResource(`mem://${label}/x/y`)).contents),
          `mem x/y of ${label}`
        )
        // completions by the proxy's template reach the owning backend
        const completed = yield* front.complete(
          { type: "ref/resource", uri: `file://${label}//items/{id}{?v}` },
          "id",
          ""
        )
        expect(completed.values).toEqual([`${label}-1`, `${label}-2`])
      }
      // the excluded resource is not served; the backends' own URIs are unknown to the proxy
      const excluded = yield* Effect.flip(front.readResource("file://b//secret.txt"))
      assert(excluded._tag === "McpError")
      const unprefixed = yield* Effect.flip(front.readResource("file:///notes.txt"))
      assert(unprefixed._tag === "McpError")

      // subscriptions: the caller names the proxy's URI; the backend's update comes back under it
      const subscription = yield* front.listen({ resourceSubscriptions: ["file://b//notes.txt"] })
      const updated = yield* subscription.notifications.pipe(
        Stream.filter((n) => n.method === "notifications/resources/updated"),
        Stream.take(1),
        Stream.runCollect,
        Effect.fork
      )
      // the proxy opens its listen on the backend in the background: announce until it arrives
      yield* McpServer.resourceUpdated(b, "file:///notes.txt").pipe(
        Effect.repeat(Schedule.spaced("100 millis")),
        Effect.fork
      )
      const [first] = yield* bounded(updated.await.pipe(Effect.flatten))
      assert.strictEqual(first?.params?.uri, "file://b//notes.txt")
    }).pipe(Effect.scoped, bounded))

  it.live("legacy callers subscribe by the proxy's URI; prefixUris: false keeps a backend's URIs", () =>
    Effect.gen(function*() {
      const a = yield* makeBackend("a")
      const b = yield* makeBackend("b")
      const proxy = yield* McpProxy.make([
        { prefix: "a", client: yield* connect(a), prefixUris: false },
        { prefix: "b", client: yield* connect(b) }
      ])
      const { url } = yield* StreamableHttp.serve(proxy)
      const front = yield* McpClient.connect(yield* StreamableHttp.client({ url }), { versions: ["2025-11-25"] })
      assert.strictEqual(front.info.era, "legacy")
      assert.strictEqual(textOf((yield* front.readResource("file:///notes.txt")).contents), "notes of a")
      assert.strictEqual(textOf((yield* front.readResource("file://b//notes.txt")).contents), "notes of b")
      const subscription = yield* front.listen({ resourceSubscriptions: ["urn:b:isbn:123"] })
      const updated = yield* subscription.notifications.pipe(
        Stream.filter((n) => n.method === "notifications/resources/updated"),
        Stream.take(1),
        Stream.runCollect,
        Effect.fork
      )
      yield* McpServer.resourceUpdated(b, "urn:isbn:123").pipe(
        Effect.repeat(Schedule.spaced("100 millis")),
        Effect.fork
      )
      const [first] = yield* bounded(updated.await.pipe(Effect.flatten))
      assert.strictEqual(first?.params?.uri, "urn:b:isbn:123")
    }).pipe(Effect.scoped, bounded))

  it.live("filters in a configuration file: prompts, resources and templates, by the backend's names", () =>
    Effect.gen(function*() {
      const a = yield* makeBackend("a")
      const config = yield* McpProxy.decodeConfig({
        mcpServers: {
          a: {
            url: "http://127.0.0.1:1/mcp",
            prompts: { include: ["hello"] },
            resources: { exclude: ["file:///secret.txt", "urn:isbn:123"] },
            resourceTemplates: { include: ["mem://{+path}"] }
          }
        }
      })
      const [entry] = McpProxy.connectors(config)
      assert(entry !== undefined)
      const bad = McpProxy.decodeConfig({ mcpServers: { a: { url: "http://x/mcp", prompts: { include: "hello" } } } })
      assert(bad._tag === "Left")
      expect(bad.left.path).toBe("mcpServers.a.prompts.include")
      // the connector's filters, with a client of our own (the URL is not used)
      const proxy = yield* McpProxy.make([{ ...entry, connect: () => connect(a) }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      expect((yield* front.listAllPrompts).map((p) => p.name)).toEqual(["a_hello"])
      expect((yield* front.listAllResources).map((r) => r.uri).sort()).toEqual([
        "file://a//notes.txt",
        "ui://a/dice/view.html"
      ])
      expect((yield* front.listAllResourceTemplates).map((t) => t.uriTemplate)).toEqual(["mem://a/{+path}"])
    }).pipe(Effect.scoped, bounded))
})
