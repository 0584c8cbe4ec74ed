import Foundation

// headers, update304, updateHEAD, invalidation, partial, other (see ConformanceModel.swift).
extension ConformanceCase {
    static let headerCases: [ConformanceCase] = storedFieldCases + update304Cases + headCases + invalidationCases + partialCases
        + otherCases

    /// The suite's list of response fields whose storing and 304 updating it checks.
    private struct ListedField {
        let name: String
        var a: String?
        var b: String?
        var noStore = false
        var noUpdate = false
        var requiredUpdate = false
        /// The body's length must match (Content-Length): the body is not compared.
        var checkBody = true
        /// Why the port uses other values than the suite's (a value libcurl cannot carry).
        var note: String?
    }

    private static let listedFields: [ListedField] = [
        ListedField(name: "Test-Header", requiredUpdate: true), ListedField(name: "X-Test-Header", requiredUpdate: true),
        ListedField(name: "Content-Foo", requiredUpdate: true), ListedField(name: "X-Content-Foo", requiredUpdate: true),
        ListedField(name: "Cache-Control", a: "max-age=1", b: "max-age=3600", requiredUpdate: true),
        ListedField(name: "Connection", noStore: true),
        ListedField(name: "Content-Encoding", a: "identity", b: "identity",
                    note: "value `identity`: libcurl fails a response in any coding it does not decode, and decodes the others"),
        ListedField(name: "Content-Length", a: "36", b: "10", noUpdate: true, checkBody: false),
        ListedField(name: "Content-Location", a: "/foo", b: "/bar"),
        ListedField(name: "Content-MD5", a: "rL0Y20zC+Fzt72VPzMSk2A==", b: "N7UdGUp1E+RbVvZSTy1R8g=="),
        ListedField(name: "Content-Range"),
        ListedField(name: "Content-Security-Policy", a: "default-src 'self'", b: "default-src 'self' cdn.example.com"),
        ListedField(name: "Content-Type", a: "text/plain", b: "text/plain;charset=utf-8"),
        ListedField(name: "Clear-Site-Data", a: "cache", b: "cookies"),
        ListedField(name: "ETag", a: "\"abcdef\"", b: "\"ghijkl\""),
        ListedField(name: "Expires", a: "Fri, 01 Jan 2038 01:01:01 GMT", b: "Mon, 11 Jan 2038 11:11:11 GMT"),
        ListedField(name: "Keep-Alive", noStore: true), ListedField(name: "Proxy-Authenticate", noStore: true),
        ListedField(name: "Proxy-Authentication-Info", noStore: true), ListedField(name: "Proxy-Authorization", noStore: true),
        ListedField(name: "Proxy-Connection", noStore: true), ListedField(name: "Public-Key-Pins"),
        ListedField(name: "Set-Cookie", a: "a=b", b: "a=c"), ListedField(name: "Set-Cookie2", a: "a=b", b: "a=c"),
        ListedField(name: "TE", noStore: true),
        ListedField(name: "Transfer-Encoding", b: "chunked", noStore: true,
                    note: "value `chunked` (with a chunked body): libcurl fails a response in a transfer coding it does not know"),
        ListedField(name: "Upgrade", noStore: true),
        ListedField(name: "X-Frame-Options", a: "deny", b: "sameorigin"), ListedField(name: "X-XSS-Protection", a: "1", b: "1; mode=block"),
    ]

    /// The body of a step whose Content-Length the case sets: exactly that long.
    private static func body(for field: ListedField, value: String) -> String? {
        guard field.name == "Content-Length", let length = Int(value) else { return nil }
        return String(repeating: "x", count: length)
    }

    private static let storedFieldCases: [ConformanceCase] = {
        var cases = [ConformanceCase(suite: "headers", id: "headers-omit-headers-listed-in-Connection", kind: .required,
                                     dependsOn: ["freshness-max-age"], steps: [
            freshStep([field("Connection", "a, b", checked: false), field("a", "1", checked: false), field("b", "2", checked: false),
                       field("c", "3", checked: false)]),
            expectStep(.cached) {
                $0.expectedHeaders = [("c", .equals(.text("3")))]
                $0.expectedMissingHeaders = ["a", "b"]
            },
        ])]
        for listed in listedFields {
            let value = listed.b ?? conformanceContent("\(listed.name)-store-value")
            let stored = !listed.noStore
            var headers = [date("Date", 0), field(listed.name, value, checked: stored)]
            if listed.name != "Cache-Control" { headers.append(field("Cache-Control", "max-age=3600")) }
            var first = setupStep(headers) { $0.body = body(for: listed, value: value) }
            first.checkBody = listed.checkBody
            var second = expectStep(.cached)
            second.checkBody = listed.checkBody
            if stored { second.expectedHeaders = [(listed.name, .equals(.text(value)))] }
            // A field that must not be stored must not come back with the value that was sent.
            if !stored { second.expectedMissingHeaders = [listed.name] }
            cases.append(ConformanceCase(suite: "headers", id: "headers-store-\(listed.name)", kind: .required,
                                         dependsOn: ["freshness-max-age"], steps: [first, second], note: listed.note))
        }
        return cases
    }()

    private static let update304Cases: [ConformanceCase] = {
        let lm = "Wed, 01 Jan 2020 00:00:00 GMT"
        let valueA = conformanceContent("Test-Header-value-A")
        var cases = [ConformanceCase(suite: "update304", id: "304-lm-use-stored-Test-Header", kind: .required, steps: [
            setupStep([field("Cache-Control", "max-age=2"), field("Last-Modified", lm), date("Date", 0), field("Test-Header", valueA)]),
            ConformanceStep(headers: [field("Last-Modified", lm), date("Date", 0)], expected: .lmValidated,
                            expectedHeaders: [("Test-Header", .equals(.text(valueA)))]),
        ])]
        for listed in listedFields where !listed.noStore {
            let a = listed.a ?? conformanceContent("\(listed.name)-value-A")
            let b = listed.b ?? conformanceContent("\(listed.name)-value-B")
            let expected = listed.noUpdate ? a : b
            let etag = "\"\(conformanceContent("\(listed.name)-etag-1"))\""
            func response(_ value: String, validator: Bool) -> [ConformanceField] {
                var headers = [date("Date", 0), field(listed.name, value, checked: !listed.noUpdate)]
                if listed.name != "Cache-Control" { headers.append(field("Cache-Control", "max-age=2")) }
                if validator, listed.name != "ETag" { headers.append(field("ETag", etag)) }
                return headers
            }
            let kind: Kind = listed.noUpdate || listed.requiredUpdate ? .required : .check
            var steps = [
                ConformanceStep(headers: response(a, validator: true), body: body(for: listed, value: a), pauseAfter: true),
                ConformanceStep(headers: response(b, validator: true), expected: .etagValidated,
                                expectedHeaders: [(listed.name, .equals(.text(expected)))]),
                ConformanceStep(headers: response(expected, validator: false), expected: .cached,
                                expectedHeaders: [(listed.name, .equals(.text(expected)))]),
            ]
            for index in steps.indices { steps[index].checkBody = listed.checkBody }
            cases.append(ConformanceCase(suite: "update304", id: "304-etag-update-response-\(listed.name)", kind: kind,
                                         dependsOn: ["304-lm-use-stored-Test-Header"], steps: steps, note: listed.note))
        }
        return cases
    }()

    private static let headCases: [ConformanceCase] = {
        func head(_ modify: (inout ConformanceStep) -> Void = { _ in }) -> ConformanceStep {
            var step = ConformanceStep(method: "HEAD")
            modify(&step)
            return step
        }
        let fresher = [field("Cache-Control", "max-age=1000")]
        return [
            ConformanceCase(suite: "updateHEAD", id: "head-writethrough", kind: .check, dependsOn: ["freshness-max-age-stale"],
                            steps: [becomeStaleStep(), head()]),
            ConformanceCase(suite: "updateHEAD", id: "head-200-retain", kind: .check, dependsOn: ["head-writethrough"],
                            steps: [becomeStaleStep(), head { $0.expectedHeaders = [("Template-A", .equals(.text("1")))] }]),
            ConformanceCase(suite: "updateHEAD", id: "head-200-freshness-update", kind: .check, dependsOn: ["head-writethrough"],
                            steps: [becomeStaleStep(), head { $0.headers = fresher }, expectStep(.cached)]),
            ConformanceCase(suite: "updateHEAD", id: "head-200-update", kind: .check, dependsOn: ["head-200-freshness-update"],
                            steps: [becomeStaleStep(), head { $0.headers = [field("Template-A", "2")] + fresher },
                                    expectStep(.cached) { $0.expectedHeaders = [("Template-A", .equals(.text("2")))] }]),
            ConformanceCase(suite: "updateHEAD", id: "head-410-update", kind: .check, dependsOn: ["head-200-freshness-update"],
                            steps: [becomeStaleStep(), head { $0.status = 410; $0.headers = [field("Template-A", "2")] + fresher },
                                    expectStep(.cached) { $0.expectedHeaders = [("Template-A", .equals(.text("2")))] }]),
        ]
    }()

    private static let invalidationCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        let methods = ["POST", "PUT", "DELETE", "M-SEARCH"]
        for method in methods {
            cases.append(ConformanceCase(suite: "invalidation", id: "invalidate-\(method)", kind: .required, dependsOn: ["freshness-max-age"],
                                         steps: [freshStep(), ConformanceStep(method: method), expectStep(.notCached)]))
            cases.append(ConformanceCase(suite: "invalidation", id: "invalidate-\(method)-failed", kind: .optional,
                                         dependsOn: ["invalidate-\(method)"],
                                         steps: [freshStep(), ConformanceStep(method: method, status: 500), expectStep(.cached)]))
        }
        func target(_ filename: String, _ expected: ConformanceExpectation? = nil) -> ConformanceStep {
            ConformanceStep(filename: filename,
                            headers: [field("Cache-Control", "max-age=100000"), date("Last-Modified", 0), date("Date", 0)],
                            expected: expected)
        }
        let pointing = { (method: String) in
            ConformanceStep(method: method, headers: [field("Location", "location_target"),
                                                      field("Content-Location", "content_location_target")], magicLocations: true)
        }
        for method in methods {
            cases.append(ConformanceCase(suite: "invalidation", id: "invalidate-\(method)-location", kind: .check,
                                         dependsOn: ["invalidate-\(method)"],
                                         steps: [target("location_target"), pointing(method), target("location_target", .notCached)]))
        }
        for method in methods {
            cases.append(ConformanceCase(suite: "invalidation", id: "invalidate-\(method)-cl", kind: .check,
                                         dependsOn: ["invalidate-\(method)"],
                                         steps: [target("content_location_target"), pointing(method),
                                                 target("content_location_target", .notCached)]))
        }
        return cases
    }()

    private static let partialCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "partial", id: id, kind: kind,
                                         dependsOn: kind == .required ? ["partial-store-complete-reuse-partial"] : ["freshness-max-age"],
                                         steps: steps))
        }
        func partialSetup(_ contentRange: String) -> ConformanceStep {
            ConformanceStep(requestHeaders: [("Range", "bytes=-5")], status: 206,
                            headers: [field("Cache-Control", "max-age=3600"), field("Content-Range", contentRange)], body: "01234")
        }
        func rangeRequest(_ range: String, _ text: String) -> ConformanceStep {
            ConformanceStep(requestHeaders: [("Range", range)], expected: .cached, expectedStatus: 206, expectedText: text)
        }
        let complete = { (body: String) in ConformanceStep(headers: [field("Cache-Control", "max-age=3600")], body: body) }
        var first = partialSetup("bytes 4-9/10")
        first.expectedRequestHeaders = [("Range", "bytes=-5")]
        add("partial-store-partial-reuse-partial", .optional, [first, rangeRequest("bytes=-5", "01234")])
        add("partial-store-complete-reuse-partial", .optional, [complete("01234567890"), rangeRequest("bytes=0-1", "01")])
        add("partial-store-complete-reuse-partial-no-last", .optional, [complete("01234567890"), rangeRequest("bytes=1-", "1234567890")])
        add("partial-store-complete-reuse-partial-suffix", .optional, [complete("0123456789A"), rangeRequest("bytes=-1", "A")])
        add("partial-store-partial-reuse-partial-byterange", .optional, [partialSetup("bytes 4-9/10"), rangeRequest("bytes=6-8", "234")])
        add("partial-store-partial-reuse-partial-absent", .optional, [partialSetup("bytes 4-9/10"), rangeRequest("bytes=6-", "234")])
        add("partial-store-partial-reuse-partial-suffix", .optional, [partialSetup("bytes 4-9/10"), rangeRequest("bytes=-1", "4")])
        add("partial-store-partial-complete", .optional, [partialSetup("bytes 0-4/10"),
                                                          ConformanceStep(expectedRequestHeaders: [("range", "bytes=5-")])])
        var newHeaders = rangeRequest("bytes=0-1", "01")
        newHeaders.headers = [field("A", "2")]
        add("partial-use-headers", .required, [ConformanceStep(headers: [field("Cache-Control", "max-age=3600"), field("A", "1")],
                                                               body: "01234567890"), newHeaders])
        var storedHeaders = rangeRequest("bytes=0-1", "01")
        storedHeaders.expectedHeaders = [("A", .equals(.text("1")))]
        add("partial-use-stored-headers", .required, [ConformanceStep(headers: [field("Cache-Control", "max-age=3600"), field("A", "1")],
                                                                      body: "01234567890"), storedHeaders])
        return cases
    }()

    private static let otherCases: [ConformanceCase] = {
        var cases: [ConformanceCase] = []
        func add(_ id: String, _ kind: Kind, _ deps: [String], _ steps: [ConformanceStep]) {
            cases.append(ConformanceCase(suite: "other", id: id, kind: kind, dependsOn: deps, steps: steps))
        }
        add("other-age-gen", .required, ["freshness-max-age"],
            [freshStep(), expectStep(.cached) { $0.expectedHeaders = [("Age", .greaterThan(2))] }])
        add("other-age-delay", .check, [], [ConformanceStep(headers: [field("Cache-Control", "max-age=3600"), date("Date", 0)],
                                                            responsePause: 5, expectedHeaders: [("age", .greaterThan(0))])])
        add("other-age-update-expires", .required, ["freshness-expires-future"], [
            setupStep([date("Expires", 30 * 86_400), date("Date", 0), field("Age", "30")]),
            expectStep(.cached) { $0.expectedHeaders = [("Age", .greaterThan(32))] },
        ])
        add("other-age-update-max-age", .required, ["freshness-max-age"],
            [freshStep([field("Age", "30")]), expectStep(.cached) { $0.expectedHeaders = [("Age", .greaterThan(32))] }])
        add("other-date-update", .required, ["freshness-max-age"],
            [freshStep(), expectStep(.cached) { $0.expectedHeaders = [("Date", .equals(.date(0)))] }])
        add("other-date-update-expires", .required, ["freshness-expires-future"], [
            setupStep([date("Expires", 30 * 86_400), date("Date", 0)]),
            expectStep(.cached) { $0.expectedHeaders = [("Date", .equals(.date(0)))] },
        ])
        add("other-date-update-expires-update", .check, ["freshness-expires-future"], [
            setupStep([date("Expires", 30 * 86_400), date("Date", 0)]),
            expectStep(.cached) { $0.expectedHeaders = [("Expires", .equals(.date(30 * 86_400)))] },
        ])
        add("query-args-different", .required, ["freshness-max-age"], [
            freshStep { $0.queryArgument = conformanceContent("query-args-different-1") },
            expectStep(.notCached) { $0.queryArgument = conformanceContent("query-args-different-2") },
        ])
        add("query-args-same", .optional, ["freshness-max-age"], [
            freshStep { $0.queryArgument = conformanceContent("query-args-same") },
            expectStep(.cached) { $0.queryArgument = conformanceContent("query-args-same") },
        ])
        add("other-heuristic-content-disposition-attachment", .check, ["heuristic-200-cached"], [
            setupStep([date("Last-Modified", -100_000), date("Date", 0), field("Content-Disposition", "attachment; filename=example.txt")],
                      pause: false),
            expectStep(.cached),
        ])
        add("other-fresh-content-disposition-attachment", .check, ["freshness-max-age"],
            [freshStep([field("Content-Disposition", "attachment; filename=example.txt")]), expectStep(.cached)])
        add("other-set-cookie", .optional, ["freshness-max-age"], [freshStep([field("Set-Cookie", "a=b")]), expectStep(.cached)])
        add("other-cookie", .optional, ["freshness-max-age"], [freshStep(), expectStep(.cached) { $0.requestHeaders = [("Cookie", "a=b")] }])
        return cases
    }()
}
