/**
 * An OAuth authorization server of the tests' own (ES256 JWTs with `jose`) in front of a
 * protected MCP server (our `WebHandler` with `Auth.jwtVerifier`), both on one `node:http`
 * listener on 127.0.0.1 port 0, plus an RFC 8693 identity provider (`/idp/token`) and a workload
 * key for JWT-bearer assertions. The authorization server approves at once and redirects. Every
 * OAuth request is recorded for the tests to assert on. Used by `test/OAuth.test.ts` and the CLI's
 * `--oauth` tests.
 */
import * as Effect from "effect/Effect"
import * as jose from "jose"
import { createHash } from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { Auth, McpServer, Tool } from "presa-mcp"
import * as WebHandler from "presa-mcp/WebHandler"

export interface AsOptions {
  /** Where the PRM is served: the path-based location (default) or only the root. */
  readonly prmAt?: "path" | "root" | "none"
  /** Where the AS metadata is served (the issuer is `<origin>/as`). */
  readonly metadataAt?: "oauth" | "oidc-insert" | "oidc-append" | "root"
  readonly cimd?: boolean
  readonly registration?: boolean
  readonly pkce?: ReadonlyArray<string> | null
  /** An `issuer` in the metadata that is not the one the PRM names. */
  readonly lieIssuer?: boolean
  /** The `iss` in the redirect: correct (default), wrong, or left out. */
  readonly iss?: "correct" | "wrong" | "omit"
  readonly resourceOverride?: string
  readonly authMethods?: ReadonlyArray<string>
  readonly prmScopes?: ReadonlyArray<string>
  readonly asScopes?: ReadonlyArray<string>
  readonly expiresIn?: number
  /** tools/call needs this scope; a token without it gets 403 insufficient_scope. */
  readonly callScope?: string
  /** Every request with a token is refused with 403 insufficient_scope. */
  readonly alwaysForbid?: boolean
  /**
   * DPoP (RFC 9449): the AS lists ES256, checks the token request's proof and issues DPoP-bound
   * tokens (`cnf.jkt`); the MCP endpoint takes only `DPoP` tokens with a proof whose `htm`, `htu`,
   * `ath` and key match. `"nonce"`: both also require their nonce first (§8, §9).
   */
  readonly dpop?: "plain" | "nonce"
  /** The first standalone GET with a token is refused with 401 invalid_token. */
  readonly refuseFirstGet?: boolean
  /** A `tools/call` POST with a token is answered `303 See Other` to this URL (another server). */
  readonly redirectCallsTo?: string
}

/** What the test's servers checked of one DPoP proof. */
export interface ProofSeen {
  readonly where: "token" | "mcp"
  readonly htm: unknown
  readonly htu: unknown
  readonly ath: unknown
  readonly nonce: unknown
  readonly jti: unknown
  readonly jkt: string
}

export interface Recorded {
  readonly authorizations: Array<URLSearchParams>
  readonly tokens: Array<{ readonly body: URLSearchParams; readonly authorization: string | undefined }>
  readonly registrations: Array<Record<string, unknown>>
  readonly metadataPaths: Array<string>
  readonly proofs: Array<ProofSeen>
  readonly exchanges: Array<URLSearchParams>
  readonly gets: Array<number>
  /** The `Authorization` of every request to the MCP endpoint (`undefined`: none). */
  readonly mcpAuthorizations: Array<string | undefined>
}

export const CLIENT_SECRET = "s3cret-value-never-logged"
export const CIMD_URL = "https://client.example.com/metadata.json"
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
export const AS_NONCE = "as-nonce-1"
export const RS_NONCE = "rs-nonce-1"

/** Verifies a DPoP proof (RFC 9449 §4.3) with its embedded key; the claims and the key's thumbprint. */
const verifyProof = async (proof: string) => {
  const header = jose.decodeProtectedHeader(proof)
  if (header.typ !== "dpop+jwt" || header.jwk === undefined) throw new Error("not a DPoP proof")
  const { payload } = await jose.jwtVerify(proof, await jose.importJWK(header.jwk, header.alg), { typ: "dpop+jwt" })
  return { payload, jkt: await jose.calculateJwkThumbprint(header.jwk) }
}

const readBody = (req: Http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const json = (res: Http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

export const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

/** The authorization server and the protected MCP server, in the test's scope. */
export const setup = (o: AsOptions = {}) =>
  Effect.gen(function*() {
    const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
    const rec: Recorded = {
      authorizations: [],
      tokens: [],
      registrations: [],
      metadataPaths: [],
      proofs: [],
      exchanges: [],
      gets: [],
      mcpAuthorizations: []
    }
    /** The workload's key (WIF) and the identity provider's key (ID tokens, ID-JAGs). */
    const workload = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
    const idp = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
    const state = { origin: "", challenges: new Map<string, string>(), codes: new Map<string, string>() }
    const mounted: { web?: WebHandler.WebHandler } = {}
    let counter = 0

    const mint = (scope: string, resource: string, jkt?: string) =>
      new jose.SignJWT({ scope, ...(jkt === undefined ? {} : { cnf: { jkt } }) })
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(`${state.origin}/as`)
        .setAudience(resource)
        .setSubject("alice")
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey)

    const issue = async (res: Http.ServerResponse, scope: string, resource: string, jkt?: string) => {
      counter++
      json(res, 200, {
        access_token: await mint(scope, resource, jkt),
        token_type: jkt === undefined ? "Bearer" : "DPoP",
        expires_in: o.expiresIn ?? 3600,
        refresh_token: `refresh-${counter}`,
        ...(scope === "" ? {} : { scope })
      })
    }

    const asMetadata = () => ({
      issuer: o.lieIssuer === true ? "https://attacker.example.com" : `${state.origin}/as`,
      authorization_endpoint: `${state.origin}/as/authorize`,
      token_endpoint: `${state.origin}/as/token`,
      ...(o.registration === false ? {} : { registration_endpoint: `${state.origin}/as/register` }),
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials", JWT_BEARER],
      ...(o.dpop === undefined ? {} : { dpop_signing_alg_values_supported: ["ES256"] }),
      token_endpoint_auth_methods_supported: o.authMethods ?? ["none", "client_secret_basic"],
      authorization_response_iss_parameter_supported: true,
      ...(o.pkce === null ? {} : { code_challenge_methods_supported: o.pkce ?? ["S256"] }),
      ...(o.cimd === true ? { client_id_metadata_document_supported: true } : {}),
      ...(o.asScopes === undefined ? {} : { scopes_supported: o.asScopes })
    })
    const metadataPath = o.metadataAt === "root"
      ? "/.well-known/oauth-authorization-server"
      : o.metadataAt === "oidc-insert"
      ? "/.well-known/openid-configuration/as"
      : o.metadataAt === "oidc-append"
      ? "/as/.well-known/openid-configuration"
      : "/.well-known/oauth-authorization-server/as"
    const prmPath = o.prmAt === "root"
      ? "/.well-known/oauth-protected-resource"
      : "/.well-known/oauth-protected-resource/mcp"

    const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const url = new URL(req.url ?? "/", state.origin)
      const body = await readBody(req)
      if (req.method === "GET" && url.pathname.includes(".well-known")) {
        if (url.pathname === prmPath && o.prmAt !== "none") {
          return json(res, 200, {
            resource: o.resourceOverride ?? (o.prmAt === "root" ? state.origin : `${state.origin}/mcp`),
            authorization_servers: [`${state.origin}/as`],
            ...(o.prmScopes === undefined ? {} : { scopes_supported: o.prmScopes })
          })
        }
        if (url.pathname === metadataPath) {
          rec.metadataPaths.push(url.pathname)
          return json(res, 200, asMetadata())
        }
        rec.metadataPaths.push(`404 ${url.pathname}`)
        return json(res, 404, { error: "not_found" })
      }
      if (url.pathname === "/as/authorize") {
        rec.authorizations.push(url.searchParams)
        const code = `code-${rec.authorizations.length}`
        state.challenges.set(code, url.searchParams.get("code_challenge") ?? "")
        state.codes.set(code, url.searchParams.get("scope") ?? "")
        const redirect = new URL(url.searchParams.get("redirect_uri") ?? "")
        redirect.searchParams.set("code", code)
        redirect.searchParams.set("state", url.searchParams.get("state") ?? "")
        if (o.iss !== "omit") {
          redirect.searchParams.set("iss", o.iss === "wrong" ? "https://evil.example" : `${state.origin}/as`)
        }
        res.writeHead(302, { location: redirect.href })
        return res.end()
      }
      if (url.pathname === "/as/register") {
        const metadata = JSON.parse(body.toString("utf8")) as Record<string, unknown>
        rec.registrations.push(metadata)
        const confidential = metadata.token_endpoint_auth_method !== "none"
        return json(res, 201, {
          ...metadata,
          client_id: `dcr-client-${rec.registrations.length}`,
          ...(confidential ? { client_secret: CLIENT_SECRET } : {})
        })
      }
      if (url.pathname === "/idp/token") {
        // RFC 8693 token exchange of an ID token for an ID-JAG (SEP-990).
        const form = new URLSearchParams(body.toString("utf8"))
        rec.exchanges.push(form)
        const { payload } = await jose.jwtVerify(form.get("subject_token") ?? "", idp.publicKey, {
          audience: "idp-client"
        })
        const idJag = await new jose.SignJWT({ client_id: "xaa-client", resource: form.get("resource") })
          .setProtectedHeader({ alg: "ES256", typ: "oauth-id-jag+jwt" })
          .setSubject(String(payload.sub))
          .setIssuer(`${state.origin}/idp`)
          .setAudience(form.get("audience") ?? "")
          .setExpirationTime("5m")
          .sign(idp.privateKey)
        return json(res, 200, {
          access_token: idJag,
          issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
          token_type: "N_A"
        })
      }
      if (url.pathname === "/as/token") {
        const form = new URLSearchParams(body.toString("utf8"))
        rec.tokens.push({ body: form, authorization: req.headers.authorization })
        const resource = form.get("resource") ?? ""
        let jkt: string | undefined
        if (o.dpop !== undefined) {
          const proof = req.headers.dpop
          if (typeof proof !== "string") return json(res, 400, { error: "invalid_dpop_proof" })
          const { payload, jkt: thumbprint } = await verifyProof(proof)
          const { htm, htu, ath, nonce, jti } = payload
          rec.proofs.push({ where: "token", htm, htu, ath, nonce, jti, jkt: thumbprint })
          if (htm !== "POST" || htu !== `${state.origin}/as/token`) {
            return json(res, 400, { error: "invalid_dpop_proof" })
          }
          if (o.dpop === "nonce" && nonce !== AS_NONCE) {
            return json(res, 400, { error: "use_dpop_nonce" }, { "dpop-nonce": AS_NONCE })
          }
          jkt = thumbprint
        }
        switch (form.get("grant_type")) {
          case "authorization_code": {
            const code = form.get("code") ?? ""
            if (state.challenges.get(code) !== s256(form.get("code_verifier") ?? "")) {
              return json(res, 400, { error: "invalid_grant" })
            }
            return issue(res, state.codes.get(code) ?? "", resource, jkt)
          }
          case "refresh_token":
            return issue(res, "mcp:read", resource, jkt)
          case "client_credentials":
            return issue(res, form.get("scope") ?? "", resource, jkt)
          case JWT_BEARER: {
            // A workload JWT (SEP-1933) or an ID-JAG (SEP-990), audience the issuer (RFC 7523 §3).
            const assertion = form.get("assertion") ?? ""
            const key = jose.decodeProtectedHeader(assertion).typ === "oauth-id-jag+jwt"
              ? idp.publicKey
              : workload.publicKey
            const verified = await jose.jwtVerify(assertion, key, { audience: `${state.origin}/as` }).catch(() =>
              undefined
            )
            if (verified === undefined) return json(res, 400, { error: "invalid_grant" })
            return issue(res, form.get("scope") ?? "", resource, jkt)
          }
        }
        return json(res, 400, { error: "unsupported_grant_type" })
      }
      const web = mounted.web
      if (url.pathname === "/mcp" && web !== undefined) {
        rec.mcpAuthorizations.push(req.headers.authorization)
        if (
          o.redirectCallsTo !== undefined && req.method === "POST" && req.headers.authorization !== undefined &&
          (JSON.parse(body.toString("utf8")) as { method?: unknown }).method === "tools/call"
        ) {
          res.writeHead(303, { location: o.redirectCallsTo })
          return res.end()
        }
        if (req.method === "GET" && req.headers.authorization !== undefined && o.refuseFirstGet === true) {
          if (rec.gets.length === 0) {
            rec.gets.push(401)
            return json(res, 401, { error: "invalid_token" }, {
              "www-authenticate": `Bearer error="invalid_token", resource_metadata="${state.origin}${prmPath}"`
            })
          }
          // Our WebHandler has no GET stream (405): the test serves an empty one itself.
          rec.gets.push(200)
          res.writeHead(200, { "content-type": "text/event-stream" })
          return res.end()
        }
        if (o.dpop !== undefined && req.headers.authorization !== undefined) {
          // RFC 9449 §7: a DPoP-bound token comes with the DPoP scheme and a proof for this request.
          const [scheme, token = ""] = req.headers.authorization.split(" ")
          const proof = req.headers.dpop
          const refuse = (error: string, extra: Record<string, string> = {}) =>
            json(res, 401, { error }, {
              "www-authenticate": `DPoP error="${error}", resource_metadata="${state.origin}${prmPath}"`,
              ...extra
            })
          if (scheme !== "DPoP" || typeof proof !== "string") return refuse("invalid_token")
          const { payload, jkt } = await verifyProof(proof)
          const { htm, htu, ath, nonce, jti } = payload
          rec.proofs.push({ where: "mcp", htm, htu, ath, nonce, jti, jkt })
          const bound = (jose.decodeJwt(token).cnf as { jkt?: string } | undefined)?.jkt
          if (
            htm !== req.method || htu !== `${state.origin}/mcp` || ath !== s256(token) || bound !== jkt
          ) return refuse("invalid_dpop_proof")
          if (o.dpop === "nonce" && nonce !== RS_NONCE) return refuse("use_dpop_nonce", { "dpop-nonce": RS_NONCE })
          req.headers.authorization = `Bearer ${token}`
        }
        const authorization = req.headers.authorization
        const challenge = (scope: string) =>
          `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${state.origin}${prmPath}"`
        if (authorization !== undefined && (o.alwaysForbid === true || o.callScope !== undefined)) {
          const token = authorization.replace(/^Bearer /, "")
          const scopes = String(jose.decodeJwt(token).scope ?? "").split(" ")
          const method = String((JSON.parse(body.toString("utf8")) as { method?: unknown }).method)
          if (o.alwaysForbid === true) {
            return json(res, 403, { error: "insufficient_scope" }, { "www-authenticate": challenge("mcp:admin") })
          }
          if (method === "tools/call" && o.callScope !== undefined && !scopes.includes(o.callScope)) {
            return json(res, 403, { error: "insufficient_scope" }, { "www-authenticate": challenge(o.callScope) })
          }
        }
        const headers = new Headers()
        for (const [k, v] of Object.entries(req.headers)) {
          if (typeof v === "string") headers.set(k, v)
        }
        const response = await web(
          new Request(url, {
            method: req.method ?? "GET",
            headers,
            ...(body.length > 0 ? { body: new Uint8Array(body) } : {})
          })
        )
        const out: Record<string, string> = {}
        response.headers.forEach((v, k) => {
          out[k] = v
        })
        res.writeHead(response.status, out)
        return res.end(Buffer.from(await response.arrayBuffer()))
      }
      json(res, 404, { error: "not_found" })
    }

    const server = yield* Effect.acquireRelease(
      Effect.async<Http.Server>((resume) => {
        const s = Http.createServer((req, res) => {
          handle(req, res).catch(() => {
            if (!res.headersSent) res.writeHead(500)
            res.end()
          })
        })
        s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.async<void>((resume) => {
          s.closeAllConnections()
          s.close(() => resume(Effect.void))
        })
    )
    state.origin = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
    const mcp = yield* McpServer.make({
      name: "protected",
      version: "1",
      tools: [Tool.make({ name: "whoami", handler: (_a, ctx) => `hello ${ctx.auth?.subject ?? "nobody"}` })]
    })
    // The token audience is the resource the PRM names (a root PRM names the origin).
    const resource = o.prmAt === "root" ? state.origin : `${state.origin}/mcp`
    const web = WebHandler.toWebHandler(mcp, {
      auth: {
        resource,
        authorizationServers: [`${state.origin}/as`],
        verifier: Auth.jwtVerifier({ issuer: `${state.origin}/as`, audience: resource, keys: [publicKey] })
      }
    })
    mounted.web = web
    yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))
    /** A workload identity JWT (SEP-1933) for the AS, or for `audience`. */
    const workloadJwt = (audience = `${state.origin}/as`) =>
      new jose.SignJWT({}).setProtectedHeader({ alg: "ES256" }).setIssuer("https://workload.example")
        .setSubject("workload-1").setAudience(audience).setExpirationTime("5m").sign(workload.privateKey)
    /** The user's ID token from the identity provider (SEP-990). */
    const idToken = () =>
      new jose.SignJWT({}).setProtectedHeader({ alg: "ES256" }).setIssuer(`${state.origin}/idp`)
        .setSubject("alice").setAudience("idp-client").setExpirationTime("5m").sign(idp.privateKey)
    return { url: `${state.origin}/mcp`, origin: state.origin, rec, workloadJwt, idToken }
  })
