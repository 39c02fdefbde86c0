/**
 * `presa-mcp app TARGET TOOL` (issue #41, point 4): a local dev host for MCP Apps. It calls the
 * tool, reads the view the tool links (`_meta.ui.resourceUri`), and serves on 127.0.0.1 a page
 * that renders the view in a sandboxed iframe under the Content-Security-Policy built from the
 * view's `_meta.ui.csp` (`AppHost.contentSecurityPolicy`). The page runs the host bridge
 * (`AppHost.make`, bundled for the browser: `appPage.ts`) and relays the view's `tools/call` and
 * `resources/read` here (`POST /rpc`), where the connected `McpClient` sends them to the server
 * under the visibility rule (checked twice: in the page's bridge and here).
 *
 * The page's own requests carry a random token in a header (so neither another site nor the view,
 * whose origin is opaque, can use the relay) and must name the listener's own host (no DNS
 * rebinding).
 *
 * @internal
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as AppHost from "../../AppHost.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"
import * as AppServer from "../node/appServer.js"
import { quote } from "../quote.js"
import * as Protocol from "./appProtocol.js"
import { UsageError } from "./exitCode.js"
import type { Io } from "./io.js"

/** The client capabilities the dev host declares: the MCP Apps extension with its MIME type. @internal */
export const capabilities: McpSchema.ClientCapabilities = {
  extensions: { [AppHost.EXTENSION_ID]: { mimeTypes: [AppHost.MIME_TYPE] } }
}

/** @internal */
export interface AppArgs {
  readonly tool: string
  readonly args: JsonRpc.JsonObject
  readonly port: number
  readonly json: boolean
}

const HOST = "127.0.0.1"
const MAX_BODY = 1024 * 1024

/** The view's HTML and `_meta.ui`, from the `resources/read` content (else the `resources/list` entry). */
interface View {
  readonly html: string
  readonly ui: JsonRpc.JsonObject
}

const decodeBase64 = (blob: string): string =>
  new TextDecoder().decode(Uint8Array.from(atob(blob), (c) => c.charCodeAt(0)))

const readView = (client: McpClient.McpClient, uri: string): Effect.Effect<View, McpClient.CallError | UsageError> =>
  Effect.gen(function*() {
    const read = yield* client.readResource(uri)
    const content = read.contents.find((c) => c.uri === uri) ?? read.contents[0]
    if (content === undefined) return yield* new UsageError({ message: `the view ${quote(uri)} has no contents` })
    if (content.mimeType !== AppHost.MIME_TYPE) {
      return yield* new UsageError({
        message: `the view ${quote(uri)} is ${quote(String(content.mimeType))}, not ${AppHost.MIME_TYPE}`
      })
    }
    const html = "text" in content ? content.text : yield* Effect.try({
      try: () => decodeBase64(content.blob),
      catch: () => new UsageError({ message: `the view ${quote(uri)} has a blob that is not base64` })
    })
    const own = content._meta?.ui
    if (JsonRpc.isObject(own)) return { html, ui: own }
    // the resources/list entry is the fallback for the view's metadata
    const listed = yield* client.listAllResources.pipe(Effect.orElseSucceed(() => []))
    const entry = listed.find((r) => r.uri === uri)?._meta?.ui
    return { html, ui: JsonRpc.isObject(entry) ? entry : {} }
  })

const escapeJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const HOST_PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const hostPage = (title: string, data: Protocol.PageData): string =>
  `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1rem; }
header { color: #555; margin-bottom: .5rem; }
#view-container iframe { width: 100%; min-height: 80px; display: block; border: 0; }
#view-container.border iframe { border: 1px solid #ccc; border-radius: 6px; }
</style></head>
<body>
<header>${escapeHtml(title)}</header>
<div id="view-container"${data.prefersBorder === false ? "" : ` class="border"`}></div>
<script type="application/json" id="${Protocol.DATA_ID}">${escapeJson(data)}</script>
<script src="/host.js"></script>
</body></html>
`

const randomToken = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, "0")).join("")

const json = (body: unknown, status = 200) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json",
    headers: { "cache-control": "no-store" }
  })

const html = (body: string, csp: string) =>
  HttpServerResponse.text(body, {
    contentType: "text/html; charset=utf-8",
    headers: {
      "content-security-policy": csp,
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer"
    }
  })

interface Served {
  readonly client: McpClient.McpClient
  readonly io: Io
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly token: string
  readonly port: Ref.Ref<number>
}

/** Relays one of the view's requests (already past the page's bridge) to the server. */
const relay = (s: Served, request: Protocol.RpcRequest): Effect.Effect<Protocol.RpcReply> => {
  const answer: Effect.Effect<JsonRpc.JsonObject, McpClient.CallError> = request.method === "resources/read"
    ? s.client.readResource(request.params.uri)
    : Effect.gen(function*() {
      const tool = s.tools.find((t) => t.name === request.params.name)
      if (tool === undefined || !AppHost.visibility(tool).includes("app")) {
        return yield* JsonRpc.McpError.invalidParams(
          `Tool not callable from this view: ${quote(request.params.name)} (its visibility does not include "app")`,
          { name: quote(request.params.name) }
        )
      }
      return yield* s.client.callTool(request.params.name, request.params.arguments)
    })
  const what = request.method === "tools/call"
    ? `tools/call ${request.params.name}`
    : `resources/read ${request.params.uri}`
  return answer.pipe(
    Effect.map((result): Protocol.RpcReply => ({ result })),
    Effect.catchAll((e) =>
      Effect.succeed<Protocol.RpcReply>({
        error: e._tag === "McpError"
          ? e.toErrorObject()
          : { code: JsonRpc.ErrorCode.InternalError, message: "The server could not be reached" }
      })
    ),
    Effect.tap((reply) =>
      s.io.err(
        `presa-mcp app: view → ${quote(what, 200)}: ${
          "error" in reply ? `error ${reply.error.code} ${quote(reply.error.message, 200)}` : "ok"
        }\n`
      )
    )
  )
}

const eventLine = (event: Protocol.ViewEvent): string => {
  const detail = quote(JSON.stringify(event.detail) ?? "", 2000)
  switch (event.kind) {
    case "initialized":
      return `the view initialized: ${detail}`
    case "log":
      return `view log: ${detail}`
    case "message":
      return `the view sends a message to the chat: ${detail}`
    case "open-link":
      return `the view asks to open ${detail}`
    case "model-context":
      return `the view updates the model context: ${detail}`
    case "teardown-request":
      return "the view asks to be closed"
  }
}

/** The page's token-checked POST endpoints: the relay and the view's events. */
const post = (
  s: Served,
  path: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.headers[Protocol.TOKEN_HEADER] !== s.token) return json({ error: "forbidden" }, 403)
    const length = Number(request.headers["content-length"] ?? "0")
    if (!Number.isFinite(length) || length > MAX_BODY) return json({ error: "too large" }, 413)
    const body = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
    if (path === "/event") {
      const event = Schema.decodeUnknownEither(Schema.parseJson(Protocol.ViewEvent))(body)
      if (Either.isLeft(event)) return json({ error: "bad event" }, 400)
      yield* s.io.err(`presa-mcp app: ${eventLine(event.right)}\n`)
      return json({})
    }
    const rpc = Schema.decodeUnknownEither(Schema.parseJson(Protocol.RpcRequest))(body)
    if (Either.isLeft(rpc)) {
      return json({ error: JsonRpc.McpError.invalidParams("Invalid relay request").toErrorObject() })
    }
    return json(yield* relay(s, rpc.right))
  })

const makeApp = (s: Served, page: string, viewHtml: string, viewCsp: string, script: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const port = yield* Ref.get(s.port)
    const host = request.headers.host
    if (host !== `${HOST}:${port}` && host !== `localhost:${port}`) {
      return HttpServerResponse.text("wrong host", { status: 421 })
    }
    const path = request.url.split("?")[0]
    if (request.method === "POST" && (path === "/rpc" || path === "/event")) return yield* post(s, path)
    if (request.method !== "GET") return HttpServerResponse.empty({ status: 405 })
    switch (path) {
      case "/":
        return html(page, HOST_PAGE_CSP)
      case "/host.js":
        return HttpServerResponse.text(script, {
          contentType: "text/javascript; charset=utf-8",
          headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" }
        })
      case "/view":
        return html(viewHtml, viewCsp)
      case "/favicon.ico":
        return HttpServerResponse.empty({ status: 204 })
      default:
        return HttpServerResponse.empty({ status: 404 })
    }
  })

/**
 * Calls the tool, reads its view, serves the page and prints its URL (stdout; `{"url": …}` with
 * `--json`); then runs until interrupted. A tool call answered with a JSON-RPC error still shows
 * the view (it gets `ui/notifications/tool-cancelled`). Fails with `UsageError` (no such tool, no
 * view, the view is not `text/html;profile=mcp-app`, the port is taken) or the client's `CallError`
 * (connection failures).
 *
 * @internal
 */
export const serve = (
  client: McpClient.McpClient,
  io: Io,
  a: AppArgs,
  onListening: Effect.Effect<void>
): Effect.Effect<never, McpClient.CallError | UsageError, Scope.Scope> =>
  Effect.gen(function*() {
    const tools = yield* client.listAllTools
    const tool = tools.find((t) => t.name === a.tool)
    if (tool === undefined) return yield* new UsageError({ message: `the server has no tool ${quote(a.tool)}` })
    const uri = AppHost.resourceUri(tool)
    if (uri === undefined) {
      return yield* new UsageError({ message: `the tool ${quote(a.tool)} links no view (_meta.ui.resourceUri)` })
    }
    const view = yield* readView(client, uri)
    const policy = AppHost.contentSecurityPolicy(view.ui.csp)
    yield* io.err(`presa-mcp app: ${quote(uri)} CSP: ${policy.policy}\n`)
    for (const r of policy.rejected) {
      yield* io.err(`presa-mcp app: CSP ${r.field} entry ${r.value} left out: ${r.reason}\n`)
    }
    // A call that fails with a JSON-RPC error still shows the view, which gets
    // ui/notifications/tool-cancelled with the error as the reason.
    const outcome = yield* client.callTool(a.tool, a.args).pipe(
      Effect.map((result) => ({ result })),
      Effect.catchTag("McpError", (e) =>
        Effect.as(
          io.err(
            `presa-mcp app: the tool call failed (${e.code}: ${quote(e.message, 200)}); the view gets tool-cancelled\n`
          ),
          { cancelled: `the server answered with error ${e.code}: ${quote(e.message, 200)}` }
        ))
    )
    const token = randomToken()
    const data: Protocol.PageData = {
      token,
      tool,
      tools,
      args: a.args,
      ...outcome,
      ...(typeof view.ui.prefersBorder === "boolean" ? { prefersBorder: view.ui.prefersBorder } : {}),
      approvedCsp: policy.approved
    }
    const script = yield* AppServer.pageScript.pipe(
      Effect.mapError((e) => new UsageError({ message: e.message }))
    )
    const s: Served = { client, io, tools, token, port: yield* Ref.make(0) }
    const page = hostPage(`presa-mcp app: ${a.tool} (${uri})`, data)
    const app = makeApp(s, page, view.html, policy.policy, script)
    const port = yield* AppServer.listen(app, { host: HOST, port: a.port }).pipe(
      Effect.mapError((e) => new UsageError({ message: `cannot listen on ${HOST}:${a.port}: ${e.message}` }))
    )
    yield* Ref.set(s.port, port)
    const url = `http://${HOST}:${port}/`
    yield* io.out(a.json ? `${JSON.stringify({ url })}\n` : `${url}\n`)
    yield* io.err(`presa-mcp app: showing ${quote(a.tool)}'s view at ${url} (Ctrl-C to stop)\n`)
    yield* onListening
    return yield* Effect.never
  })
