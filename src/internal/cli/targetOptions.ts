/**
 * The command line's target options (how to reach the server: `--url` or a command after `--`,
 * headers, bearer token, era, timeout, OAuth), declared once for every command that connects: the
 * MCP commands (`commands.ts`) and `registry init` (`registry.ts`, which reads the server's info).
 * The positional-URL rule (`target.ts` `split`) applies to all of them.
 *
 * @internal
 */
import * as Options from "@effect/cli/Options"

/** How to reach the server: URL (or the command after `--`), headers, bearer, era, timeout. @internal */
export const connection = {
  url: Options.text("url").pipe(
    Options.withDescription(
      "The server's Streamable HTTP endpoint. It may also be given as the first argument that is a URL, " +
        "without --url. Without a URL, the server is the command line after --, started over stdio."
    ),
    Options.optional
  ),
  header: Options.text("header").pipe(
    Options.withAlias("H"),
    Options.withDescription("An HTTP header NAME:VALUE sent with every request (repeatable; URL targets only)."),
    Options.repeated
  ),
  bearer: Options.text("bearer").pipe(
    Options.withDescription("Sends Authorization: Bearer TOKEN (URL targets only)."),
    Options.optional
  ),
  era: Options.choice("era", ["auto", "modern", "legacy"]).pipe(
    Options.withDescription(
      "Protocol era: modern = 2026-07-28 only, legacy = 2025-11-25 / 2025-06-18 / 2025-03-26 (initialize), auto = detect."
    ),
    Options.withDefault("auto" as const)
  ),
  timeout: Options.text("timeout").pipe(
    Options.withDescription("Deadline of each request: seconds (30) or a duration (\"500 millis\"). Default 60."),
    Options.optional
  )
}

/** OAuth for a URL target. @internal */
export const oauth = {
  oauth: Options.boolean("oauth").pipe(
    Options.withDescription(
      "Authorize with OAuth when the server asks (URL targets only): the authorization URL is printed on stderr, " +
        "the browser's redirect comes back to a listener on 127.0.0.1, tokens are kept in the token file " +
        "(--oauth-store) and refreshed. See also: presa-mcp login URL."
    )
  ),
  oauthClientId: Options.text("oauth-client-id").pipe(
    Options.withDescription(
      "With --oauth: a client id registered at the authorization server (else dynamic registration)."
    ),
    Options.optional
  ),
  oauthClientSecret: Options.text("oauth-client-secret").pipe(
    Options.withDescription("With --oauth-client-id: that client's secret, for a confidential client."),
    Options.optional
  ),
  oauthStore: Options.text("oauth-store").pipe(
    Options.withDescription(
      "With --oauth: the token file (created with mode 0600). Default $PRESA_MCP_TOKEN_STORE, else ~/.presa-mcp-tokens.json."
    ),
    Options.optional
  )
}

/** The options every MCP command has: {@link connection}, {@link oauth} and `--json`. @internal */
export const targetOptions = {
  url: connection.url,
  header: connection.header,
  bearer: connection.bearer,
  era: connection.era,
  ...oauth,
  timeout: connection.timeout,
  json: Options.boolean("json").pipe(
    Options.withDescription("Print one JSON document on stdout instead of text (listen: one per line).")
  )
}
