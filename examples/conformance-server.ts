/**
 * The fixture server for the official MCP conformance suite (conformance/FIXTURES.md §4, §6),
 * written only with the library's public API. One endpoint serves both eras: 2026-07-28
 * (stateless, MRTR, `subscriptions/listen`) and 2025-11-25 / 2025-06-18 (sessions, server→client
 * requests on the tools/call SSE stream, `resources/subscribe`, `logging/setLevel`).
 *
 *   npx tsx examples/conformance-server.ts --port 3000 [--skills]
 *
 * Listens on 127.0.0.1:<port>/mcp and prints one line to stderr once it does. `--skills` also
 * serves the `pdf-processing` skill (Skills extension, SEP-2640). Stops on SIGINT / SIGTERM.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { parseArgs } from "node:util"
import { Content, Input, JsonRpc, McpServer, Prompt, Resource, Skill, Tool } from "presa-mcp"
import * as JsonSchemaFull from "presa-mcp/JsonSchemaFull"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

type JsonObject = JsonRpc.JsonObject

// ---------------------------------------------------------------------------------------------
// fixed payloads
// ---------------------------------------------------------------------------------------------

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
/** A tiny WAV. */
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

/** `json_schema_2020_12_tool`'s input schema, verbatim (FIXTURES.md §4.1). */
const JSON_SCHEMA_2020_12: JsonObject = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } }
    }
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" }
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false
}

const NAME_SCHEMA: JsonObject = { type: "object", properties: { name: { type: "string" } }, required: ["name"] }

const textOfSample = (result: Input.CreateMessageResult): string => {
  const content = result.content
  if (JsonRpc.isObject(content) && typeof content.text === "string") return content.text
  return JSON.stringify(content)
}

const describeElicit = (result: Input.ElicitResult): string =>
  `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`

// ---------------------------------------------------------------------------------------------
// tools (FIXTURES.md §4.1, in this order: test_simple_text first)
// ---------------------------------------------------------------------------------------------

const tools = (server: Deferred.Deferred<McpServer.McpServer>): ReadonlyArray<Tool.Tool> => [
  Tool.fromJsonSchema({
    name: "test_simple_text",
    description: "Returns a simple text response",
    handler: () => "This is a simple text response for testing."
  }),
  Tool.fromJsonSchema({
    name: "test_image_content",
    description: "Returns an image (1x1 PNG)",
    handler: () => Content.blocks([Content.image(PNG, "image/png")])
  }),
  Tool.fromJsonSchema({
    name: "test_audio_content",
    description: "Returns an audio clip (WAV)",
    handler: () => Content.blocks([Content.audio(WAV, "audio/wav")])
  }),
  Tool.fromJsonSchema({
    name: "test_embedded_resource",
    description: "Returns an embedded text resource",
    handler: () =>
      Content.blocks([
        Content.embeddedResource("test://embedded-resource", "This is an embedded resource content.", "text/plain")
      ])
  }),
  Tool.fromJsonSchema({
    name: "test_multiple_content_types",
    description: "Returns text, an image and an embedded resource",
    handler: () =>
      Content.blocks([
        Content.text("Multiple content types test:"),
        Content.image(PNG, "image/png"),
        Content.embeddedResource(
          "test://mixed-content-resource",
          JSON.stringify({ test: "data", value: 123 }),
          "application/json"
        )
      ])
  }),
  Tool.fromJsonSchema({
    name: "test_tool_with_logging",
    description: "Sends three log messages while it runs",
    handler: (_args, ctx) =>
      Effect.gen(function*() {
        yield* McpServer.log(ctx, "info", "Tool execution started")
        yield* Effect.sleep("50 millis")
        yield* McpServer.log(ctx, "info", "Tool processing data")
        yield* Effect.sleep("50 millis")
        yield* McpServer.log(ctx, "info", "Tool execution completed")
        return "Tool with logging executed successfully"
      })
  }),
  Tool.fromJsonSchema({
    name: "test_tool_with_progress",
    description: "Reports progress 0, 50, 100 (of 100)",
    handler: (_args, ctx) =>
      Effect.gen(function*() {
        yield* McpServer.progress(ctx, 0, { total: 100 })
        yield* Effect.sleep("50 millis")
        yield* McpServer.progress(ctx, 50, { total: 100 })
        yield* Effect.sleep("50 millis")
        yield* McpServer.progress(ctx, 100, { total: 100 })
        return "Progress test completed"
      })
  }),
  Tool.fromJsonSchema({
    name: "test_error_handling",
    description: "Always returns a tool error",
    handler: () => Effect.fail(new Tool.ToolError({ message: "This tool intentionally returns an error for testing" }))
  }),
  Tool.fromJsonSchema({
    name: "test_sampling",
    description: "Asks the client's model (sampling/createMessage)",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The prompt to send" } },
      required: ["prompt"]
    },
    handler: (args) =>
      Effect.map(
        Input.sample([{ role: "user", content: { type: "text", text: String(args.prompt) } }], { maxTokens: 100 }),
        (result) => `LLM response: ${textOfSample(result)}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_elicitation",
    description: "Asks the user for a username and an email (elicitation/create)",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "The message to show the user" } },
      required: ["message"]
    },
    handler: (args) =>
      Effect.map(
        Input.elicit(String(args.message), {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" }
          },
          required: ["username", "email"]
        }),
        (result) => `User response: ${describeElicit(result)}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_elicitation_sep1034_defaults",
    description: "Elicitation whose fields have default values (SEP-1034)",
    handler: () =>
      Effect.map(
        Input.elicit("Please review and update the form fields with defaults", {
          type: "object",
          properties: {
            name: { type: "string", description: "User name", default: "John Doe" },
            age: { type: "integer", description: "User age", default: 30 },
            score: { type: "number", description: "User score", default: 95.5 },
            status: {
              type: "string",
              description: "User status",
              enum: ["active", "inactive", "pending"],
              default: "active"
            },
            verified: { type: "boolean", description: "Verification status", default: true }
          },
          required: []
        }),
        (result) => `Elicitation completed: ${describeElicit(result)}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_elicitation_sep1330_enums",
    description: "Elicitation with every enum schema variant (SEP-1330)",
    handler: () =>
      Effect.map(
        Input.elicit("Please select options from the enum fields", {
          type: "object",
          properties: {
            untitledSingle: {
              type: "string",
              description: "Select one option",
              enum: ["option1", "option2", "option3"]
            },
            titledSingle: {
              type: "string",
              description: "Select one option with titles",
              oneOf: [
                { const: "value1", title: "First Option" },
                { const: "value2", title: "Second Option" },
                { const: "value3", title: "Third Option" }
              ]
            },
            legacyEnum: {
              type: "string",
              description: "Select one option (legacy)",
              enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"]
            },
            untitledMulti: {
              type: "array",
              description: "Select multiple options",
              items: { type: "string", enum: ["option1", "option2", "option3"] }
            },
            titledMulti: {
              type: "array",
              description: "Select multiple options with titles",
              items: {
                anyOf: [
                  { const: "value1", title: "First Choice" },
                  { const: "value2", title: "Second Choice" },
                  { const: "value3", title: "Third Choice" }
                ]
              }
            }
          },
          required: []
        }),
        (result) => `Elicitation completed: ${describeElicit(result)}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_reconnection",
    description: "SSE polling test (SEP-1699)",
    handler: () => "Reconnection test completed successfully"
  }),
  Tool.fromJsonSchema({
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: JSON_SCHEMA_2020_12,
    handler: (args) => `Received: ${JSON.stringify(args)}`
  }),
  Tool.fromJsonSchema({
    name: "test_missing_capability",
    description: "Needs the client's sampling capability (-32021 without it)",
    handler: (_args, ctx) =>
      ctx.clientCapabilities.sampling === undefined
        ? Effect.fail(McpServer.McpError.missingClientCapability({ sampling: {} }))
        : Effect.succeed("Success")
  }),
  Tool.fromJsonSchema({
    name: "test_streaming_elicitation",
    description: "Streams progress and answers, never sending a request on the stream",
    handler: (_args, ctx) =>
      Effect.gen(function*() {
        yield* McpServer.progress(ctx, 1, { total: 1, message: "working" })
        return "Streaming completed without server-to-client requests"
      })
  }),
  Tool.fromJsonSchema({
    name: "test_logging_tool",
    description: "Logs one message (only when the request sets a log level)",
    handler: (_args, ctx) => Effect.as(McpServer.log(ctx, "info", "test_logging_tool ran"), "Logged")
  }),
  Tool.fromJsonSchema({
    name: "test_trigger_tool_change",
    description: "Announces a tools list change",
    handler: () =>
      Effect.flatMap(Deferred.await(server), (s) => McpServer.listChanged(s, "tools")).pipe(
        Effect.as("Tool list change announced")
      )
  }),
  Tool.fromJsonSchema({
    name: "test_trigger_prompt_change",
    description: "Announces a prompts list change",
    handler: () =>
      Effect.flatMap(Deferred.await(server), (s) => McpServer.listChanged(s, "prompts")).pipe(
        Effect.as("Prompt list change announced")
      )
  }),
  // --- multi round-trip requests (2026-07-28, FIXTURES.md §4.8) ---
  Tool.fromJsonSchema({
    name: "test_input_required_result_elicitation",
    description: "MRTR: asks for the user's name",
    handler: () =>
      Effect.map(
        Input.elicit("What is your name?", NAME_SCHEMA, { key: "user_name" }),
        (r) => `Hello, ${String(r.content?.name ?? "stranger")}!`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_sampling",
    description: "MRTR: asks the client's model",
    handler: () =>
      Effect.map(
        Input.sample(
          [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
          { maxTokens: 100, key: "capital_question" }
        ),
        (r) => `Sampled: ${textOfSample(r)}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_list_roots",
    description: "MRTR: asks for the client's roots",
    handler: () =>
      Effect.map(
        Input.roots({ key: "client_roots" }),
        (r) => `Roots: ${r.roots.map((root) => root.uri).join(", ")}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_request_state",
    description: "MRTR: asks for a confirmation, carrying requestState",
    handler: () =>
      Effect.gen(function*() {
        const state = yield* Input.getState
        if (state === undefined) yield* Input.setState({ step: "confirm" })
        const answer = yield* Input.elicit("Please confirm", {
          type: "object",
          properties: { ok: { type: "boolean" } },
          required: ["ok"]
        }, { key: "confirm" })
        const restored = JsonRpc.isObject(state) && state.step === "confirm"
        return `${restored ? "state-ok" : "state-missing"}: confirmed=${String(answer.content?.ok)}`
      })
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_multiple_inputs",
    description: "MRTR: three questions of different kinds at once",
    handler: () =>
      Effect.gen(function*() {
        yield* Input.setState({ step: "multiple" })
        const answers = yield* Input.all({
          name: Input.elicit("What is your name?", NAME_SCHEMA, { key: "user_name" }),
          greeting: Input.sample(
            [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
            { maxTokens: 50, key: "greeting" }
          ),
          roots: Input.roots({ key: "client_roots" })
        })
        return `name=${String(answers.name.content?.name)}, greeting=${
          textOfSample(answers.greeting)
        }, roots=${answers.roots.roots.length}`
      })
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_multi_round",
    description: "MRTR: two rounds of questions",
    handler: () =>
      Effect.gen(function*() {
        yield* Input.setState({ round: 1 })
        const step1 = yield* Input.elicit("Step 1: What is your name?", NAME_SCHEMA, { key: "step1" })
        yield* Input.setState({ round: 2 })
        const step2 = yield* Input.elicit("Step 2: What is your favorite color?", {
          type: "object",
          properties: { color: { type: "string" } },
          required: ["color"]
        }, { key: "step2" })
        return `${String(step1.content?.name)} likes ${String(step2.content?.color)}`
      })
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_tampered_state",
    description: "MRTR: a signed requestState; a tampered one is refused",
    handler: () =>
      Effect.gen(function*() {
        yield* Input.setState({ step: "tamper-check" })
        const answer = yield* Input.elicit("Please confirm", {
          type: "object",
          properties: { ok: { type: "boolean" } },
          required: ["ok"]
        }, { key: "confirm" })
        return `Confirmed: ${String(answer.content?.ok)}`
      })
  }),
  Tool.fromJsonSchema({
    name: "test_input_required_result_capabilities",
    description: "MRTR: asks only for what the client declared",
    handler: (_args, ctx) =>
      ctx.clientCapabilities.elicitation !== undefined
        ? Effect.map(
          Input.elicit("What is your name?", NAME_SCHEMA, { key: "user_name" }),
          (r) => `Hello, ${String(r.content?.name)}!`
        )
        : ctx.clientCapabilities.sampling !== undefined
        ? Effect.map(
          Input.sample([{ role: "user", content: { type: "text", text: "Say hello" } }], {
            maxTokens: 50,
            key: "hello"
          }),
          (r) => `Sampled: ${textOfSample(r)}`
        )
        : Effect.map(Input.roots({ key: "client_roots" }), (r) => `Roots: ${r.roots.length}`)
  }),
  Tool.fromJsonSchema({
    name: "test_header_param",
    description: "Echoes its region, mirrored in the Mcp-Param-Region header (SEP-2243)",
    inputSchema: {
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" } },
      required: ["region"]
    },
    handler: (args) => `Region: ${String(args.region)}`
  }),
  ...taskTools
]

// ---------------------------------------------------------------------------------------------
// Tasks extension (io.modelcontextprotocol/tasks, SEP-2663; FIXTURES.md §7)
// ---------------------------------------------------------------------------------------------

const CONFIRM_SCHEMA: JsonObject = {
  type: "object",
  properties: { confirm: { type: "boolean" } },
  required: ["confirm"]
}

const taskTools: ReadonlyArray<Tool.Tool> = [
  Tool.fromJsonSchema({
    name: "greet",
    description: "Greets someone (always synchronous)",
    inputSchema: NAME_SCHEMA,
    handler: (args) => `Hello, ${String(args.name)}!`
  }),
  Tool.fromJsonSchema({
    name: "slow_compute",
    description: "Sleeps `seconds` seconds, reporting progress, then answers (a task for clients with the extension)",
    inputSchema: {
      type: "object",
      properties: { seconds: { type: "number", minimum: 0 }, label: { type: "string" } },
      required: ["seconds"]
    },
    task: "optional",
    handler: (args, ctx) =>
      Effect.gen(function*() {
        const seconds = Math.min(3600, Math.max(0, Math.floor(Number(args.seconds))))
        for (let i = 0; i < seconds; i++) {
          yield* ctx.progress(i, { total: seconds, message: `${i} of ${seconds} seconds` })
          yield* Effect.sleep("1 second")
        }
        return `Computed ${String(args.label ?? "result")} in ${seconds}s`
      })
  }),
  Tool.fromJsonSchema({
    name: "failing_job",
    description: "Fails with a tool error after about a second (a task; needs the extension)",
    task: "required",
    handler: () =>
      Effect.zipRight(Effect.sleep("1 second"), Effect.fail(new Tool.ToolError({ message: "The job failed" })))
  }),
  Tool.fromJsonSchema({
    name: "protocol_error_job",
    description: "Fails with a JSON-RPC internal error (the task ends failed)",
    task: "optional",
    handler: () => Effect.fail(JsonRpc.McpError.internalError("The job hit an internal error"))
  }),
  Tool.fromJsonSchema({
    name: "confirm_delete",
    description: "Asks the user to confirm deleting a file, then reports it",
    inputSchema: { type: "object", properties: { filename: { type: "string" } }, required: ["filename"] },
    task: "optional",
    handler: (args) =>
      Effect.map(
        Input.elicit(`Delete ${String(args.filename)}?`, CONFIRM_SCHEMA, { key: "confirm_delete" }),
        (r) =>
          r.action === "accept" && r.content?.confirm === true ? `Deleted ${String(args.filename)}` : "Kept the file"
      )
  }),
  Tool.fromJsonSchema({
    name: "multi_input",
    description: "Asks two questions at once",
    task: "optional",
    handler: () =>
      Effect.map(
        Input.all({
          name: Input.elicit("What is your name?", NAME_SCHEMA, { key: "name" }),
          confirm: Input.elicit("Proceed?", CONFIRM_SCHEMA, { key: "confirm" })
        }),
        ({ confirm, name }) => `name=${String(name.content?.name)} confirm=${String(confirm.content?.confirm)}`
      )
  }),
  Tool.fromJsonSchema({
    name: "test_tool_with_task",
    description: "Asks for the user's name in the request (MRTR), then runs as a task",
    // The policy runs in the request: the name is gathered before the task exists, and the handler
    // (in the task) asks the same question and gets that answer.
    task: () => Effect.as(Input.elicit("What is your name?", NAME_SCHEMA, { key: "user_name" }), "required" as const),
    handler: () =>
      Effect.map(
        Input.elicit("What is your name?", NAME_SCHEMA, { key: "user_name" }),
        (r) => `Hello, ${String(r.content?.name)}!`
      )
  })
]

// ---------------------------------------------------------------------------------------------
// resources, template, prompts (FIXTURES.md §4.2–4.5)
// ---------------------------------------------------------------------------------------------

const resources: ReadonlyArray<Resource.Resource> = [
  Resource.make({
    uri: "test://static-text",
    name: "static-text",
    description: "A static text resource",
    mimeType: "text/plain",
    handler: () => "This is the content of the static text resource."
  }),
  Resource.make({
    uri: "test://static-binary",
    name: "static-binary",
    description: "A static binary resource (1x1 PNG)",
    mimeType: "image/png",
    handler: (uri) => [{ uri, mimeType: "image/png", blob: PNG }]
  }),
  Resource.make({
    uri: "test://watched-resource",
    name: "watched-resource",
    description: "A resource clients may subscribe to",
    mimeType: "text/plain",
    handler: () => "Watched resource content"
  })
]

const templates: ReadonlyArray<Resource.ResourceTemplate> = [
  Resource.template({
    uriTemplate: "test://template/{id}/data",
    name: "template",
    description: "A resource template with an id",
    mimeType: "application/json",
    handler: ({ id = "" }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
    complete: { id: (value) => ["123", "456", "789"].filter((v) => v.startsWith(value)) }
  })
]

const prompts: ReadonlyArray<Prompt.Prompt> = [
  Prompt.make({
    name: "test_simple_prompt",
    description: "A simple prompt without arguments",
    handler: () => "This is a simple prompt for testing."
  }),
  Prompt.make({
    name: "test_prompt_with_arguments",
    description: "A prompt with two required arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true }
    ],
    handler: ({ arg1 = "", arg2 = "" }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
    complete: {
      arg1: (value) => ["test1", "test2", "value1"].filter((v) => v.startsWith(value)),
      arg2: (value) => ["test1", "test2", "value2"].filter((v) => v.startsWith(value))
    }
  }),
  Prompt.make({
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that embeds a resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    handler: ({ resourceUri = "" }) => [
      {
        role: "user",
        content: Content.embeddedResource(resourceUri, "Embedded resource content for testing.", "text/plain")
      },
      { role: "user", content: "Please process the embedded resource above." }
    ]
  }),
  Prompt.make({
    name: "test_prompt_with_image",
    description: "A prompt with an image",
    handler: () => [
      { role: "user", content: Content.image(PNG, "image/png") },
      { role: "user", content: "Please analyze the image above." }
    ]
  }),
  Prompt.make({
    name: "test_input_required_result_prompt",
    description: "MRTR on prompts/get: asks for context first",
    handler: () =>
      Effect.map(
        Input.elicit("What context should the prompt use?", {
          type: "object",
          properties: { context: { type: "string" } },
          required: ["context"]
        }, { key: "user_context" }),
        (r) => `Use this context: ${String(r.content?.context)}`
      )
  })
]

// ---------------------------------------------------------------------------------------------
// skills (FIXTURES.md §6)
// ---------------------------------------------------------------------------------------------

const pdfSkill = Skill.make("pdf-processing", {
  "SKILL.md": [
    "---",
    "name: pdf-processing",
    "description: Extract, fill, and assemble PDF documents",
    "---",
    "# PDF processing",
    "",
    "Use this skill to extract text from PDFs, fill PDF forms and merge documents.",
    "",
    "- Forms: see [references/FORMS.md](references/FORMS.md).",
    "- Filling: run `scripts/fill.py`.",
    ""
  ].join("\n"),
  "references/FORMS.md": "# Filling PDF forms\n\nList the fields first, then fill them by name.\n",
  "scripts/fill.py": "import sys\n\nprint('filling', sys.argv[1:])\n"
})

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "3000" },
    host: { type: "string", default: "127.0.0.1" },
    skills: { type: "boolean", default: false }
  }
})

const port = Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`conformance-server: invalid --port ${values.port}\n`)
  process.exit(2)
}

const program = Effect.gen(function*() {
  const self = yield* Deferred.make<McpServer.McpServer>()
  const skills = values.skills ? [yield* pdfSkill] : []
  const server = yield* McpServer.make({
    name: "presa-mcp-conformance-server",
    version: "0.1.0",
    tools: tools(self),
    resources,
    resourceTemplates: templates,
    prompts,
    skills,
    logging: true,
    listChanged: true,
    subscribe: true,
    validator: JsonSchemaFull.validate,
    tasks: { ttl: "10 minutes", pollInterval: "500 millis" }
  })
  yield* Deferred.succeed(self, server)
  const address = yield* StreamableHttp.serve(server, { port, host: values.host })
  process.stderr.write(
    `conformance-server listening on ${address.url}${values.skills ? " (with the pdf-processing skill)" : ""}\n`
  )
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
