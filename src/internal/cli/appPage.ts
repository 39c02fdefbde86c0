/**
 * The browser side of `presa-mcp app` (bundled for the browser: `internal/node/appServer.ts` at
 * startup in a checkout, `scripts/bundle-bin.mjs` in the package): the page's program. It creates
 * the sandboxed iframe of the view (`sandbox="allow-scripts"`: an opaque origin, apart from the
 * page's), runs the host bridge (`AppHost.make`) on it, relays the view's server requests to the
 * dev host (`POST /rpc`), shows the view's events on the terminal (`POST /event`), sends the tool
 * input and result, and applies the view's height (the container's width is fixed, its height
 * flexible: 2026-01-26, Container Dimensions).
 *
 * It is an entry point, like the bin: the one place in the page where the program is run.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as AppHost from "../../AppHost.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as Protocol from "./appProtocol.js"

class RelayError extends Schema.TaggedError<RelayError>("presa-mcp/cli/RelayError")("RelayError", {
  message: Schema.String
}) {}

const post = (token: string, path: string, body: unknown): Effect.Effect<unknown, RelayError> =>
  Effect.tryPromise({
    try: (signal) =>
      fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json", [Protocol.TOKEN_HEADER]: token },
        body: JSON.stringify(body),
        signal
      }).then((r) => r.json()),
    catch: () => new RelayError({ message: "the dev host could not be reached" })
  })

const relay = <A, I>(token: string, request: Protocol.RpcRequest, schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const reply = yield* post(token, "/rpc", request).pipe(
      Effect.flatMap((json) =>
        Schema.decodeUnknown(Protocol.RpcReply)(json).pipe(
          Effect.mapError(() => new RelayError({ message: "the dev host answered with something unexpected" }))
        )
      )
    )
    if ("error" in reply) return yield* JsonRpc.McpError.fromErrorObject(reply.error)
    return yield* Schema.decodeUnknown(schema)(reply.result).pipe(
      Effect.mapError(() => new RelayError({ message: "the server's result does not decode" }))
    )
  })

const event = (token: string, kind: Protocol.ViewEvent["kind"], detail: unknown): Effect.Effect<void> =>
  Effect.ignore(post(token, "/event", { kind, detail }))

const framePort = (frame: HTMLIFrameElement): AppHost.Port => ({
  postMessage: (message) => frame.contentWindow?.postMessage(message, "*"),
  subscribe: (onMessage) => {
    const listener = (e: MessageEvent) => {
      if (e.source !== null && e.source === frame.contentWindow) onMessage(e.data)
    }
    window.addEventListener("message", listener)
    return () => window.removeEventListener("message", listener)
  }
})

/** The view's container: a fixed width (the page's), a flexible height up to 4,000 px. */
const dimensions = (container: HTMLElement): JsonRpc.JsonObject => ({ width: container.clientWidth, maxHeight: 4000 })

const program = Effect.gen(function*() {
  const element = document.getElementById(Protocol.DATA_ID)
  const data = yield* Schema.decodeUnknown(Schema.parseJson(Protocol.PageData))(element?.textContent ?? "")
  const container = document.getElementById("view-container") ?? document.body
  const frame = document.createElement("iframe")
  frame.setAttribute("sandbox", "allow-scripts")
  frame.setAttribute("title", data.tool.title ?? data.tool.name)
  const token = data.token
  const bridge = yield* AppHost.make({
    // subscribed before the iframe exists: the view's ui/initialize cannot be missed
    port: framePort(frame),
    server: {
      callTool: (name, args) =>
        relay(
          token,
          { method: "tools/call", params: { name, ...(args === undefined ? {} : { arguments: args }) } },
          McpSchema.CallToolResult
        ),
      readResource: (uri) => relay(token, { method: "resources/read", params: { uri } }, McpSchema.ReadResourceResult)
    },
    tool: data.tool,
    tools: data.tools,
    hostInfo: { name: "presa-mcp app", version: "0.1.0" },
    hostContext: {
      theme: window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: "presa-mcp app",
      platform: "web",
      containerDimensions: dimensions(container)
    },
    approvedCsp: data.approvedCsp,
    onOpenLink: (url) =>
      Effect.zipRight(event(token, "open-link", url), Effect.sync(() => void window.open(url, "_blank", "noopener"))),
    onMessage: (params) => event(token, "message", params),
    onUpdateModelContext: (params) => event(token, "model-context", params),
    onLog: (params) => event(token, "log", params),
    onRequestTeardown: event(token, "teardown-request", null),
    onSizeChange: (size) =>
      Effect.sync(() => {
        if (size.height !== undefined) frame.style.height = `${Math.min(Math.ceil(size.height), 4000)}px`
      })
  })
  frame.src = "/view"
  container.appendChild(frame)
  yield* bridge.initialized
  yield* Effect.flatMap(bridge.appInfo, (info) => event(token, "initialized", Option.getOrNull(info)))
  yield* bridge.sendToolInput(data.args)
  yield* data.result === undefined
    ? bridge.sendToolCancelled(data.cancelled ?? "the tool call failed")
    : bridge.sendToolResult(data.result)
  // the page's size and the colour scheme are host context: changes reach the view
  const changes = yield* Queue.sliding<JsonRpc.JsonObject>(16)
  const dark = window.matchMedia("(prefers-color-scheme: dark)")
  const onResize = () => Queue.unsafeOffer(changes, { containerDimensions: dimensions(container) })
  const onScheme = () => Queue.unsafeOffer(changes, { theme: dark.matches ? "dark" : "light" })
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      window.addEventListener("resize", onResize)
      dark.addEventListener("change", onScheme)
    }),
    () =>
      Effect.sync(() => {
        window.removeEventListener("resize", onResize)
        dark.removeEventListener("change", onScheme)
      })
  )
  return yield* Queue.take(changes).pipe(Effect.flatMap(bridge.setHostContext), Effect.forever)
})

Effect.runFork(Effect.scoped(program))
