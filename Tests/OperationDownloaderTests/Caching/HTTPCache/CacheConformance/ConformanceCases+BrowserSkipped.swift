import Foundation

// The suite's `browser_skip` cases that a private cache which is not a browser runs: stored 3xx (a browser's
// fetch follows the redirect; this runner, like the downloader's caller of the cache, sees the 3xx), and
// the cache answering the client's own validators with a 304 (a browser's fetch cannot send them to its
// cache). Left out, as shared-cache rules: s-maxage, proxy-revalidate, `private` in a shared cache,
// Authorization. Not ported: the interim (1xx) cases, whose client must see interim responses, which
// URLSession and libcurl never hand to their caller.
extension ConformanceCase {
    static let browserSkippedCases: [ConformanceCase] = redirectStatusCases + conditionalLMCases + conditionalETagCases

    private static let redirectStatusCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        // Corelibs URLSession ends a 3xx without Location with neither a response nor an error, so these carry
        // one; the runner does not follow it (the suite's `redirect: "manual"`).
        let note = "with `Location: /elsewhere` (not followed): corelibs URLSession drops a 3xx without Location"
        let location = field("Location", "/elsewhere")
        for code in [301, 302, 303, 307, 308] {
            let body = conformanceContent(String(code))
            cases.append(ConformanceCase(suite: "status", id: "status-\(code)-fresh", kind: .optional, dependsOn: ["freshness-max-age"],
                                         steps: [freshStep([location]) { $0.status = code; $0.body = body },
                                                 expectStep(.cached) { $0.status = code; $0.body = body }],
                                         note: note, browserSkip: true))
            cases.append(ConformanceCase(suite: "status", id: "status-\(code)-stale", kind: .required, dependsOn: ["status-\(code)-fresh"],
                                         steps: [staleStep([location]) { $0.status = code; $0.body = body },
                                                 expectStep(.notCached) { $0.body = body }],
                                         note: note, browserSkip: true))
        }
        return cases
    }()

    /// A request carrying `If-Modified-Since` at `offset` from the stored response's server time.
    private static func ims(_ offset: Int, rfc850: Bool = false, _ expected: ConformanceExpectation) -> ConformanceStep {
        var step = ConformanceStep(expected: expected, expectedStatus: 304)
        step.requestDates = [("If-Modified-Since", offset, rfc850)]
        return step
    }

    private static let conditionalLMCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ deps: [String], _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "conditional-lm", id: id, kind: .optional, dependsOn: deps, steps: steps, browserSkip: true))
        }
        let fresh = ["freshness-max-age"]
        add("conditional-lm-fresh", fresh, [freshStep([date("Last-Modified", -3000)]), ims(-3000, .cached)])
        add("conditional-lm-fresh-earlier", fresh, [freshStep([date("Last-Modified", -3000)]), ims(-2000, .cached)])
        add("conditional-lm-stale", ["freshness-max-age-stale"], [becomeStaleStep([date("Last-Modified", -3000)]), ims(-3000, .lmValidated)])
        add("conditional-lm-fresh-no-lm", fresh, [freshStep(), ims(-3000, .cached)])
        add("conditional-lm-fresh-rfc850", fresh, [freshStep([date("Last-Modified", -3000)]), ims(-3000, rfc850: true, .cached)])
        return cases
    }()

    private static let conditionalETagCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], etag: String, ifNoneMatch: String,
                 _ modify: (inout ConformanceStep) -> Void = { _ in }) {
            var ask = ConformanceStep(requestHeaders: [("If-None-Match", ifNoneMatch)], expected: .cached, expectedStatus: 304)
            modify(&ask)
            cases.append(ConformanceCase(suite: "conditional-inm", id: id, kind: kind, dependsOn: deps,
                                         steps: [freshStep([field("ETag", etag)]), ask], browserSkip: true))
        }
        let strong = ["conditional-etag-strong-respond"], weak = ["conditional-etag-weak-respond"]
        add("conditional-etag-strong-respond", .optional, ["freshness-max-age"], etag: "\"abcdef\"", ifNoneMatch: "\"abcdef\"")
        add("conditional-304-etag", .required, strong, etag: "\"abcdef\"", ifNoneMatch: "\"abcdef\"") {
            $0.expectedHeaders = [("ETag", .equals(.text("\"abcdef\"")))]
        }
        // If-None-Match matches, If-Modified-Since (before Last-Modified) alone would not: it must not count.
        cases.append(ConformanceCase(suite: "conditional-inm", id: "conditional-etag-precedence", kind: .required, dependsOn: strong,
                                     steps: [freshStep([date("Last-Modified", -5000), field("ETag", "\"abcdef\"")]), {
                                         var step = ims(-10_000, .cached)
                                         step.requestHeaders = [("If-None-Match", "\"abcdef\"")]
                                         return step
                                     }()], browserSkip: true))
        add("conditional-etag-strong-respond-obs-text", .check, strong, etag: "\"abcdefü\"", ifNoneMatch: "\"abcdefü\"") {
            $0.expectedHeaders = [("ETag", .equals(.text("\"abcdefü\"")))]
        }
        add("conditional-etag-quoted-respond-unquoted", .check, strong, etag: "\"abcdef\"", ifNoneMatch: "abcdef")
        add("conditional-etag-unquoted-respond-unquoted", .check, strong, etag: "abcdef", ifNoneMatch: "abcdef")
        add("conditional-etag-unquoted-respond-quoted", .check, strong, etag: "abcdef", ifNoneMatch: "\"abcdef\"")
        add("conditional-etag-weak-respond", .optional, ["freshness-max-age"], etag: "W/\"abcdef\"", ifNoneMatch: "W/\"abcdef\"")
        add("conditional-etag-weak-respond-lowercase", .check, weak, etag: "w/\"abcdef\"", ifNoneMatch: "w/\"abcdef\"")
        add("conditional-etag-weak-respond-backslash", .check, weak, etag: "W\\\"abcdef\"", ifNoneMatch: "W\\\"abcdef\"")
        add("conditional-etag-weak-respond-omit-slash", .check, weak, etag: "W\"abcdef\"", ifNoneMatch: "W\"abcdef\"")
        for (suffix, list) in [("first", "\"abcdef\", \"1234\", \"5678\""), ("second", "\"1234\", \"abcdef\", \"5678\""),
                               ("last", "\"1234\", \"5678\", \"abcdef\"")] {
            add("conditional-etag-strong-respond-multiple-\(suffix)", .optional, strong, etag: "\"abcdef\"", ifNoneMatch: list)
        }
        return cases
    }()
}
