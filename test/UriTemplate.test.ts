import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as UriTemplate from "../src/UriTemplate.js"

// RFC 6570 §3.2 example variables.
const rfcVars: Readonly<Record<string, UriTemplate.ExpandValue>> = {
  count: ["one", "two", "three"],
  dom: ["example", "com"],
  dub: "me/too",
  hello: "Hello World!",
  half: "50%",
  var: "value",
  who: "fred",
  base: "http://example.com/home/",
  path: "/foo/bar",
  list: ["red", "green", "blue"],
  keys: { semi: ";", dot: ".", comma: "," },
  v: "6",
  x: "1024",
  y: "768",
  empty: "",
  empty_keys: {},
  undef: undefined
}

const expandRfc = (template: string): string => UriTemplate.expand(UriTemplate.unsafeParse(template), rfcVars)

const checkAll = (cases: ReadonlyArray<readonly [string, string]>) => {
  for (const [template, expected] of cases) {
    expect(expandRfc(template), template).toBe(expected)
  }
}

const matchOf = (template: string, uri: string) => UriTemplate.match(UriTemplate.unsafeParse(template), uri)

describe("UriTemplate.parse", () => {
  it("parses literals and expressions", () => {
    const t = UriTemplate.unsafeParse("x://repo/{owner}/{name}{?q,page}{&owner}")
    expect(t.template).toBe("x://repo/{owner}/{name}{?q,page}{&owner}")
    expect(t.variables).toEqual(["owner", "name", "q", "page"])
    expect(t.parts).toEqual([
      { _tag: "Literal", value: "x://repo/" },
      { _tag: "Expression", operator: "", variables: [{ name: "owner", explode: false, prefix: undefined }] },
      { _tag: "Literal", value: "/" },
      { _tag: "Expression", operator: "", variables: [{ name: "name", explode: false, prefix: undefined }] },
      {
        _tag: "Expression",
        operator: "?",
        variables: [{ name: "q", explode: false, prefix: undefined }, {
          name: "page",
          explode: false,
          prefix: undefined
        }]
      },
      { _tag: "Expression", operator: "&", variables: [{ name: "owner", explode: false, prefix: undefined }] }
    ])
  })

  it("parses modifiers and every operator", () => {
    const t = UriTemplate.unsafeParse("{+a}{#b}{.c}{/d*}{;e:12}{?f}{&g}{h.i,%41_9}")
    expect(t.variables).toEqual(["a", "b", "c", "d", "e", "f", "g", "h.i", "%41_9"])
    const ops = t.parts.flatMap((p) => p._tag === "Expression" ? [p.operator] : [])
    expect(ops).toEqual(["+", "#", ".", "/", ";", "?", "&", ""])
    expect(t.parts[3]).toEqual({
      _tag: "Expression",
      operator: "/",
      variables: [{ name: "d", explode: true, prefix: undefined }]
    })
    expect(t.parts[4]).toEqual({
      _tag: "Expression",
      operator: ";",
      variables: [{ name: "e", explode: false, prefix: 12 }]
    })
  })

  it("accepts an empty template and pure literals", () => {
    expect(UriTemplate.unsafeParse("").parts).toEqual([])
    expect(UriTemplate.unsafeParse("x://static").variables).toEqual([])
  })

  it.each([
    ["{unclosed", "unclosed"],
    ["x://a/{b", "unclosed"],
    ["x://a/{b{c}", "unclosed"],
    ["x://a/b}", "unmatched '}'"],
    ["{}", "empty expression"],
    ["{a b}", "invalid variable name"],
    ["{a,}", "empty variable name"],
    ["{+}", "empty variable name"],
    ["{.a..b}", "invalid variable name"],
    ["{a-b}", "invalid variable name"],
    ["{%zz}", "invalid variable name"],
    ["{=x}", "unsupported operator '='"],
    ["{,x}", "unsupported operator ','"],
    ["{!x}", "unsupported operator '!'"],
    ["{@x}", "unsupported operator '@'"],
    ["{|x}", "unsupported operator '|'"],
    ["{a:0}", "invalid prefix modifier"],
    ["{a:10000}", "invalid prefix modifier"],
    ["{a:01}", "invalid prefix modifier"],
    ["{a:}", "invalid prefix modifier"],
    ["{a:3*}", "invalid prefix modifier"],
    ["{a*:3}", "invalid variable name"],
    ["{a^}", "invalid variable name"]
  ])("rejects %s", (template, message) => {
    const result = UriTemplate.parse(template)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left).toBeInstanceOf(UriTemplate.UriTemplateError)
      expect(result.left._tag).toBe("UriTemplateError")
      expect(result.left.template).toBe(template)
      expect(result.left.message).toContain(message)
    }
  })

  it("unsafeParse throws the UriTemplateError", () => {
    expect(() => UriTemplate.unsafeParse("{unclosed")).toThrow(UriTemplate.UriTemplateError)
    expect(() => UriTemplate.unsafeParse("{a}")).not.toThrow()
  })
})

describe("UriTemplate.expand (RFC 6570 §1.2 levels)", () => {
  it("level 1", () => {
    checkAll([["{var}", "value"], ["{hello}", "Hello%20World%21"]])
  })

  it("level 2", () => {
    checkAll([
      ["{+var}", "value"],
      ["{+hello}", "Hello%20World!"],
      ["{+path}/here", "/foo/bar/here"],
      ["here?ref={+path}", "here?ref=/foo/bar"],
      ["X{#var}", "X#value"],
      ["X{#hello}", "X#Hello%20World!"]
    ])
  })

  it("level 3", () => {
    checkAll([
      ["map?{x,y}", "map?1024,768"],
      ["{x,hello,y}", "1024,Hello%20World%21,768"],
      ["{+x,hello,y}", "1024,Hello%20World!,768"],
      ["{+path,x}/here", "/foo/bar,1024/here"],
      ["{#x,hello,y}", "#1024,Hello%20World!,768"],
      ["{#path,x}/here", "#/foo/bar,1024/here"],
      ["X{.var}", "X.value"],
      ["X{.x,y}", "X.1024.768"],
      ["{/var}", "/value"],
      ["{/var,x}/here", "/value/1024/here"],
      ["{;x,y}", ";x=1024;y=768"],
      ["{;x,y,empty}", ";x=1024;y=768;empty"],
      ["{?x,y}", "?x=1024&y=768"],
      ["{?x,y,empty}", "?x=1024&y=768&empty="],
      ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
      ["{&x,y,empty}", "&x=1024&y=768&empty="]
    ])
  })

  it("level 4", () => {
    checkAll([
      ["{var:3}", "val"],
      ["{var:30}", "value"],
      ["{list}", "red,green,blue"],
      ["{list*}", "red,green,blue"],
      ["{keys}", "semi,%3B,dot,.,comma,%2C"],
      ["{keys*}", "semi=%3B,dot=.,comma=%2C"],
      ["{+path:6}/here", "/foo/b/here"],
      ["{+list}", "red,green,blue"],
      ["{+list*}", "red,green,blue"],
      ["{+keys}", "semi,;,dot,.,comma,,"],
      ["{+keys*}", "semi=;,dot=.,comma=,"],
      ["{#path:6}/here", "#/foo/b/here"],
      ["{#list}", "#red,green,blue"],
      ["{#list*}", "#red,green,blue"],
      ["{#keys}", "#semi,;,dot,.,comma,,"],
      ["{#keys*}", "#semi=;,dot=.,comma=,"],
      ["X{.var:3}", "X.val"],
      ["X{.list}", "X.red,green,blue"],
      ["X{.list*}", "X.red.green.blue"],
      ["X{.keys}", "X.semi,%3B,dot,.,comma,%2C"],
      ["X{.keys*}", "X.semi=%3B.dot=..comma=%2C"],
      ["{/var:1,var}", "/v/value"],
      ["{/list}", "/red,green,blue"],
      ["{/list*}", "/red/green/blue"],
      ["{/list*,path:4}", "/red/green/blue/%2Ffoo"],
      ["{/keys}", "/semi,%3B,dot,.,comma,%2C"],
      ["{/keys*}", "/semi=%3B/dot=./comma=%2C"],
      ["{;hello:5}", ";hello=Hello"],
      ["{;list}", ";list=red,green,blue"],
      ["{;list*}", ";list=red;list=green;list=blue"],
      ["{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"],
      ["{;keys*}", ";semi=%3B;dot=.;comma=%2C"],
      ["{?var:3}", "?var=val"],
      ["{?list}", "?list=red,green,blue"],
      ["{?list*}", "?list=red&list=green&list=blue"],
      ["{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"],
      ["{?keys*}", "?semi=%3B&dot=.&comma=%2C"],
      ["{&var:3}", "&var=val"],
      ["{&list}", "&list=red,green,blue"],
      ["{&list*}", "&list=red&list=green&list=blue"],
      ["{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"],
      ["{&keys*}", "&semi=%3B&dot=.&comma=%2C"]
    ])
  })
})

describe("UriTemplate.expand (RFC 6570 §3.2 operator examples)", () => {
  it("§3.2.1 variable expansion", () => {
    checkAll([
      ["{count}", "one,two,three"],
      ["{count*}", "one,two,three"],
      ["{/count}", "/one,two,three"],
      ["{/count*}", "/one/two/three"],
      ["{;count}", ";count=one,two,three"],
      ["{;count*}", ";count=one;count=two;count=three"],
      ["{?count}", "?count=one,two,three"],
      ["{?count*}", "?count=one&count=two&count=three"],
      ["{&count*}", "&count=one&count=two&count=three"]
    ])
  })

  it("§3.2.2 simple string expansion", () => {
    checkAll([
      ["{var}", "value"],
      ["{hello}", "Hello%20World%21"],
      ["{half}", "50%25"],
      ["O{empty}X", "OX"],
      ["O{undef}X", "OX"],
      ["{x,y}", "1024,768"],
      ["{x,hello,y}", "1024,Hello%20World%21,768"],
      ["?{x,empty}", "?1024,"],
      ["?{x,undef}", "?1024"],
      ["?{undef,y}", "?768"],
      ["{var:3}", "val"],
      ["{var:30}", "value"],
      ["{list}", "red,green,blue"],
      ["{list*}", "red,green,blue"],
      ["{keys}", "semi,%3B,dot,.,comma,%2C"],
      ["{keys*}", "semi=%3B,dot=.,comma=%2C"]
    ])
  })

  it("§3.2.3 reserved expansion", () => {
    checkAll([
      ["{+var}", "value"],
      ["{+hello}", "Hello%20World!"],
      ["{+half}", "50%25"],
      ["{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"],
      ["{+base}index", "http://example.com/home/index"],
      ["O{+empty}X", "OX"],
      ["O{+undef}X", "OX"],
      ["{+path}/here", "/foo/bar/here"],
      ["here?ref={+path}", "here?ref=/foo/bar"],
      ["up{+path}{var}/here", "up/foo/barvalue/here"],
      ["{+x,hello,y}", "1024,Hello%20World!,768"],
      ["{+path,x}/here", "/foo/bar,1024/here"],
      ["{+path:6}/here", "/foo/b/here"],
      ["{+list}", "red,green,blue"],
      ["{+list*}", "red,green,blue"],
      ["{+keys}", "semi,;,dot,.,comma,,"],
      ["{+keys*}", "semi=;,dot=.,comma=,"]
    ])
  })

  it("§3.2.4 fragment expansion", () => {
    checkAll([
      ["{#var}", "#value"],
      ["{#hello}", "#Hello%20World!"],
      ["{#half}", "#50%25"],
      ["foo{#empty}", "foo#"],
      ["foo{#undef}", "foo"],
      ["{#x,hello,y}", "#1024,Hello%20World!,768"],
      ["{#path,x}/here", "#/foo/bar,1024/here"],
      ["{#path:6}/here", "#/foo/b/here"],
      ["{#list}", "#red,green,blue"],
      ["{#list*}", "#red,green,blue"],
      ["{#keys}", "#semi,;,dot,.,comma,,"],
      ["{#keys*}", "#semi=;,dot=.,comma=,"]
    ])
  })

  it("§3.2.5 label expansion with dot-prefix", () => {
    checkAll([
      ["{.who}", ".fred"],
      ["{.who,who}", ".fred.fred"],
      ["{.half,who}", ".50%25.fred"],
      ["www{.dom*}", "www.example.com"],
      ["X{.var}", "X.value"],
      ["X{.empty}", "X."],
      ["X{.undef}", "X"],
      ["X{.var:3}", "X.val"],
      ["X{.list}", "X.red,green,blue"],
      ["X{.list*}", "X.red.green.blue"],
      ["X{.keys}", "X.semi,%3B,dot,.,comma,%2C"],
      ["X{.keys*}", "X.semi=%3B.dot=..comma=%2C"],
      ["X{.empty_keys}", "X"],
      ["X{.empty_keys*}", "X"]
    ])
  })

  it("§3.2.6 path segment expansion", () => {
    checkAll([
      ["{/who}", "/fred"],
      ["{/who,who}", "/fred/fred"],
      ["{/half,who}", "/50%25/fred"],
      ["{/who,dub}", "/fred/me%2Ftoo"],
      ["{/var}", "/value"],
      ["{/var,empty}", "/value/"],
      ["{/var,undef}", "/value"],
      ["{/var,x}/here", "/value/1024/here"],
      ["{/var:1,var}", "/v/value"],
      ["{/list}", "/red,green,blue"],
      ["{/list*}", "/red/green/blue"],
      ["{/list*,path:4}", "/red/green/blue/%2Ffoo"],
      ["{/keys}", "/semi,%3B,dot,.,comma,%2C"],
      ["{/keys*}", "/semi=%3B/dot=./comma=%2C"]
    ])
  })

  it("§3.2.7 path-style parameter expansion", () => {
    checkAll([
      ["{;who}", ";who=fred"],
      ["{;half}", ";half=50%25"],
      ["{;empty}", ";empty"],
      ["{;v,empty,who}", ";v=6;empty;who=fred"],
      ["{;v,bar,who}", ";v=6;who=fred"],
      ["{;x,y}", ";x=1024;y=768"],
      ["{;x,y,empty}", ";x=1024;y=768;empty"],
      ["{;x,y,undef}", ";x=1024;y=768"],
      ["{;hello:5}", ";hello=Hello"],
      ["{;list}", ";list=red,green,blue"],
      ["{;list*}", ";list=red;list=green;list=blue"],
      ["{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"],
      ["{;keys*}", ";semi=%3B;dot=.;comma=%2C"]
    ])
  })

  it("§3.2.8 form-style query expansion", () => {
    checkAll([
      ["{?who}", "?who=fred"],
      ["{?half}", "?half=50%25"],
      ["{?x,y}", "?x=1024&y=768"],
      ["{?x,y,empty}", "?x=1024&y=768&empty="],
      ["{?x,y,undef}", "?x=1024&y=768"],
      ["{?var:3}", "?var=val"],
      ["{?list}", "?list=red,green,blue"],
      ["{?list*}", "?list=red&list=green&list=blue"],
      ["{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"],
      ["{?keys*}", "?semi=%3B&dot=.&comma=%2C"]
    ])
  })

  it("§3.2.9 form-style query continuation", () => {
    checkAll([
      ["{&who}", "&who=fred"],
      ["{&half}", "&half=50%25"],
      ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
      ["{&x,y,empty}", "&x=1024&y=768&empty="],
      ["{&var:3}", "&var=val"],
      ["{&list}", "&list=red,green,blue"],
      ["{&list*}", "&list=red&list=green&list=blue"],
      ["{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"],
      ["{&keys*}", "&semi=%3B&dot=.&comma=%2C"]
    ])
  })
})

describe("UriTemplate.expand (details)", () => {
  it("is dual", () => {
    const t = UriTemplate.unsafeParse("x://search{?q,lang}")
    expect(UriTemplate.expand(t, { q: "Hello World!" })).toBe("x://search?q=Hello%20World%21")
    expect(UriTemplate.expand({ q: "a", lang: "en" })(t)).toBe("x://search?q=a&lang=en")
  })

  it("encodes UTF-8, counts prefixes in characters, converts numbers and booleans", () => {
    const t = UriTemplate.unsafeParse("{a}/{a:1}/{+a}/{n},{b}")
    expect(UriTemplate.expand(t, { a: "é😀x", n: 42, b: true })).toBe(
      "%C3%A9%F0%9F%98%80x/%C3%A9/%C3%A9%F0%9F%98%80x/42,true"
    )
  })

  it("keeps %XX triplets only for reserved expansion", () => {
    const t = UriTemplate.unsafeParse("{a}/{+a}/{#a}")
    expect(UriTemplate.expand(t, { a: "a%20b%zz" })).toBe("a%2520b%25zz/a%20b%25zz/#a%20b%25zz")
  })

  it("encodes literal characters that are not allowed in a URI", () => {
    expect(UriTemplate.expand(UriTemplate.unsafeParse("x://café/a b/{x}"), { x: "1" })).toBe("x://caf%C3%A9/a%20b/1")
  })

  it("encodes lone surrogates as U+FFFD instead of throwing", () => {
    expect(UriTemplate.expand(UriTemplate.unsafeParse("{a}"), { a: "\uD800" })).toBe("%EF%BF%BD")
  })

  it("ignores inherited properties of the variables object", () => {
    expect(UriTemplate.expand(UriTemplate.unsafeParse("x{?toString}"), {})).toBe("x")
  })

  it("ignores a prefix modifier on composite values", () => {
    expect(UriTemplate.expand(UriTemplate.unsafeParse("{list:2}"), { list: ["red", "green"] })).toBe("red,green")
  })
})

describe("UriTemplate.match", () => {
  it("matches simple variables in path segments", () => {
    expect(matchOf("x://repo/{owner}/{name}", "x://repo/acme/widgets")).toEqual(
      Option.some({ owner: "acme", name: "widgets" })
    )
  })

  it("matches several variables with a reserved tail", () => {
    expect(matchOf("x://repo/{owner}/{name}/blob/{+path}", "x://repo/acme/widgets/blob/src/a%20b/c.ts")).toEqual(
      Option.some({ owner: "acme", name: "widgets", path: "src/a b/c.ts" })
    )
  })

  it("is exact: no partial or prefix matches", () => {
    expect(matchOf("x://repo/{owner}/{name}", "x://repo/acme/widgets/blob/src/a%20b/c.ts")).toEqual(Option.none())
    expect(matchOf("x://repo/{owner}/{name}", "x://repo/acme")).toEqual(Option.none())
    expect(matchOf("x://repo/{owner}/{name}", "x://repo/acme/")).toEqual(Option.none())
    expect(matchOf("x://repo/{owner}", "y://repo/acme")).toEqual(Option.none())
    expect(matchOf("x://repo/{owner}", "prefix-x://repo/acme")).toEqual(Option.none())
    expect(matchOf("x://static", "x://static")).toEqual(Option.some({}))
    expect(matchOf("x://static", "x://static/")).toEqual(Option.none())
    expect(matchOf("x://static", "x://stat")).toEqual(Option.none())
    expect(matchOf("", "")).toEqual(Option.some({}))
  })

  it("never lets a raw '/' (or '?', '#') into a simple variable", () => {
    expect(matchOf("x://content/{path}", "x://content/a/b")).toEqual(Option.none())
    expect(matchOf("x://content/{path}", "x://content/a?b")).toEqual(Option.none())
    expect(matchOf("x://content/{path}", "x://content/a#b")).toEqual(Option.none())
    expect(matchOf("x://content/{path}", "x://content/")).toEqual(Option.none())
  })

  it("percent-decodes simple variables", () => {
    expect(matchOf("x://content/{path}", "x://content/a%2Fb")).toEqual(Option.some({ path: "a/b" }))
    expect(matchOf("x://content/{path}", "x://content/a%20b")).toEqual(Option.some({ path: "a b" }))
    expect(matchOf("x://content/{path}", "x://content/caf%C3%A9")).toEqual(Option.some({ path: "café" }))
    expect(matchOf("x://content/{path}", "x://content/a+b")).toEqual(Option.some({ path: "a+b" }))
  })

  it("matches reserved variables across '/' and decodes them", () => {
    expect(matchOf("file:///{+path}", "file:///docs/guide/intro.md")).toEqual(
      Option.some({ path: "docs/guide/intro.md" })
    )
    expect(matchOf("file:///{+path}", "file:///a%2Fb/c%3Fd")).toEqual(Option.some({ path: "a/b/c?d" }))
    expect(matchOf("file:///{+path}", "file:///")).toEqual(Option.none())
    expect(matchOf("x://{+a}/x/{+b}", "x://p/q/x/r/s")).toEqual(Option.some({ a: "p/q", b: "r/s" }))
  })

  it("matches fragment expressions", () => {
    expect(matchOf("x://doc{#section}", "x://doc#intro/part%201")).toEqual(Option.some({ section: "intro/part 1" }))
    expect(matchOf("x://doc{#section}", "x://doc")).toEqual(Option.some({}))
    expect(matchOf("x://doc/{+path}{#frag}", "x://doc/a/b#c")).toEqual(Option.some({ path: "a/b", frag: "c" }))
  })

  it("matches optional path segments {/var}", () => {
    const t = UriTemplate.unsafeParse("x://items{/id}")
    expect(UriTemplate.match(t, "x://items")).toEqual(Option.some({}))
    expect(UriTemplate.match(t, "x://items/42")).toEqual(Option.some({ id: "42" }))
    expect(UriTemplate.match(t, "x://items/42/43")).toEqual(Option.none())
    const two = UriTemplate.unsafeParse("x://items{/a,b}")
    expect(UriTemplate.match(two, "x://items/1/2")).toEqual(Option.some({ a: "1", b: "2" }))
    expect(UriTemplate.match(two, "x://items/1")).toEqual(Option.some({ a: "1" }))
  })

  it("matches exploded path segments as one value", () => {
    expect(matchOf("x://files{/path*}", "x://files/a/b%20c/d")).toEqual(Option.some({ path: "a/b c/d" }))
  })

  it("matches labels {.var}", () => {
    expect(matchOf("x://file/{name}{.ext}", "x://file/readme.md")).toEqual(Option.some({ name: "readme", ext: "md" }))
    expect(matchOf("x://file/{name}{.ext}", "x://file/a.tar.gz")).toEqual(Option.some({ name: "a.tar", ext: "gz" }))
    expect(matchOf("x://file/{name}{.ext}", "x://file/readme")).toEqual(Option.some({ name: "readme" }))
    expect(matchOf("x://host{.a,b}", "x://host.www.example")).toEqual(Option.some({ a: "www", b: "example" }))
  })

  it("matches path-style parameters {;a,b}", () => {
    const t = UriTemplate.unsafeParse("x://map{;x,y,empty}")
    expect(UriTemplate.match(t, "x://map;x=1024;y=768;empty")).toEqual(Option.some({ x: "1024", y: "768", empty: "" }))
    expect(UriTemplate.match(t, "x://map;y=768")).toEqual(Option.some({ y: "768" }))
    expect(UriTemplate.match(t, "x://map")).toEqual(Option.some({}))
    expect(UriTemplate.match(t, "x://map;z=1")).toEqual(Option.none())
  })

  it("matches query forms {?a,b} and {&c} with optional parameters", () => {
    const t = UriTemplate.unsafeParse("x://search/{kind}{?q,lang}{&page}")
    expect(UriTemplate.match(t, "x://search/docs?q=hello%20world&lang=en&page=2")).toEqual(
      Option.some({ kind: "docs", q: "hello world", lang: "en", page: "2" })
    )
    expect(UriTemplate.match(t, "x://search/docs?q=a/b")).toEqual(Option.some({ kind: "docs", q: "a/b" }))
    expect(UriTemplate.match(t, "x://search/docs?lang=en")).toEqual(Option.some({ kind: "docs", lang: "en" }))
    expect(UriTemplate.match(t, "x://search/docs?q=")).toEqual(Option.some({ kind: "docs", q: "" }))
    expect(UriTemplate.match(t, "x://search/docs")).toEqual(Option.some({ kind: "docs" }))
    expect(UriTemplate.match(t, "x://search/docs?other=1")).toEqual(Option.none())
    expect(UriTemplate.match(t, "x://search/docs?q=1&lang=en&extra=1")).toEqual(Option.none())
    expect(matchOf("x://s?fixed=yes{&x}", "x://s?fixed=yes&x=1024")).toEqual(Option.some({ x: "1024" }))
  })

  it("keeps exploded query variables raw", () => {
    expect(matchOf("x://s{?params*}", "x://s?a=1&b=x%20y")).toEqual(Option.some({ params: "a=1&b=x%20y" }))
  })

  it("matches comma-separated variables {a,b}", () => {
    const t = UriTemplate.unsafeParse("x://point/{x,y}")
    expect(UriTemplate.match(t, "x://point/1024,768")).toEqual(Option.some({ x: "1024", y: "768" }))
    expect(UriTemplate.match(t, "x://point/1024")).toEqual(Option.some({ x: "1024" }))
    expect(UriTemplate.match(t, "x://point/1,2,3")).toEqual(Option.none())
    expect(matchOf("x://{+a,b}", "x://p/q,r")).toEqual(Option.some({ a: "p/q", b: "r" }))
  })

  it("treats a prefix modifier like the plain variable", () => {
    expect(matchOf("x://{var:3}", "x://value")).toEqual(Option.some({ var: "value" }))
  })

  it("matches literals escaped by expansion", () => {
    const t = UriTemplate.unsafeParse("x://café/{x}")
    expect(UriTemplate.match(t, "x://café/1")).toEqual(Option.some({ x: "1" }))
    expect(UriTemplate.match(t, "x://caf%C3%A9/1")).toEqual(Option.some({ x: "1" }))
    expect(UriTemplate.match(t, "x://cafe/1")).toEqual(Option.none())
  })

  it("treats regex metacharacters in literals literally", () => {
    const t = UriTemplate.unsafeParse("x://a.b(c)*+$^[d]/{x}")
    expect(UriTemplate.match(t, "x://a.b(c)*+$^[d]/1")).toEqual(Option.some({ x: "1" }))
    expect(UriTemplate.match(t, "x://aXb(c)*+$^[d]/1")).toEqual(Option.none())
  })

  it("returns none on malformed percent-encoding, never throws", () => {
    expect(matchOf("x://content/{path}", "x://content/a%zzb")).toEqual(Option.none())
    expect(matchOf("x://content/{path}", "x://content/50%")).toEqual(Option.none())
    expect(matchOf("x://content/{path}", "x://content/%E9")).toEqual(Option.none())
    expect(matchOf("file:///{+path}", "file:///a/%C3")).toEqual(Option.none())
    expect(matchOf("x://s{?q}", "x://s?q=%G0")).toEqual(Option.none())
  })

  it("does not treat inherited-looking names specially", () => {
    expect(matchOf("x://{__proto__}/{constructor}", "x://a/b")).toEqual(
      Option.some(Object.fromEntries([["__proto__", "a"], ["constructor", "b"]]))
    )
  })

  it("stays fast on adversarial input (no catastrophic backtracking)", () => {
    const t = UriTemplate.unsafeParse("x://{+a}/{+b}/{+c}/{d}-{e}-{f}!")
    const uri = "x://" + "/".repeat(3000) + "-".repeat(3000)
    const start = performance.now()
    expect(UriTemplate.match(t, uri)).toEqual(Option.none())
    expect(UriTemplate.match(UriTemplate.unsafeParse("{a}-{b}-{c}-{d}"), "-".repeat(5000) + "/")).toEqual(
      Option.none()
    )
    expect(performance.now() - start).toBeLessThan(2000)
  })
})

describe("UriTemplate round trip (expand then match)", () => {
  const values = ["plain", "a b", "café", "é/ü?#&=,;", "100%", "a+b", "😀", "~-._"]

  it("simple and reserved variables", () => {
    const t = UriTemplate.unsafeParse("x://items/{id}/files/{+path}")
    for (const id of values) {
      for (const path of [...values, "dir/sub dir/é.txt", "/abs/path"]) {
        const uri = UriTemplate.expand(t, { id, path })
        expect(UriTemplate.match(t, uri), uri).toEqual(Option.some({ id, path }))
      }
    }
  })

  it("path segments and query parameters", () => {
    const t = UriTemplate.unsafeParse("x://api{/version}/search{?q,lang}")
    for (const q of values) {
      const vars = { version: "v1", q, lang: "fr-FR" }
      expect(UriTemplate.match(t, UriTemplate.expand(t, vars))).toEqual(Option.some(vars))
    }
    expect(UriTemplate.match(t, UriTemplate.expand(t, { lang: "en" }))).toEqual(Option.some({ lang: "en" }))
  })

  it("templates with non-ASCII literals", () => {
    const t = UriTemplate.unsafeParse("x://résumé/{name}")
    expect(UriTemplate.match(t, UriTemplate.expand(t, { name: "José" }))).toEqual(Option.some({ name: "José" }))
  })
})
