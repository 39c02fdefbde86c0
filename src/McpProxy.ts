/**
 * One server in front of several: {@link make} takes backends (connected `McpClient`s, each with
 * a prefix) and yields an ordinary `McpServer` that serves their union, so every transport
 * (stdio, Streamable HTTP, in-process) serves the proxy like any other server. Backends may be
 * any of our clients (in-process, stdio, HTTP) of either era; the proxy itself serves both eras.
 *
 * Spec: MCP 2026-07-28 (Subscriptions, Multi Round-Trip Requests) and the Skills extension (SEP-2640);
 * the design is described in docs/architecture.md.
 *
 * What is served:
 *
 * - tools and prompts as `<prefix>_<name>` (as `<name>` for the empty prefix of a proxy's only
 *   backend, whose URIs are then unchanged too), their `inputSchema`, `outputSchema`, `annotations`,
 *   `title`, `description`, `icons` and `_meta` unchanged (other `Tool` fields are not kept: the
 *   server's definitions have no slot for them), except MCP Apps' view URI (below);
 * - resources and resource templates under their URIs with the prefix inserted after the scheme
 *   (since 0.2.0; `scheme://rest` → `scheme://<prefix>/rest`, `scheme:rest` → `scheme:<prefix>:rest`;
 *   a reversible, unambiguous mapping: docs/proxy.md, "Resource URIs"), unless the backend has
 *   `prefixUris: false`; a read maps the URI back and the contents' URIs forward, and resource
 *   subscriptions and `notifications/resources/updated` follow the mapping. Skills keep their
 *   own `skill://` URIs;
 * - completions, routed to the owning backend (a prompt by its prefixed name, a template by its
 *   proxied `uriTemplate`), when that backend declares `completions`;
 * - MCP Apps (`io.modelcontextprotocol/ui`, since 0.2.0): a tool's `_meta.ui.resourceUri` (and the
 *   flat `ui/resourceUri`) is rewritten to the view's proxied URI and the rest of `_meta.ui` kept
 *   (view contents keep their `_meta`); an app-only tool (`visibility` without `"model"`) is
 *   listed only to callers that declare the extension; for a backend that links a view, each tool
 *   a view may call is also served under the backend's own name, app-only, to such callers, when
 *   no other backend offers that name (docs/proxy.md, "MCP Apps").
 *
 * What each call forwards:
 *
 * - the arguments unchanged (the proxy's server has `validate: false`: the backend validates, and
 *   unknown properties are never stripped); the caller's own `_meta` keys on `tools/call`
 *   (not the reserved `io.modelcontextprotocol/*` ones);
 * - progress: with the caller's `progressToken` the backend call asks for progress and each update
 *   is re-sent to the caller (`ctx.progress`);
 * - log messages: the backend call asks for the caller's level (modern: the request's `_meta` log
 *   level, none when absent; legacy: every level, the caller's session level then filters), each
 *   message is re-sent to the caller (`ctx.log`); the proxy turns `logging` on unless told not to;
 * - cancellation: the backend call runs in the handler's fiber, so a cancelled request interrupts
 *   it and our client cancels it on the wire;
 * - errors: a backend's JSON-RPC error is answered with the same code, message and data (a legacy
 *   -32002 becomes -32602 `Resource not found` with `data.uri` for a modern caller); a tool result
 *   with `isError: true` is a result, passed through; a backend that cannot be reached, times out
 *   or answers nonsense gives -32603 naming the backend (`Backend <prefix> is unavailable`);
 * - input (elicitation, sampling, roots): see {@link inputHandlers}.
 *
 * Change notifications: for each backend that declares `listChanged` on a list, the proxy keeps a
 * listen open (modern `subscriptions/listen`, legacy session notifications) for as long as its
 * Scope, re-lists what changed and updates its own definitions, which announces the change to the
 * proxy's listeners (the proxy has `listChanged: true` unless told otherwise). A resources change
 * also re-fetches the backend's skills.
 *
 * Resource subscriptions: the proxy declares `resources.subscribe`. It counts its callers'
 * subscriptions per URI (legacy `resources/subscribe` until the matching `resources/unsubscribe`;
 * modern `subscriptions/listen` `resourceSubscriptions` while the listen is open), keeps a listen
 * naming the wanted URIs open on each backend that serves them (a static resource or skill file it
 * lists, or a URI one of its templates matches) and declares `resources.subscribe`, and re-announces
 * each `notifications/resources/updated` it brings (`McpServer.resourceUpdated`), which reaches
 * the callers subscribed to that URI. A backend without `resources.subscribe` sends no updates.
 *
 * A backend that dies (its connection or process closes, its HTTP endpoint stops answering) does
 * not take the proxy down: its calls fail with -32603 naming it, and its entries are removed
 * (logged), which the proxy's listeners see as list_changed.
 *
 * - A {@link Backend} (a client you connected) with a `connect` is re-created with it, as a
 *   {@link Connector} is reconnected (since 0.2.0); without one it is not reconnected: its names
 *   become unknown (-32602).
 * - A legacy HTTP backend whose session the server no longer knows (404, e.g. after a restart)
 *   gets a fresh session from the client transport, transparently (the call is answered).
 * - A {@link Connector} (a way to connect, which the proxy runs itself; {@link fromConfig} makes
 *   them from an `mcpServers` file) is reconnected with its `retry` schedule, also when it fails
 *   at start (the proxy starts without it). While it is down, a `tools/call` naming one of the
 *   tools it served gets a result with `isError: true` saying the backend is unavailable and the
 *   proxy is reconnecting it (MCP 2025-11-25, Server Features › Tools › Error Handling: -32602 is
 *   for unknown tools, failures of a known tool's execution are results the model can act on);
 *   `prompts/get` and `resources/read` naming its prompts and resources get -32603
 *   `Backend <prefix> is unavailable`. When it is back, its definitions are served again and the
 *   proxy's listeners get `notifications/{tools,prompts,resources}/list_changed`. A legacy
 *   backend's server→client requests that arrive outside any call (stdio; the HTTP GET stream)
 *   go to the one proxied call in flight to it (see {@link inputHandlers}).
 *
 * The backends' status (connected, reconnecting, given up; since when; last error) is kept in a
 * {@link Health} view ({@link Options} `health`).
 *
 * Trust boundaries (docs/proxy.md): a backend cannot take over another's entries, nor make the
 * proxy hold or re-list without bound.
 *
 * - Names: a tool or prompt name is in the namespace of the backend with the longest prefix it
 *   starts with (`a_b_c` belongs to `a_b` when both `a` and `a_b` are backends): backend `a`'s
 *   tool `b_c` is left out (logged) whether or not `a_b` serves `c`. A URI (resource, template,
 *   skill and its files; prefixed URIs cannot collide) stays with the backend that served it first (at start, the earlier one
 *   in the list), also while that backend is being reconnected. The left-out entry is logged; the
 *   other backends keep theirs.
 * - Lists: each list of a backend is read within `maxListPages`, `maxListItems` and
 *   `maxListBytes` (see {@link Options}); a list over a bound is cut there (an error logged).
 * - `list_changed`: re-listing a backend is coalesced: one at a time, at least 100 ms apart, the
 *   changes that arrive meanwhile in one more; the proxy's own listeners are told only of real
 *   changes.
 * - Questions relayed to the proxy's callers name their backend (see {@link inputHandlers}).
 * - Secrets of a configuration ({@link Config}: `env` and `headers` values, the OAuth client
 *   secret, a URL's credentials and query) are never quoted in errors or logs.
 *
 * Guide: [Proxy](https://github.com/presa-mcp/presa-mcp/blob/main/docs/proxy.md).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as internalConfig from "./internal/proxy/config.js"
import * as internalError from "./internal/proxy/error.js"
import * as internalHealth from "./internal/proxy/health.js"
import * as internalInput from "./internal/proxy/input.js"
import * as internal from "./internal/proxy/make.js"
import * as internalReconnect from "./internal/proxy/reconnect.js"
import type * as McpClient from "./McpClient.js"
import type * as McpServer from "./McpServer.js"
import type * as ToolTransform from "./ToolTransform.js"

/**
 * Which of a backend's tools the proxy serves, and under which names (every field optional):
 *
 * - `include`: only the tools of these names (the backend's names); default all;
 * - `exclude`: not the tools of these names; default none (applied after `include`);
 * - `rename`: the served name by the backend's name; the prefix is added to the new name
 *   (`{ "read_file": "read" }` with prefix `fs` serves `fs_read`); calls go to the backend under
 *   its own name.
 * - `transform`: a `ToolTransform.Transform` by the backend's tool name (since 0.2.0): its
 *   `name` (prefixed like `rename`'s; give one or the other), description, arguments renamed,
 *   hidden behind a value the proxy sends, defaults, a wrapper (docs/tool-transform.md).
 *
 * @since 0.2.0
 * @category models
 */
export interface ToolPolicy {
  readonly include?: ReadonlyArray<string> | undefined
  readonly exclude?: ReadonlyArray<string> | undefined
  readonly rename?: Readonly<Record<string, string>> | undefined
  readonly transform?: Readonly<Record<string, ToolTransform.Transform>> | undefined
}

/**
 * An include / exclude list of exact names or URIs (every field optional): `include` keeps only
 * these (default all), `exclude` then drops these (default none).
 *
 * @since 0.2.0
 * @category models
 */
export interface Filter {
  readonly include?: ReadonlyArray<string> | undefined
  readonly exclude?: ReadonlyArray<string> | undefined
}

/**
 * What the proxy serves of a backend: the {@link ToolPolicy} fields for its tools, plus (every
 * field optional, since 0.2.0)
 *
 * - `prompts`: a {@link Filter} on its prompts' names (the backend's names);
 * - `resources`: a {@link Filter} on its static resources' URIs (the backend's URIs);
 * - `resourceTemplates`: a {@link Filter} on its templates' `uriTemplate` (the backend's text);
 * - `prefixUris`: `false` serves its resource and template URIs unchanged (a URI another
 *   backend serves first is then left out, see the module docs); default `true`: each URI is
 *   served with the prefix after its scheme (`ui://dice/view` of `apps` is `ui://apps/dice/view`,
 *   `file:///a` of `fs` is `file://fs//a`, `urn:x:1` of `b` is `urn:b:x:1`; docs/proxy.md).
 *
 * @since 0.2.0
 * @category models
 */
export interface Policy extends ToolPolicy {
  readonly prompts?: Filter | undefined
  readonly resources?: Filter | undefined
  readonly resourceTemplates?: Filter | undefined
  readonly prefixUris?: boolean | undefined
}

/**
 * One backend: `prefix` (1 or more of `A-Z a-z 0-9 _ . -`, unique among the backends; names its
 * tools and prompts `<prefix>_<name>`, its URIs, and the backend in errors and logs; or, since
 * 0.2.0, the empty string `""` for a proxy's only backend: its names and URIs are then served
 * unchanged, as the backend serves them — `presa-mcp dev` serves this way) and
 * `client`, a connected client (any transport, either era), plus the optional {@link Policy}
 * fields (since 0.2.0). The proxy does not close the
 * client: the Scope that connected it owns it.
 *
 * - `connect` (since 0.2.0): how to connect the backend again, as a {@link Connector}'s. When the
 *   given client's connection is lost, the proxy re-creates the backend with it (and `retry`,
 *   default {@link DEFAULT_RETRY}), as it does for a {@link Connector}.
 * - Without `connect`, the backend is not reconnected: its names become unknown (-32602) and
 *   its health is `"givenUp"`. Prefer a {@link Connector} (or `connect`) for every backend.
 *
 * @since 0.1.0
 * @category models
 */
export interface Backend extends Policy {
  readonly prefix: string
  readonly client: McpClient.McpClient
  readonly connect?:
    | ((input: InputOptions) => Effect.Effect<McpClient.McpClient, McpClient.CallError, Scope.Scope>)
    | undefined
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * The input handlers the proxy hands a {@link Connector}'s `connect`: spread them into
 * `McpClient.connect`'s options, so the backend's questions reach the proxy's callers.
 *
 * @since 0.2.0
 * @category models
 */
export type InputOptions = internalReconnect.InputOptions

/**
 * A backend the proxy connects itself, and reconnects: `prefix` (as in {@link Backend}: `""` only
 * for the proxy's only backend, which then serves its names and URIs unchanged), the
 * {@link Policy} fields, and
 *
 * - `connect`: given the proxy's {@link InputOptions}, connects a client in the Scope it is run
 *   in (spawn the process or open the HTTP transport there: the proxy closes that Scope when the
 *   connection is lost or the proxy ends, which ends the process or session). Pass the input
 *   options to `McpClient.connect`, and preferably `relisten: Schedule.stop` (the proxy
 *   reconnects the whole backend; a client that re-listens on its own notices a dead backend
 *   later). Fails with the client's `CallError`;
 * - `retry`: when to try again after the backend failed to connect or went down, a `Schedule`
 *   fed with the failure; each step's delay is waited before the next attempt, and the schedule
 *   restarts after every connection that got served. When it is done the backend stays down for
 *   good (logged). Default {@link DEFAULT_RETRY}.
 *
 * A connection is lost when a call, its listen stream or (with `pingInterval`) a ping finds its
 * transport gone (`TransportError` `"Closed"`, `"Spawn"`, or HTTP without any response), or
 * when its listing fails after connecting.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schedule from "effect/Schedule"
 * import { McpClient } from "presa-mcp"
 * import * as McpProxy from "presa-mcp/McpProxy"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const files: McpProxy.Connector = {
 *   prefix: "files",
 *   connect: (input) =>
 *     Effect.flatMap(
 *       Stdio.spawn({ command: "node", args: ["files-server.js"] }),
 *       (transport) => McpClient.connect(transport, { ...input, relisten: Schedule.stop })
 *     ),
 *   retry: Schedule.exponential("1 second").pipe(Schedule.intersect(Schedule.recurs(10)))
 * }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Connector extends Policy {
  readonly prefix: string
  readonly connect: (input: InputOptions) => Effect.Effect<McpClient.McpClient, McpClient.CallError, Scope.Scope>
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * The default {@link Connector} `retry`: 500 ms, doubling, at most 30 s between attempts, for ever.
 *
 * @since 0.2.0
 * @category constructors
 */
export const DEFAULT_RETRY: Schedule.Schedule<unknown, unknown> = internalReconnect.DEFAULT_RETRY

/**
 * Proxy options: every `McpServer.Options` setting except the definitions, validation (the
 * proxy has `validate: false`) and `subscribe` (the proxy has `subscribe: true` and forwards
 * subscriptions, see the module docs); `middleware` runs after the proxy's own three (the answer
 * for a reconnecting backend's names, the subscription count, the answer for an ambiguous MCP
 * Apps tool name), plus:
 *
 * - `name`, `version`: the proxy's `Implementation`, default `presa-mcp-proxy` / `0.1.0`;
 * - `instructions`: default the backends' instructions, each as `<prefix>: <instructions>`, joined
 *   with a blank line;
 * - `logging`: default `true` (log messages of backend calls are forwarded to callers);
 * - `listChanged`: default `true` (backends' list changes are announced);
 * - `pingInterval`: `DurationInput`, default none: when set, each backend gets a `ping` that often,
 *   and one with no answer (a transport failure or the client's `requestTimeout`) marks the backend
 *   down. Any answer, an error included, counts as alive. Without it a dead backend is noticed when
 *   a call or its listen stream fails;
 * - `maxListPages` (since 0.2.0): pages of one backend list followed (`nextCursor`), default 100;
 * - `maxListItems` (since 0.2.0): entries kept of one backend list (`tools/list`, `prompts/list`,
 *   `resources/list`, `resources/templates/list`, `skills/list` each), default 10,000;
 * - `maxListBytes` (since 0.2.0): bytes (UTF-8 JSON) of the entries kept of one backend list, a
 *   static skill counting the declared sizes of its files too (they are fetched and held), default
 *   16 MiB;
 * - `health` (since 0.2.0): a {@link Health} (from {@link makeHealth}) the proxy keeps up to date
 *   with its backends' status; default one of its own, not reachable.
 *
 * A list over one of the last three is cut: the entries read within the bounds are served in the
 * backend's order, reading stops, the rest is left out and an error naming the backend and the
 * bound is logged. The other backends are not affected.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends internal.Options {}

/**
 * A backend's status in the {@link Health} view: `"connected"` (served), `"reconnecting"` (down,
 * the proxy tries again with its `retry`), `"givenUp"` (down for good: its `retry` is done, or it
 * has no way to reconnect).
 *
 * @since 0.2.0
 * @category models
 */
export type BackendStatus = internalHealth.Status

/**
 * One backend's health: `prefix`, `status` ({@link BackendStatus}), `since` (when it entered
 * that status, epoch milliseconds), `lastError` (the last failure seen: a lost connection, a
 * failed attempt; its message names no secret of a configuration), `connections` (made so far,
 * the first included) and `attempts` (failed attempts since the last connection).
 *
 * @since 0.2.0
 * @category models
 */
export type BackendHealth = internalHealth.BackendHealth

/**
 * The health view of a proxy's backends: a `SubscriptionRef` of one {@link BackendHealth} per
 * backend, in the order of the backends list. Read it with `SubscriptionRef.get`, follow it with
 * its `changes` stream. Pass it as {@link Options} `health`; `presa-mcp proxy` serves it at
 * `GET /health/backends` (with `--http`) and prints each change on stderr.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as SubscriptionRef from "effect/SubscriptionRef"
 * import * as McpProxy from "presa-mcp/McpProxy"
 *
 * const program = Effect.gen(function*() {
 *   const health = yield* McpProxy.makeHealth
 *   const config = yield* McpProxy.decodeConfig({ mcpServers: { web: { url: "http://127.0.0.1:3000/mcp" } } })
 *   yield* McpProxy.fromConfig(config, { health })
 *   const backends = yield* SubscriptionRef.get(health)
 *   yield* Effect.log(backends.map((b) => `${b.prefix}: ${b.status}`).join(", "))
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Health = internalHealth.Health

/**
 * An empty {@link Health} view, to pass as {@link Options} `health`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeHealth: Effect.Effect<Health> = internalHealth.makeHealth

/**
 * The kind of identity two backends may both claim: `"tool"` and `"prompt"` (prefixed names),
 * `"resource"` (a static resource URI, or the URI of a skill's file), `"resourceTemplate"`
 * (`uriTemplate`), `"skill"` (the URI of a skill's `SKILL.md`).
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = internalError.Kind

/**
 * An identity served by more than one backend: `kind`, `name` (the prefixed name or the URI) and
 * `backends` (their prefixes, in order of the backends list).
 *
 * @since 0.1.0
 * @category models
 */
export type Collision = internalError.Collision

/**
 * The proxy could not be built (in-process; never sent on the wire). `reason`:
 *
 * - `"Prefix"`: a prefix has other characters than `A-Z a-z 0-9 _ . -`, is empty while the proxy has
 *   more than one backend, or is used twice;
 * - `"Collision"`: at start, two or more {@link Backend}s (given connected: the app's own wiring)
 *   serve the same identity; `collisions` names every one with all the backends involved (e.g.
 *   prefixes `a` + tool `b_c` and `a_b` + tool `c` both give `a_b_c`). A {@link Connector}'s
 *   colliding entries never stop the proxy: they are left out by the rule of the module docs;
 * - `"Backend"`: a {@link Backend} could not be listed at start (`backend` is its prefix, `cause`
 *   the client's error). A {@link Connector} that cannot be connected or listed at start is not
 *   an error: the proxy starts without it and keeps trying.
 *
 * @since 0.1.0
 * @category errors
 */
export const ProxyError: typeof internalError.ProxyError = internalError.ProxyError

/**
 * @since 0.1.0
 * @category errors
 */
export type ProxyError = internalError.ProxyError

/**
 * Builds the proxy's server over `backends`, each a {@link Backend} (connected) or a
 * {@link Connector} (connected and reconnected by the proxy) — see the module docs for what it
 * serves and forwards. The server lives as long as the Scope: its listen streams, health checks,
 * reconnections and the connectors' connections are in it. Serve it with any transport.
 *
 * Startup: connects the connectors (concurrently; one that fails is left to its `retry`), opens
 * the listens, lists every backend (tools, prompts, resources, templates, and
 * for a backend declaring the Skills extension, its skills), then checks for collisions.
 *
 * - An invalid item of a backend's list (a tool without a root `"type": "object"` input schema,
 *   an invalid URI template, an entry that does not decode) is left out and logged; the rest of
 *   that list is served.
 * - Skills: every listed skill's files are fetched (`readSkillFile` for each listed resource,
 *   verified against the backend's size and digest; the `SKILL.md` front matter against the
 *   entry). A skill that fails, or cannot be fetched, is left out with its files and logged; the
 *   rest of the backend is served. Verified skills are served with `Skill.make` from the same
 *   bytes, so their entries carry the same digests. A `"dynamic"` skill stays dynamic: each read
 *   goes to the backend (its files are those `resources/directory/read` lists, when the backend
 *   offers it, else its `SKILL.md`). A skill only `skills/get` answers (unlisted) is not served.
 *   The backend's own resources that are files of its listed skills are not served separately.
 * - Collisions: among {@link Backend}s given connected, `ProxyError` "Collision". Otherwise (a
 *   {@link Connector}, and every later change) an entry the module docs' rule refuses — a name in
 *   another backend's namespace, a URI another backend served first — is left out and logged.
 * - Each list is read within the {@link Options} bounds (`maxListPages`, `maxListItems`,
 *   `maxListBytes`).
 *
 * Fails with `ProxyError` (`"Prefix"`, `"Collision"`, `"Backend"`).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { InProcess, McpClient, McpServer } from "presa-mcp"
 * import * as McpProxy from "presa-mcp/McpProxy"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const program = Effect.gen(function*() {
 *   const notes = yield* McpServer.make({ name: "notes", version: "1.0.0" })
 *   const local = yield* McpClient.connect(yield* InProcess.client(notes), McpProxy.inputHandlers)
 *   const remote = yield* McpClient.connect(
 *     yield* Stdio.spawn({ command: "node", args: ["server.js"] }),
 *     McpProxy.inputHandlers
 *   )
 *   const proxy = yield* McpProxy.make([{ prefix: "notes", client: local }, { prefix: "files", client: remote }])
 *   yield* Stdio.run(proxy)
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  backends: ReadonlyArray<Backend | Connector>,
  options?: Options
) => Effect.Effect<McpServer.McpServer, ProxyError, Scope.Scope> = internal.make

/**
 * Client input handlers (spread them into `McpClient.connect`'s options when connecting a
 * backend) that forward a backend's questions — `elicitation/create` (form and URL mode),
 * `sampling/createMessage`, `roots/list` — to the caller of the proxied request that made the
 * backend call. They declare the `elicitation` (form and URL), `sampling` and `roots`
 * capabilities to the backend; the caller still needs the matching capability, else the call
 * fails with the caller-side -32021.
 *
 * - A legacy caller is asked with a real server→client request and the backend gets the answer.
 * - A modern caller (2026-07-28 multi round-trip requests): the proxied request ends with
 *   `input_required` carrying the backend's question; when the caller retries with the answer,
 *   the proxy calls the backend again from the start and answers the same question (the same
 *   method and params) from the caller's `inputResponses`. A backend whose questions depend on
 *   state it keeps between attempts, or whose work before the question has side effects, sees
 *   that work run once per round.
 * - Legacy backends' server→client requests are forwarded the same way over in-process and HTTP
 *   transports (each call carries its own answering handler). Over stdio (and on a legacy HTTP
 *   session's GET stream) the client's transport-level handler answers them outside any call, so
 *   these handlers find no caller and answer -32603. A {@link Connector} gets handlers that
 *   forward such a request to the one proxied call in flight to that backend (2025-11-25 gives
 *   it nothing naming its call): with none or several in flight the backend gets -32603 saying
 *   why, since asking the wrong caller could show one user's question to another. So connect a
 *   legacy stdio backend as a {@link Connector} (or through {@link fromConfig}) to have its
 *   questions forwarded.
 * - Outside a proxied call (a client used directly) they answer -32603.
 * - Every question relayed names its backend (since 0.2.0): `_meta["presa-mcp/backend"]`
 *   ({@link BACKEND_META_KEY}) is the backend's prefix, whatever the backend put there, and an
 *   elicitation's `message` (what the user reads) starts with `[<prefix>] `. Sampling and roots
 *   keep their other params (the messages are the model's input).
 *
 * @since 0.1.0
 * @category constructors
 */
export const inputHandlers: Pick<McpClient.Options, "onElicit" | "onSample" | "onRoots" | "elicitUrl"> =
  internalInput.inputHandlers

/**
 * The `_meta` key naming the backend (its prefix) a question relayed by the proxy comes from
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`; see {@link inputHandlers}).
 * A host that shows such requests to its user can show it.
 *
 * @since 0.2.0
 * @category symbols
 */
export const BACKEND_META_KEY: "presa-mcp/backend" = internalInput.BACKEND_META_KEY

// ---------------------------------------------------------------------------------------------
// configuration files
// ---------------------------------------------------------------------------------------------

/**
 * A stdio server of a configuration file (`{command, args?, env?, cwd?}`), plus the common
 * fields of {@link Config}:
 *
 * - `command`: the program, looked up on `PATH` (no shell); non-empty;
 * - `args`: its arguments, as they are (no expansion); default none;
 * - `env`: variables added to the proxy's environment for it; default none. Their values may be
 *   secrets: errors and logs name them by their field, never quote them;
 * - `cwd`: its working directory, as written (a relative one is relative to the proxy's own
 *   working directory, not to the file); default the proxy's;
 * - `type`: optional, `"stdio"`.
 *
 * @since 0.2.0
 * @category models
 */
export const StdioServer: typeof internalConfig.StdioServer = internalConfig.StdioServer

/**
 * A Streamable HTTP server of a configuration file (`{url, headers?, oauth?}`), plus the common
 * fields of {@link Config}:
 *
 * - `url`: the MCP endpoint, an `http:` or `https:` URL;
 * - `headers`: sent on every request (e.g. `Authorization`); default none; their values, the
 *   `oauth` `clientSecret` and the URL's user, password and query are never quoted in errors or
 *   logs (the URL is named as `https://host/path?…`);
 * - `oauth`: the proxy authorizes itself at this server with OAuth (MCP Authorization; see
 *   `OAuth.make`), every field optional: `clientId` and `clientSecret` of a pre-registered
 *   client (else dynamic registration), `grant` (`"authorization_code"`, default, or
 *   `"client_credentials"`), `scopes` to request, `tokenStore` (a token file path; used by
 *   `presa-mcp proxy`). How the provider is built is {@link FromConfigOptions} `oauth`;
 * - `type`: optional, `"http"`, `"streamable-http"` or `"streamableHttp"`.
 *
 * @since 0.2.0
 * @category models
 */
export const HttpServer: typeof internalConfig.HttpServer = internalConfig.HttpServer

/**
 * The `retry` field of a configuration entry (every field optional): `initialDelayMs` (positive
 * integer, milliseconds, default 500) doubling after each failed attempt up to `maxDelayMs`
 * (default 30 000); `maxAttempts` (non-negative integer; default: for ever) attempts in a row
 * before the backend is left down. See {@link retrySchedule}.
 *
 * @since 0.2.0
 * @category models
 */
export const Retry: typeof internalConfig.Retry = internalConfig.Retry

/**
 * One entry of `mcpServers`: a {@link StdioServer} or an {@link HttpServer}.
 *
 * @since 0.2.0
 * @category models
 */
export const ServerEntry: typeof internalConfig.ServerEntry = internalConfig.ServerEntry

/**
 * @since 0.2.0
 * @category models
 */
export type ServerEntry = internalConfig.ServerEntry

/**
 * A proxy configuration file: the `mcpServers` object desktop hosts use.
 *
 * ```json
 * {
 *   "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "some-files-server", "/tmp"], "env": { "LOG": "1" } },
 *     "search": { "url": "https://search.example/mcp", "headers": { "Authorization": "Bearer …" },
 *                 "prefix": "web", "include": ["search"], "rename": { "search": "find" },
 *                 "retry": { "initialDelayMs": 1000, "maxAttempts": 20 } }
 *   }
 * }
 * ```
 *
 * Each entry is a {@link StdioServer} (it has `command`) or an {@link HttpServer} (it has
 * `url`), never both, with these optional fields of ours:
 *
 * - `prefix`: its tools and prompts are served as `<prefix>_<name>`; default the entry's name
 *   (which must then be 1 or more of `A-Z a-z 0-9 _ . -`); unique among enabled entries;
 * - `include`, `exclude`, `rename`: see {@link ToolPolicy};
 * - `transform`: per backend tool (by its name) `name`, `title`, `description` and `arguments`
 *   (by the backend's argument names): `{ "name": "<caller's name>", "description": "…",
 *   "default": <JSON> }`, or `{ "hide": true, "value": <JSON> }` (the caller does not see it; the
 *   proxy sends `value`); see `ToolTransform` and docs/tool-transform.md;
 * - `prompts`, `resources`, `resourceTemplates` (each `{ "include"?: [...], "exclude"?: [...] }`)
 *   and `prefixUris` (since 0.2.0): see {@link Policy};
 * - `retry`: see {@link Retry};
 * - `disabled`: `true` leaves the entry out.
 *
 * Other fields (hosts add their own, e.g. `autoApprove`) are ignored. Values are taken as
 * written: `${VAR}` is not expanded.
 *
 * @since 0.2.0
 * @category models
 */
export const Config: typeof internalConfig.Config = internalConfig.Config

/**
 * @since 0.2.0
 * @category models
 */
export type Config = internalConfig.Config

/**
 * A configuration could not be used (in-process; never sent on the wire). `reason`:
 * `"Read"` (the file cannot be read), `"Json"` (it is not JSON), `"Invalid"` (it does not match
 * {@link Config}). `path` names the offending field (`mcpServers.files.args[0]`; `""` for the
 * whole file), `file` the file, and `message` says both and what was expected, e.g.
 * `proxy.json: mcpServers.files.args[0]: Expected string, actual 3`.
 *
 * @since 0.2.0
 * @category errors
 */
export const ConfigError: typeof internalError.ConfigError = internalError.ConfigError

/**
 * @since 0.2.0
 * @category errors
 */
export type ConfigError = internalError.ConfigError

/**
 * Decodes a parsed configuration (a JSON value) as {@link Config}: each entry as stdio or HTTP
 * by whether it has `command` or `url`, then the prefixes. Yields the first problem as a
 * {@link ConfigError} `"Invalid"`; `file`, when given, is named in the error.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeConfig: (input: unknown, file?: string) => Either.Either<Config, ConfigError> = internalConfig.decode

/**
 * Reads `file` (UTF-8 JSON) with the `FileSystem` in context (e.g. `NodeContext.layer` from
 * `@effect/platform-node`) and decodes it with {@link decodeConfig}. Fails with
 * {@link ConfigError} (`"Read"`, `"Json"`, `"Invalid"`).
 *
 * @since 0.2.0
 * @category decoding
 */
export const loadConfig: (file: string) => Effect.Effect<Config, ConfigError, FileSystem.FileSystem> =
  internalConfig.load

/**
 * The `Schedule` of a {@link Retry} setting (absent: the defaults, which equal
 * {@link DEFAULT_RETRY}): exponential from `initialDelayMs`, doubling, each delay capped at
 * `maxDelayMs`, at most `maxAttempts` steps.
 *
 * @since 0.2.0
 * @category constructors
 */
export const retrySchedule: (retry: typeof Retry.Type | undefined) => Schedule.Schedule<unknown, unknown> =
  internalConfig.retrySchedule

/**
 * Options of {@link fromConfig}: the proxy's {@link Options} (`pingInterval` defaults to 15
 * seconds here, so a backend that died while idle is noticed and reconnected), plus
 *
 * - `client`: `McpClient.Options` for every backend's client (not the input handlers, which are
 *   the proxy's), e.g. `requestTimeout`; default `{ relisten: Schedule.stop }` (a `relisten`
 *   given here wins);
 * - `stderr`: where the stdio servers' stderr goes: `"inherit"` (default; the proxy's stderr,
 *   never its stdout) or a function of the entry's prefix and each line;
 * - `oauth`: builds the `OAuth.Provider` of an HTTP entry with an `oauth` block (from the entry's
 *   name, URL and block), once per connection attempt, in the connection's Scope (a failure is a
 *   failed attempt, `TransportError` `"Unauthorized"`). Default: `OAuth.make` with the block's
 *   client, grant and scopes, tokens in memory for the connection, and no interaction (so only
 *   `client_credentials`, or a server that needs no user, succeeds). `presa-mcp proxy` passes one
 *   with the token file and the loopback redirect listener, printing the URL on stderr.
 *
 * @since 0.2.0
 * @category models
 */
export interface FromConfigOptions extends internalConfig.FromConfigOptions {}

/**
 * The enabled entries of `config` as {@link Connector}s, in the file's order: a stdio entry
 * spawns its process (`Stdio.spawn`), an HTTP entry opens a Streamable HTTP client
 * (`StreamableHttp.client`, over `fetch`); both connect with the proxy's input handlers and
 * `options.client`. The transports are loaded on the first connection, so importing this module
 * loads neither.
 *
 * @since 0.2.0
 * @category constructors
 */
export const connectors: (config: Config, options?: FromConfigOptions) => ReadonlyArray<Connector> =
  internalConfig.connectors

/**
 * Builds the proxy of a configuration: {@link make} over {@link connectors}. Every backend is
 * reconnected with its `retry` and none is needed at start. Serve the result like any server.
 *
 * Fails with `ProxyError` ("Collision" when backends connected at start collide; prefixes are
 * checked by {@link decodeConfig}).
 *
 * @example
 * ```ts
 * import * as NodeContext from "@effect/platform-node/NodeContext"
 * import * as Effect from "effect/Effect"
 * import * as McpProxy from "presa-mcp/McpProxy"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const program = Effect.gen(function*() {
 *   const config = yield* McpProxy.loadConfig("proxy.json")
 *   const proxy = yield* McpProxy.fromConfig(config, { name: "my-proxy" })
 *   yield* Stdio.run(proxy)
 * }).pipe(Effect.scoped, Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromConfig: (
  config: Config,
  options?: FromConfigOptions
) => Effect.Effect<McpServer.McpServer, ProxyError, Scope.Scope> = internalConfig.fromConfig
