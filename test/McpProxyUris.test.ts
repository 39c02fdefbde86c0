/**
 * The proxy's URI namespace (docs/proxy.md, "Resource URIs"): the mapping of a backend's URI to
 * the proxy's round-trips for every URI and prefix, and no proxied URI maps back to two
 * backends. Property-based (fast-check, through `effect/FastCheck`) plus the documented examples.
 * Through-the-proxy behaviour is in McpProxyNamespaces.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { fromProxy, toProxy } from "../src/internal/proxy/uris.js"

const prefix = FastCheck.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/)
const scheme = FastCheck.stringMatching(/^[A-Za-z][A-Za-z0-9+.-]{0,6}$/)
/** Any text after `scheme:`, biased to the shapes URIs have (`//`, `///`, `{var}` expressions). */
const rest = FastCheck.oneof(
  FastCheck.string(),
  FastCheck.string().map((s) => `//${s}`),
  FastCheck.string().map((s) => `///${s}`),
  FastCheck.tuple(FastCheck.string(), FastCheck.string()).map(([a, b]) => `//${a}/{id}${b}{?q}`),
  FastCheck.string().map((s) => `${s}:${s}`)
)
const uri = FastCheck.tuple(scheme, rest).map(([s, r]) => `${s}:${r}`)

describe("McpProxy URI namespace", () => {
  it("the documented examples", () => {
    expect(toProxy("apps", "ui://dice/view.html")).toBe("ui://apps/dice/view.html")
    expect(toProxy("fs", "file:///etc/hosts")).toBe("file://fs//etc/hosts")
    expect(toProxy("fs", "file:///items/{id}{?v}")).toBe("file://fs//items/{id}{?v}")
    expect(toProxy("books", "urn:isbn:123")).toBe("urn:books:isbn:123")
    expect(toProxy("a", "mailto:x@y")).toBe("mailto:a:x@y")
    expect(toProxy("p", "{+base}/x")).toBeUndefined()
    expect(toProxy("p", "no scheme")).toBeUndefined()
    expect(fromProxy("apps", "ui://apps/dice/view.html")).toBe("ui://dice/view.html")
    expect(fromProxy("fs", "file://fs//etc/hosts")).toBe("file:///etc/hosts")
    expect(fromProxy("books", "urn:books:isbn:123")).toBe("urn:isbn:123")
    expect(fromProxy("fs", "file:///etc/hosts")).toBeUndefined()
    expect(fromProxy("a", "ui://a.b/x")).toBeUndefined()
  })

  it("round-trips for every URI and prefix", () => {
    FastCheck.assert(
      FastCheck.property(prefix, uri, (p, u) => {
        const mapped = toProxy(p, u)
        return mapped !== undefined && mapped.startsWith(u.slice(0, u.indexOf(":") + 1)) && fromProxy(p, mapped) === u
      }),
      { numRuns: 2_000 }
    )
  })

  it("a proxied URI is in exactly one backend's namespace, and two URIs never map to one", () => {
    FastCheck.assert(
      FastCheck.property(prefix, prefix, uri, uri, (p1, p2, u1, u2) => {
        const m1 = toProxy(p1, u1)
        const m2 = toProxy(p2, u2)
        if (m1 === undefined || m2 === undefined) return false
        const other = fromProxy(p2, m1)
        const owned = p1 === p2 ? other === u1 : other === undefined
        const distinct = m1 !== m2 || (p1 === p2 && u1 === u2)
        return owned && distinct
      }),
      { numRuns: 5_000 }
    )
  })
})
