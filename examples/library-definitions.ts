/**
 * The reference library: the definitions every example, test and benchmark serves.
 * Tools `add` and `logo`, resource `file:///readme.txt`, template `people://{id}`, prompt `introduce`.
 */
import * as Effect from "effect/Effect"
import { Content, McpServer, Prompt, Resource, Skill, Tool } from "presa-mcp"

/** A 1×1 transparent PNG. */
export const LOGO_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// A Map, not an object literal: `people[id]` would find `constructor`, `toString` or `__proto__`
// (members of every object) for ids a client chooses.
const people: ReadonlyMap<string, string> = new Map([["ada", "Ada Lovelace"], ["alan", "Alan Turing"]])

const completeId = (value: string) => [...people.keys()].filter((id) => id.startsWith(value)).sort()

export const add = Tool.fromJsonSchema({
  name: "add",
  title: "Add numbers",
  description: "Adds a list of numbers and returns their sum.",
  inputSchema: {
    type: "object",
    properties: { numbers: { type: "array", items: { type: "number" } } },
    required: ["numbers"]
  },
  outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
  annotations: { readOnlyHint: true },
  handler: ({ numbers }) =>
    Effect.succeed({ sum: Array.isArray(numbers) ? numbers.reduce((a: number, n) => a + Number(n), 0) : 0 })
})

export const logo = Tool.fromJsonSchema({
  name: "logo",
  description: "Returns the logo as an image.",
  handler: () => Content.blocks([Content.text("Here is the logo:"), Content.image(LOGO_PNG, "image/png")])
})

export const readme = Resource.make({
  uri: "file:///readme.txt",
  name: "readme",
  mimeType: "text/plain",
  handler: () => "Read me first."
})

export const person = Resource.template({
  uriTemplate: "people://{id}",
  name: "person",
  mimeType: "text/plain",
  handler: ({ id }) => (id === undefined ? undefined : people.get(id)),
  complete: { id: completeId }
})

export const introduce = Prompt.make({
  name: "introduce",
  description: "Asks for a one-sentence introduction of a person.",
  arguments: [{ name: "id", description: "Who to introduce (ada, alan)", required: true }],
  handler: ({ id }) =>
    Effect.gen(function*() {
      const name = id === undefined ? undefined : people.get(id)
      // Quote what the client sent only up to a small bound (no amplification through errors).
      if (name === undefined) {
        return yield* McpServer.McpError.invalidParams(`Unknown person: ${String(id).slice(0, 64)}`)
      }
      return `Introduce ${name} in one sentence.`
    }),
  complete: { id: completeId }
})

/** The `code-review` skill: SKILL.md and a checklist it points at. */
export const codeReview = Skill.make("code-review", {
  "SKILL.md": [
    "---",
    "name: code-review",
    "description: Review a change for correctness and style",
    "---",
    "# Reviewing a change",
    "",
    "Read the diff, then work through [the checklist](references/checklist.md).",
    ""
  ].join("\n"),
  "references/checklist.md": "- tests cover the change\n"
})

/** The server options of the reference library (without its skill; see {@link makeLibrary}). */
export const libraryOptions: McpServer.Options = {
  name: "presa-library",
  version: "0.1.0",
  instructions: "A small reference library: add numbers, show a logo, read about people. " +
    "To review a change, load the skill skill://code-review/SKILL.md.",
  tools: [add, logo],
  resources: [readme],
  resourceTemplates: [person],
  prompts: [introduce],
  pageSize: 10
}

/** Builds the reference library server, with the `code-review` skill and `patch` over its options. */
export const makeLibraryWith = (patch: Partial<McpServer.Options>) =>
  Effect.gen(function*() {
    const skill = yield* codeReview
    return yield* McpServer.make({ ...libraryOptions, skills: [skill], ...patch })
  })

/** Builds the reference library server, with the `code-review` skill. */
export const makeLibrary = makeLibraryWith({})
