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
 * - tools and prompts as `<prefix>_<name>`, their `inputSchema`, `outputSchema`, `annotations`,
 *   `title`, `description`, `icons` and `_meta` unchanged (other `Tool` fields are not kept: the
 *   server's definitions have no slot for them);
 * - resources, resource templates and skills under their own URIs;
 * - completions, routed to the owning backend (a prompt by its prefixed name, a template by its
 *   `uriTemplate`), when that backend declares `completions`.
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
 * also re-fetches the backend's skills. Resource *updates* (`notifications/resources/updated`)
 * are not forwarded.
 *
 * A backend that dies (its connection or process closes, its HTTP endpoint stops answering) does
 * not take the proxy down: its calls fail with -32603 naming it, and its entries are removed
 * (logged). It is not reconnected: build a new proxy (or restart) to bring it back.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as internalError from "./internal/proxy/error.js"
import * as internalInput from "./internal/proxy/input.js"
import * as internal from "./internal/proxy/make.js"
import type * as McpClient from "./McpClient.js"
import type * as McpServer from "./McpServer.js"

/**
 * One backend: `prefix` (1 or more of `A-Z a-z 0-9 _ . -`, unique among the backends; names its
 * tools and prompts `<prefix>_<name>` and the backend in errors and logs) and `client`, a
 * connected client (any transport, either era). The proxy does not close the client: the Scope
 * that connected it owns it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Backend {
  readonly prefix: string
  readonly client: McpClient.McpClient
}

/**
 * Proxy options: every `McpServer.Options` setting except the definitions, validation (the
 * proxy has `validate: false`) and `subscribe` (resource updates are not forwarded), plus:
 *
 * - `name`, `version`: the proxy's `Implementation`, default `presa-mcp-proxy` / `0.1.0`;
 * - `instructions`: default the backends' instructions, each as `<prefix>: <instructions>`, joined
 *   with a blank line;
 * - `logging`: default `true` (log messages of backend calls are forwarded to callers);
 * - `listChanged`: default `true` (backends' list changes are announced);
 * - `pingInterval`: `DurationInput`, default none: when set, each backend gets a `ping` that often,
 *   and one with no answer (a transport failure or the client's `requestTimeout`) marks the backend
 *   down. Any answer, an error included, counts as alive. Without it a dead backend is noticed when
 *   a call or its listen stream fails.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends internal.Options {}

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
 * - `"Prefix"`: a prefix is empty, has other characters than `A-Z a-z 0-9 _ . -`, or is used twice;
 * - `"Collision"`: at start, two or more backends serve the same identity; `collisions` names every
 *   one with all the backends involved (e.g. prefixes `a` + tool `b_c` and `a_b` + tool `c` both
 *   give `a_b_c`);
 * - `"Backend"`: a backend could not be listed at start (`backend` is its prefix, `cause` the
 *   client's error).
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
 * Builds the proxy's server over `backends` (see the module docs for what it serves and
 * forwards). The server lives as long as the Scope: its listen streams and health checks are
 * fibers in it. Serve it with any transport.
 *
 * Startup: opens the listens, lists every backend (tools, prompts, resources, templates, and
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
 * - Live changes: an entry that claims an identity another backend already serves is left out
 *   and logged (the earlier one stays).
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
  backends: ReadonlyArray<Backend>,
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
 *   transports (each call carries its own answering handler). Over stdio the client's
 *   transport-level handler answers them outside any call, so these handlers find no caller and
 *   answer -32603: input is not forwarded from legacy stdio backends.
 * - Outside a proxied call (a client used directly) they answer -32603.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inputHandlers: Pick<McpClient.Options, "onElicit" | "onSample" | "onRoots" | "elicitUrl"> =
  internalInput.inputHandlers
