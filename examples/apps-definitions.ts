/**
 * The MCP Apps example's definitions (served by examples/apps.ts; tests build them in-process).
 *
 * - `count_letters` (visible to the model only) counts a text's letters and vowels; its result is
 *   shown by the view `ui://letters/board` (the text content is the fallback for text-only hosts);
 * - `reverse_text` (visible to the view only) reverses a text; the view's button calls it;
 * - the view is built with the official view SDK (`@modelcontextprotocol/ext-apps`, its
 *   `app-with-deps` bundle inlined in a module script): it connects, shows the tool result it
 *   receives, calls `reverse_text`, tries `count_letters` (which a host must refuse), and fetches a
 *   URL typed into it (to see the CSP at work).
 *
 * The ids a host (or a browser test) reads: see {@link Ids} and docs/apps.md.
 */
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { App, McpServer } from "presa-mcp"

/** The element ids of the view: stable, for hosts and browser tests. */
export const Ids = {
  /** `connected` once `app.connect()` resolved (or `error: <message>`). */
  status: "status",
  /** The JSON of the `structuredContent` of the last tool result the host sent. */
  result: "result",
  /** Calls the app-only `reverse_text` on the text of the last result. */
  callAppTool: "call-app-tool",
  /** `reverse_text`'s answer: the reversed text (or `error: <message>`). */
  appResult: "app-result",
  /** Tries the model-only `count_letters`. */
  callModelTool: "call-model-tool",
  /** `refused: <message>` when the host refused (as it must), `allowed: <json>` otherwise. */
  modelResult: "model-result",
  /** A URL to fetch from the view. */
  fetchUrl: "fetch-url",
  /** Fetches `#fetch-url`. */
  fetch: "fetch",
  /** `ok <status>` or `blocked: <message>`. */
  fetchResult: "fetch-result"
} as const

/** The official view SDK bundle, with its final `export {a as B, …}` turned into `const McpApps = {B: a, …}`. */
const viewSdk = (): string => {
  const file = createRequire(import.meta.url).resolve("@modelcontextprotocol/ext-apps/app-with-deps")
  const bundle = readFileSync(file, "utf8")
  const exported = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(bundle)
  if (exported?.[1] === undefined) throw new Error(`${file}: no final export clause`)
  const bindings = exported[1].split(",").map((binding) => {
    const [local, name] = binding.trim().split(/\s+as\s+/)
    return `${name ?? local}: ${local}`
  })
  return `${bundle.slice(0, exported.index)}\nconst McpApps = { ${bindings.join(", ")} };\n`
}

/** The view's own code, run after the SDK in the same module script. */
const viewCode = `
const $ = (id) => document.getElementById(id);
const text = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\\n");
const app = new McpApps.App({ name: "letters-board", version: "1.0.0" }, {});
let lastText = "";
app.ontoolresult = (result) => {
  const data = result.structuredContent ?? {};
  if (typeof data.text === "string") lastText = data.text;
  $("${Ids.result}").textContent = JSON.stringify(data);
};
$("${Ids.callAppTool}").addEventListener("click", async () => {
  try {
    const result = await app.callServerTool({ name: "reverse_text", arguments: { text: lastText } });
    $("${Ids.appResult}").textContent = result.isError ? "error: " + text(result) : result.structuredContent.reversed;
  } catch (e) {
    $("${Ids.appResult}").textContent = "error: " + (e && e.message ? e.message : String(e));
  }
});
$("${Ids.callModelTool}").addEventListener("click", async () => {
  try {
    const result = await app.callServerTool({ name: "count_letters", arguments: { text: lastText } });
    $("${Ids.modelResult}").textContent = result.isError
      ? "refused: " + text(result)
      : "allowed: " + JSON.stringify(result.structuredContent);
  } catch (e) {
    $("${Ids.modelResult}").textContent = "refused: " + (e && e.message ? e.message : String(e));
  }
});
$("${Ids.fetch}").addEventListener("click", async () => {
  try {
    const response = await fetch($("${Ids.fetchUrl}").value);
    $("${Ids.fetchResult}").textContent = "ok " + response.status;
  } catch (e) {
    $("${Ids.fetchResult}").textContent = "blocked: " + (e && e.message ? e.message : String(e));
  }
});
try {
  await app.connect();
  $("${Ids.status}").textContent = "connected";
} catch (e) {
  $("${Ids.status}").textContent = "error: " + (e && e.message ? e.message : String(e));
}
`

/** The view's HTML document: markup, then one module script (the SDK and the view's code). */
export const viewHtml = (): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Letters</title>
<style>body { font-family: var(--font-sans, sans-serif); margin: 12px } output { display: block; min-height: 1.2em }</style>
</head>
<body>
<p>Status: <output id="${Ids.status}">connecting</output></p>
<p>Result: <output id="${Ids.result}"></output></p>
<p><button id="${Ids.callAppTool}">Reverse (app-only tool)</button> <output id="${Ids.appResult}"></output></p>
<p><button id="${Ids.callModelTool}">Count again (model-only tool)</button> <output id="${Ids.modelResult}"></output></p>
<p><input id="${Ids.fetchUrl}" size="40"> <button id="${Ids.fetch}">Fetch</button> <output id="${Ids.fetchResult}"></output></p>
<script type="module">
${(viewSdk() + viewCode).replace(/<\/(script)/gi, "<\\/$1")}
</script>
</body>
</html>
`

/** The view. `connectDomains`: the origins its `fetch` may reach (default none: every fetch is blocked). */
export const makeBoard = (connectDomains: ReadonlyArray<string> = []) =>
  App.view({
    uri: "ui://letters/board",
    name: "letters-board",
    title: "Letters board",
    description: "Shows a text's letter count; reverses it on demand",
    html: viewHtml(),
    ui: { prefersBorder: true, ...(connectDomains.length === 0 ? {} : { csp: { connectDomains } }) }
  })

const Text = Schema.Struct({ text: Schema.String.pipe(Schema.maxLength(10_000)) })

const VOWELS = new Set("aeiouAEIOU")

/** The model's tool: counts letters and vowels; the view shows the result. */
export const countLetters = (board: App.View) =>
  App.tool({
    name: "count_letters",
    description: "Counts the letters and vowels of a text and shows them on a board",
    view: board,
    visibility: ["model"],
    parameters: Text,
    success: Schema.Struct({ text: Schema.String, letters: Schema.Int, vowels: Schema.Int }),
    text: ({ letters, text, vowels }) => `"${text}" has ${letters} letters, ${vowels} of them vowels`,
    handler: ({ text }) => {
      const letters = [...text].filter((c) => /\p{L}/u.test(c))
      return { text, letters: letters.length, vowels: letters.filter((c) => VOWELS.has(c)).length }
    }
  })

/** The view's tool: reverses a text (hidden from the model). */
export const reverseText = (board: App.View) =>
  App.tool({
    name: "reverse_text",
    description: "Reverses a text (called by the letters board)",
    view: board,
    visibility: ["app"],
    parameters: Text,
    success: Schema.Struct({ reversed: Schema.String }),
    text: ({ reversed }) => reversed,
    handler: ({ text }) => ({ reversed: [...text].reverse().join("") })
  })

/** The example server (`connectDomains`: see {@link makeBoard}). */
export const makeAppsServer = (connectDomains: ReadonlyArray<string> = []) => {
  const board = makeBoard(connectDomains)
  return McpServer.make({
    name: "presa-apps",
    version: "0.1.0",
    resources: [board],
    tools: [countLetters(board), reverseText(board)]
  })
}
