import Foundation

// cc-response, stale, heuristic, method, status, cc-request, pragma (see ConformanceModel.swift).
extension ConformanceCase {
    static let directiveCases: [ConformanceCase] = responseDirectiveCases + staleCases + heuristicCases + statusCases
        + requestDirectiveCases

    private static let responseDirectiveCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "cc-response", id: id, kind: kind, dependsOn: deps, steps: steps))
        }
        add("cc-resp-private-private", .optional, [], [setupStep([field("Cache-Control", "private, max-age=3600")], pause: false),
                                                      expectStep(.cached)])
        add("cc-resp-no-store", .required, [], [setupStep([field("Cache-Control", "no-store")], pause: false), expectStep(.notCached)])
        add("cc-resp-no-store-case-insensitive", .required, ["cc-resp-no-store"],
            [setupStep([field("Cache-Control", "No-StOrE")], pause: false), expectStep(.notCached)])
        add("cc-resp-no-store-fresh", .required, ["cc-resp-no-store"],
            [setupStep([field("Cache-Control", "max-age=10000, no-store"), date("Expires", 10_000), date("Date", 0)], pause: false),
             expectStep(.notCached)])
        for (id, second) in [("cc-resp-no-store-old-new", "no-store"), ("cc-resp-no-store-old-max-age", "no-store, max-age=0")] {
            add(id, .required, ["cc-resp-no-store"], [
                setupStep([field("Cache-Control", "max-age=10000"), date("Expires", 10_000), date("Date", 0), field("A", "1")]),
                setupStep([field("Cache-Control", second), date("Date", 0), field("A", "2")]),
                expectStep(.cached) { $0.expectedHeaders = [("a", .equals(.text("1")))] },
            ])
        }
        add("cc-resp-no-cache", .required, [], [
            setupStep([field("Cache-Control", "max-age=10000, no-cache"), date("Expires", 10_000), date("Date", 0)], pause: false),
            expectStep(.notCached),
        ])
        add("cc-resp-no-cache-case-insensitive", .required, ["cc-resp-no-cache"], [
            setupStep([field("Cache-Control", "max-age=10000, No-CaChE"), date("Expires", 10_000), date("Date", 0)], pause: false),
            expectStep(.notCached),
        ])
        add("cc-resp-no-cache-revalidate", .optional, ["cc-resp-no-cache"],
            [setupStep([field("Cache-Control", "no-cache"), field("ETag", "\"abcd\"")], pause: false), expectStep(.etagValidated)])
        add("cc-resp-no-cache-revalidate-fresh", .optional, ["cc-resp-no-cache"], [
            setupStep([field("Cache-Control", "max-age=10000, no-cache"), date("Expires", 10_000), date("Date", 0),
                       field("ETag", "\"abcd\"")], pause: false),
            expectStep(.etagValidated),
        ])
        add("headers-omit-headers-listed-in-Cache-Control-no-cache-single", .check, ["cc-resp-no-cache-revalidate"], [
            setupStep([field("Cache-Control", "no-cache=\"a\""), field("a", "1"), field("b", "2"), field("Cache-Control", "max-age=3600"),
                       date("Date", 0)]),
            expectStep(.cached) {
                $0.expectedHeaders = [("b", .equals(.text("2")))]
                $0.expectedMissingHeaders = ["a"]
            },
        ])
        add("headers-omit-headers-listed-in-Cache-Control-no-cache", .check, ["cc-resp-no-cache-revalidate"], [
            setupStep([field("Cache-Control", "no-cache=\"a, b\""), field("a", "1"), field("b", "2"), field("c", "3"),
                       field("Cache-Control", "max-age=3600"), date("Date", 0)]),
            expectStep(.cached) {
                $0.expectedHeaders = [("c", .equals(.text("3")))]
                $0.expectedMissingHeaders = ["a", "b"]
            },
        ])
        add("cc-resp-must-revalidate-fresh", .optional, ["freshness-none"], [
            setupStep([field("Cache-Control", "max-age=10000, must-revalidate"), field("ETag", "\"abcd\"")], pause: false),
            expectStep(.cached),
        ])
        let mustRevalidate = [field("Cache-Control", "max-age=2, must-revalidate"), field("ETag", "\"abcd\"")]
        add("cc-resp-must-revalidate-stale", .required, ["freshness-none"], [
            setupStep(mustRevalidate, pause: false),
            setupStep(mustRevalidate) { $0.expected = .cached },
            expectStep(.etagValidated),
        ])
        add("cc-resp-immutable-fresh", .optional, [], [
            setupStep([field("Cache-Control", "max-age=10000, immutable"), field("ETag", "\"abcd\"")]),
            expectStep(.cached) { $0.cacheMode = .noCache },
        ])
        add("cc-resp-immutable-stale", .required, [], [
            setupStep([field("Cache-Control", "max-age=2, immutable"), field("ETag", "\"abcd\"")]),
            expectStep(.etagValidated) {
                $0.cacheMode = .noCache
                $0.expectedRequestHeaders = [("cache-control", "max-age=0")]
            },
        ])
        return cases
    }()

    private static let staleCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "stale", id: id, kind: kind, dependsOn: deps, steps: steps))
        }
        let maxAgeStale = ["freshness-max-age-stale"]
        add("stale-close", .check, maxAgeStale, [becomeStaleStep(), expectStep(.cached) { $0.disconnect = true }])
        add("stale-503", .check, maxAgeStale, [becomeStaleStep(), expectStep(.cached) {
            $0.status = 503
            $0.expectedStatus = 200
        }])
        add("stale-while-revalidate", .optional, maxAgeStale, [
            setupStep([field("Cache-Control", "max-age=1, stale-while-revalidate=3600"), field("ETag", "\"abc\"")]),
            expectStep(.cached),
        ])
        add("stale-while-revalidate-window", .required, ["stale-while-revalidate"], [
            setupStep([field("Cache-Control", "max-age=1, stale-while-revalidate=4"), field("ETag", "\"abc\"")]),
            setupStep([field("Cache-Control", "no-cache", checked: false), field("ETag", "\"def\"", checked: false)]) {
                $0.expected = .cached
            },
            // The suite checks Client-Request-Count: 3; the fixture echoes the step that produced the response.
            ConformanceStep(expectedHeaders: [("x-served-step", .equals(.text("3")))]),
        ])
        add("stale-sie-close", .check, maxAgeStale, [
            setupStep([field("Cache-Control", "max-age=2, stale-if-error=60")]),
            expectStep(.cached) { $0.disconnect = true },
        ])
        add("stale-sie-503", .check, maxAgeStale, [
            setupStep([field("Cache-Control", "max-age=2, stale-if-error=60")]),
            expectStep(.cached) {
                $0.status = 503
                $0.expectedStatus = 200
            },
        ])
        for directive in ["must-revalidate", "no-cache"] {
            add("stale-close-\(directive)", .required, ["stale-close"], [
                setupStep([field("Cache-Control", "max-age=2, \(directive)")]),
                ConformanceStep(disconnect: true, expectedStatus: .some(nil), expectedMissingHeaders: ["x-served-step"], checkBody: false),
            ])
        }
        add("stale-warning-stored", .check, ["stale-close"], [staleStep(), ConformanceStep(disconnect: true, expected: .cached,
                                                                                           expectedHeaders: [("warning", .present)])])
        add("stale-warning-become", .check, ["stale-close"], [becomeStaleStep(), ConformanceStep(disconnect: true, expected: .cached,
                                                                                                 expectedHeaders: [("warning", .present)])])
        return cases
    }()

    private static let heuristicCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        let statuses: [(cached: Bool, code: Int, extra: ConformanceField?)] = [
            (true, 200, nil), (false, 201, nil), (false, 202, nil), (true, 203, nil), (true, 204, nil), (false, 403, nil),
            (true, 404, nil), (true, 405, nil), (true, 410, nil), (true, 414, nil), (true, 501, nil), (false, 502, nil),
            (false, 503, nil), (false, 504, nil), (false, 599, nil), (true, 599, field("Cache-Control", "public")),
        ]
        for (cached, code, extra) in statuses {
            let body = code == 204 ? "" : conformanceContent(String(code))
            let headers = [date("Last-Modified", -86_400), date("Date", 0)] + (extra.map { [$0] } ?? [])
            cases.append(ConformanceCase(
                suite: "heuristic", id: "heuristic-\(code)-\(cached ? "cached" : "not_cached")", kind: cached ? .optional : .required,
                steps: [
                    ConformanceStep(status: code, headers: headers, body: body),
                    ConformanceStep(status: code, body: body, expected: cached ? .cached : .notCached),
                ]))
        }
        for delta in [5, 10, 30, 60, 300, 600, 1200, 1800, 3600, 3600 * 12, 3600 * 24] {
            cases.append(ConformanceCase(suite: "heuristic", id: "heuristic-delta-\(delta)", kind: .check, steps: [
                setupStep([date("Last-Modified", -delta), date("Date", 0)]), expectStep(.cached),
            ]))
        }
        cases.append(ConformanceCase(suite: "method", id: "method-POST", kind: .optional, steps: [
            ConformanceStep(method: "POST", requestHeaders: [("Content-Type", "text/plain")],
                            headers: [field("Cache-Control", "max-age=3600"), field("Content-Location", ""), date("Date", 0)],
                            pauseAfter: true, magicLocations: true),
            expectStep(.cached),
        ]))
        return cases
    }()

    private static let statusCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        // 3xx are shared-cache cases (browsers follow redirects), left out like the suite does for browsers.
        for code in [200, 203, 204, 299, 400, 404, 410, 499, 500, 502, 503, 504, 599] {
            let body = code == 204 ? "" : conformanceContent(String(code))
            cases.append(ConformanceCase(suite: "status", id: "status-\(code)-fresh", kind: .optional, dependsOn: ["freshness-max-age"],
                                         steps: [freshStep { $0.status = code; $0.body = body },
                                                 expectStep(.cached) { $0.status = code; $0.body = body }]))
            cases.append(ConformanceCase(suite: "status", id: "status-\(code)-stale", kind: .required, dependsOn: ["status-\(code)-fresh"],
                                         steps: [staleStep { $0.status = code; $0.body = body },
                                                 expectStep(.notCached) { $0.body = body }]))
        }
        cases.append(ConformanceCase(suite: "status", id: "status-599-must-understand", kind: .required, dependsOn: ["status-599-fresh"],
                                     steps: [setupStep([field("Cache-Control", "max-age=3600, no-store, must-understand")], pause: false) {
                                         $0.status = 599
                                     }, expectStep(.notCached)]))
        cases.append(ConformanceCase(suite: "status", id: "status-200-must-understand", kind: .optional,
                                     dependsOn: ["status-200-fresh", "cc-resp-no-store-fresh"],
                                     steps: [setupStep([field("Cache-Control", "max-age=3600, no-store, must-understand")], pause: false),
                                             expectStep(.cached)]))
        return cases
    }()

    private static let requestDirectiveCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ suite: String, _ id: String, _ deps: [String], _ setup: ConformanceStep, _ request: [(String, String)],
                 _ expected: ConformanceExpectation?, _ modify: (inout ConformanceStep) -> Void = { _ in }) {
            var step = ConformanceStep(requestHeaders: request, expected: expected)
            modify(&step)
            cases.append(ConformanceCase(suite: suite, id: id, kind: .check, dependsOn: deps, steps: [setup, step]))
        }
        let maxAge = ["freshness-max-age"]
        add("cc-request", "ccreq-ma0", maxAge, freshStep(), [("Cache-Control", "max-age=0")], .notCached)
        add("cc-request", "ccreq-ma1", maxAge, freshStep(), [("Cache-Control", "max-age=1")], .notCached)
        add("cc-request", "ccreq-magreaterage", maxAge, freshStep([field("Age", "1800")]), [("Cache-Control", "max-age=600")], .notCached)
        add("cc-request", "ccreq-max-stale", ["freshness-max-age-stale"], becomeStaleStep(), [("Cache-Control", "max-stale=1000")], .cached)
        add("cc-request", "ccreq-max-stale-age", maxAge, setupStep([field("Cache-Control", "max-age=1500"), field("Age", "2000")], pause: false),
            [("Cache-Control", "max-stale=1000")], .cached)
        add("cc-request", "ccreq-min-fresh", maxAge, setupStep([field("Cache-Control", "max-age=1500")], pause: false),
            [("Cache-Control", "min-fresh=2000")], .notCached)
        add("cc-request", "ccreq-min-fresh-age", maxAge,
            setupStep([field("Cache-Control", "max-age=1500"), field("Age", "1000")], pause: false),
            [("Cache-Control", "min-fresh=1000")], .notCached)
        add("cc-request", "ccreq-no-cache", maxAge, setupStep([field("Cache-Control", "max-age=3600")], pause: false),
            [("Cache-Control", "no-cache")], .notCached)
        add("cc-request", "ccreq-no-cache-lm", maxAge,
            setupStep([field("Cache-Control", "max-age=3600"), date("Last-Modified", -10_000), date("Date", 0)], pause: false),
            [("Cache-Control", "no-cache")], .lmValidated)
        add("cc-request", "ccreq-no-cache-etag", maxAge,
            setupStep([field("Cache-Control", "max-age=3600"), field("ETag", "\"\(conformanceContent("abc"))\"")], pause: false),
            [("Cache-Control", "no-cache")], .etagValidated)
        add("cc-request", "ccreq-no-store", maxAge, freshStep(), [("Cache-Control", "no-store")], .notCached)
        cases.append(ConformanceCase(suite: "cc-request", id: "ccreq-oic", kind: .check, steps: [
            ConformanceStep(requestHeaders: [("Cache-Control", "only-if-cached")], expectedStatus: 504, checkBody: false),
        ]))
        add("pragma", "pragma-request-no-cache", maxAge, freshStep(), [("Pragma", "no-cache")], .cached)
        add("pragma", "pragma-request-extension", maxAge, freshStep(), [("Pragma", "unrecognised-extension")], .cached)
        add("pragma", "pragma-response-no-cache", maxAge,
            setupStep([field("Cache-Control", "max-age=3600"), field("Pragma", "no-cache")], pause: false), [], .cached)
        add("pragma", "pragma-response-no-cache-heuristic", ["heuristic-200-cached"],
            setupStep([date("Date", 0), date("Last-Modified", -10_000), field("Pragma", "no-cache")], pause: false), [], .cached)
        add("pragma", "pragma-response-extension", maxAge,
            setupStep([field("Cache-Control", "max-age=3600"), field("Pragma", "unrecognised-extension")], pause: false), [], .cached)
        return cases
    }()
}
