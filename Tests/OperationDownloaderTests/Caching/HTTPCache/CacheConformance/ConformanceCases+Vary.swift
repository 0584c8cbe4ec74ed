import Foundation

// vary, vary-parse, conditional-inm (see ConformanceModel.swift).
extension ConformanceCase {
    static let varyCases: [ConformanceCase] = negotiationCases + varySyntaxCases + conditionalCases

    /// The suite's vary templates: the request's header fields, and a fresh response that varies on `vary`.
    private static func varySetup(_ request: [(String, String)], vary: String, body: String? = nil,
                                  extraRequest: [(String, String)] = []) -> ConformanceStep {
        ConformanceStep(requestHeaders: request + extraRequest,
                        headers: [field("Cache-Control", "max-age=5000"), date("Last-Modified", -3000), date("Date", 0),
                                  field("Vary", vary, checked: false)],
                        body: body)
    }

    private static let negotiationCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "vary", id: id, kind: kind, dependsOn: deps, steps: steps))
        }
        func ask(_ request: [(String, String)], _ expected: ConformanceExpectation) -> ConformanceStep {
            ConformanceStep(requestHeaders: request, expected: expected)
        }
        let one = [("Foo", "1")]
        let two = [("Foo", "1"), ("Bar", "abc")]
        let three = [("Foo", "1"), ("Bar", "abc"), ("Baz", "789")]
        let match = ["vary-match"]
        add("vary-match", .optional, ["freshness-max-age"], [varySetup(one, vary: "Foo"), ask(one, .cached)])
        add("vary-no-match", .required, match, [varySetup(one, vary: "Foo"), ask([("Foo", "2")], .notCached)])
        add("vary-omit-stored", .required, match, [varySetup([], vary: "Foo"), ask(one, .notCached)])
        add("vary-omit", .required, match, [varySetup(one, vary: "Foo"), ask([], .notCached)])
        add("vary-invalidate", .optional, match, [
            varySetup(one, vary: "Foo", body: conformanceContent("foo_1")),
            ConformanceStep(requestHeaders: [("Foo", "2")],
                            headers: [field("Cache-Control", "max-age=5000"), date("Last-Modified", -3000), date("Date", 0),
                                      field("Vary", "Foo")],
                            body: conformanceContent("foo_2"), expected: .notCached),
            ConformanceStep(requestHeaders: one, body: conformanceContent("foo_1"), expected: .cached),
        ])
        add("vary-cache-key", .optional, match, [varySetup(one, vary: "Foo", extraRequest: [("Other", "2")]),
                                                 ask([("Foo", "1"), ("Other", "3")], .cached)])
        add("vary-2-match", .optional, match, [varySetup(two, vary: "Foo, Bar"), ask(two, .cached)])
        add("vary-2-no-match", .required, ["vary-2-match"], [varySetup(two, vary: "Foo, Bar"), ask([("Foo", "2"), ("Bar", "abc")], .notCached)])
        add("vary-2-match-omit", .required, ["vary-2-match"], [varySetup(two, vary: "Foo, Bar"), ask([], .notCached)])
        add("vary-3-match", .optional, ["vary-2-match"], [varySetup(three, vary: "Foo, Bar, Baz"), ask(three, .cached)])
        add("vary-3-no-match", .required, ["vary-3-match"],
            [varySetup(three, vary: "Foo, Bar, Baz"), ask([("Foo", "2"), ("Bar", "abc"), ("Baz", "789")], .notCached)])
        add("vary-3-order", .required, ["vary-3-match"],
            [varySetup(three, vary: "Foo, Bar, Baz"), ask([("Foo", "1"), ("Baz", "789"), ("Bar", "abcde")], .notCached)])
        add("vary-3-omit", .optional, ["vary-3-match"],
            [varySetup([("Foo", "1"), ("Baz", "789")], vary: "Foo, Bar, Baz"), ask([("Foo", "1"), ("Baz", "789")], .cached)])
        add("vary-star", .required, [], [varySetup([("Foo", "1"), ("Baz", "789")], vary: "*"), ask([("Foo", "1"), ("Baz", "789")], .notCached)])
        // Two Foo lines: URLRequest joins them as "1,2" (addValue), which is what a server would see.
        add("vary-normalise-combine", .optional, match, [varySetup([("Foo", "1, 2")], vary: "Foo"), ask([("Foo", "1,2")], .cached)])
        let languages = [("Accept-Language", "en, de")]
        add("vary-normalise-lang-order", .optional, match,
            [varySetup(languages, vary: "Accept-Language"), ask([("Accept-Language", "de, en")], .cached)])
        add("vary-normalise-lang-case", .optional, match,
            [varySetup(languages, vary: "Accept-Language"), ask([("Accept-Language", "eN, De")], .cached)])
        add("vary-normalise-lang-space", .optional, match,
            [varySetup(languages, vary: "Accept-Language"), ask([("Accept-Language", " en ,   de")], .cached)])
        var select = varySetup(languages, vary: "Accept-Language")
        select.headers.append(field("Content-Language", "de"))
        add("vary-normalise-lang-select", .optional, match, [select, ask([("Accept-Language", "fr;q=0.5, de;q=1.0")], .cached)])
        add("vary-normalise-space", .optional, match, [varySetup([("Foo", "1,2")], vary: "Foo"), ask([("Foo", " 1, 2 ")], .cached)])
        return cases
    }()

    private static let varySyntaxCases: [ConformanceCase] = {
        let request = [("Foo", "1"), ("Baz", "789")]
        let base = [field("Cache-Control", "max-age=5000"), date("Last-Modified", -3000), date("Date", 0)]
        let values: [(String, [String])] = [
            ("vary-syntax-star", ["*"]), ("vary-syntax-star-star", ["*, *"]), ("vary-syntax-star-star-lines", ["*", "*"]),
            ("vary-syntax-empty-star", [", *"]), ("vary-syntax-empty-star-lines", ["", "*"]), ("vary-syntax-star-foo", ["*, Foo"]),
            ("vary-syntax-foo-star", ["Foo, *"]),
        ]
        return values.map { id, lines in
            ConformanceCase(suite: "vary-parse", id: id, kind: .required, dependsOn: ["vary-match"], steps: [
                ConformanceStep(requestHeaders: request, headers: base + lines.map { field("Vary", $0, checked: false) }),
                ConformanceStep(requestHeaders: request, expected: .notCached),
            ])
        }
    }()

    private static let conditionalCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "conditional-inm", id: id, kind: kind, dependsOn: deps, steps: steps))
        }
        add("conditional-etag-vary-headers", .required, [], [
            ConformanceStep(requestHeaders: [("Abc", "123")],
                            headers: [date("Expires", 1), field("ETag", "\"abcdef\""), date("Date", 0), field("Vary", "Abc")],
                            pauseAfter: true),
            ConformanceStep(requestHeaders: [("Abc", "123")], expected: .etagValidated, expectedRequestHeaders: [("Abc", "123")]),
        ])
        add("conditional-etag-vary-headers-mismatch", .check, ["conditional-etag-vary-headers", "vary-no-match"], [
            ConformanceStep(requestHeaders: [("Abc", "123")],
                            headers: [date("Expires", 10_000), field("ETag", "\"abcdef\""), date("Date", 0), field("Vary", "Abc")],
                            pauseAfter: true),
            ConformanceStep(requestHeaders: [("Abc", "456")], expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")]),
        ])
        for (id, kind, tag, sent) in [("conditional-etag-strong-generate", Kind.optional, "\"abcdef\"", "\"abcdef\""),
                                      ("conditional-etag-weak-generate-weak", .optional, "W/\"abcdef\"", "W/\"abcdef\""),
                                      ("conditional-etag-strong-generate-unquoted", .check, "abcdef", "\"abcdef\"")] {
            add(id, kind, kind == .check ? ["conditional-etag-strong-generate"] : ["freshness-max-age-stale"], [
                becomeStaleStep([field("ETag", tag)]),
                expectStep(.etagValidated) { $0.expectedRequestHeaders = [("If-None-Match", sent)] },
            ])
        }
        add("conditional-etag-forward", .check, [], [ConformanceStep(requestHeaders: [("If-None-Match", "\"abcdef\"")],
                                                                     expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")])])
        add("conditional-etag-forward-unquoted", .check, ["conditional-etag-forward"], [
            ConformanceStep(requestHeaders: [("If-None-Match", "abcdef")], expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")]),
        ])
        return cases
    }()
}
