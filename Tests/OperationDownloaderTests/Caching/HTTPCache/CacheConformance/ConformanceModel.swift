import Foundation

// A port of the private-cache cases of the HTTP caching test suite (github.com/http-tests/cache-tests,
// tests/*.mjs; the cases graded at cache-tests.fyi), written as data for `ConformanceRunner`. Each case is a
// short sequence of requests to one URL of the fixture server's `/cache` endpoint; the server answers
// request n with step n's status, header fields and body, and the runner checks what the cache made of them.
// Shared-cache-only (`browser_skip`) and CDN-only cases are left out, as the suite does for browsers.

/// A header value: literal text, or an HTTP-date `offset` seconds from the step's server time (the suite's
/// integer values). `rfc850` writes the date in the obsolete RFC 850 form.
enum ConformanceValue: Sendable {
    case text(String)
    case date(Int, rfc850: Bool = false)
}

/// A response header field. `checked`: the client must see it with this value whenever the response came
/// from the server (the suite's third element, true unless `false`).
struct ConformanceField: Sendable {
    let name: String
    let value: ConformanceValue
    var checked = true
}

/// What a step expects of the response source (the suite's `expected_type`).
enum ConformanceExpectation: Sendable, Equatable {
    /// Answered by the cache: no request of this step reached the server in the foreground.
    case cached
    /// Answered by the server.
    case notCached
    /// Revalidated with If-None-Match equal to the previous step's ETag (the server answers 304).
    case etagValidated
    /// Revalidated with If-Modified-Since equal to the previous step's Last-Modified (the server answers 304).
    case lmValidated
}

/// A check of a response header the client sees.
enum ConformanceHeaderCheck: Sendable {
    case present
    case equals(ConformanceValue)
    case greaterThan(Int)
}

/// How the client request asks the cache (the suite's fetch `cache` mode, mapped to `URLRequest.CachePolicy`).
enum ConformanceCacheMode: Sendable {
    case noCache  // .reloadRevalidatingCacheData
}

struct ConformanceStep: Sendable {
    var method = "GET"
    var requestHeaders: [(String, String)] = []
    /// Request fields holding an HTTP-date `offset` seconds from the previous step's server time (the suite's
    /// `magic_ims`), in the RFC 850 form when `rfc850` (the suite's `rfc850date`).
    var requestDates: [(name: String, offset: Int, rfc850: Bool)] = []
    var cacheMode: ConformanceCacheMode?
    /// The URL's query gets `&test=<value>` (the suite's `query_arg`).
    var queryArgument: String?
    /// Another path under the case's URL (the suite's `filename`).
    var filename: String?
    /// nil: 200, and the client must see 200 unless `expectedStatus` says otherwise.
    var status: Int?
    var headers: [ConformanceField] = []
    /// nil: the case's default body; "" with a 204.
    var body: String?
    var pauseAfter = false
    /// Seconds between the request and the response (the suite's `response_pause`).
    var responsePause = 0
    var disconnect = false
    /// Location and Content-Location headers hold URLs relative to the case's URL (`magic_locations`).
    var magicLocations = false
    var expected: ConformanceExpectation?
    /// nil: the suite's default status check; `.some(nil)`: no status check.
    var expectedStatus: Int??
    var expectedHeaders: [(String, ConformanceHeaderCheck)] = []
    var expectedMissingHeaders: [String] = []
    /// Request header fields the server must have received for this step.
    var expectedRequestHeaders: [(String, String)] = []
    var checkBody = true
    var expectedText: String?
}

struct ConformanceCase: Sendable {
    enum Kind: String, Sendable {
        case required, optional, check
    }

    let suite: String
    let id: String
    let kind: Kind
    var dependsOn: [String] = []
    let steps: [ConformanceStep]
    /// Why this port differs from the suite's case (a value libcurl cannot carry, a header the runner cannot
    /// send), shown in the report.
    var note: String?
    /// The suite's `browser_skip`: not graded for browsers (which cannot run it), but a private cache that is
    /// not a browser can (status 3xx without following redirects, answering the client's own validators).
    var browserSkip = false
}

// MARK: Building blocks (the suite's templates and shorthands)

func field(_ name: String, _ value: String, checked: Bool = true) -> ConformanceField {
    ConformanceField(name: name, value: .text(value), checked: checked)
}

func date(_ name: String, _ offset: Int, checked: Bool = true) -> ConformanceField {
    ConformanceField(name: name, value: .date(offset), checked: checked)
}

/// The suite's `fresh` template: `Cache-Control: max-age=100000`, `Date: 0`, setup, pause after.
func freshStep(_ extra: [ConformanceField] = [], _ modify: (inout ConformanceStep) -> Void = { _ in }) -> ConformanceStep {
    var step = ConformanceStep(headers: [field("Cache-Control", "max-age=100000"), date("Date", 0)] + extra, pauseAfter: true)
    modify(&step)
    return step
}

/// The suite's `stale` template: `Expires: -5000`, `Last-Modified: -100000`, `Date: 0`, pause after.
func staleStep(_ extra: [ConformanceField] = [], _ modify: (inout ConformanceStep) -> Void = { _ in }) -> ConformanceStep {
    var step = ConformanceStep(headers: [date("Expires", -5000), date("Last-Modified", -100_000), date("Date", 0)] + extra,
                               pauseAfter: true)
    modify(&step)
    return step
}

/// The suite's `becomeStale` template: `Cache-Control: max-age=2`, `Date: 0`, `Template-A: 1`, pause after.
func becomeStaleStep(_ extra: [ConformanceField] = [], _ modify: (inout ConformanceStep) -> Void = { _ in }) -> ConformanceStep {
    var step = ConformanceStep(headers: [field("Cache-Control", "max-age=2"), date("Date", 0), field("Template-A", "1")] + extra,
                               pauseAfter: true)
    modify(&step)
    return step
}

/// A setup step with these response headers and a pause after.
func setupStep(_ headers: [ConformanceField], pause: Bool = true, _ modify: (inout ConformanceStep) -> Void = { _ in }) -> ConformanceStep {
    var step = ConformanceStep(headers: headers, pauseAfter: pause)
    modify(&step)
    return step
}

/// A step that only checks the response source.
func expectStep(_ expected: ConformanceExpectation, _ modify: (inout ConformanceStep) -> Void = { _ in }) -> ConformanceStep {
    var step = ConformanceStep(expected: expected)
    modify(&step)
    return step
}

/// The suite's `httpContent`: deterministic letters from a seed string (bodies and header values).
func conformanceContent(_ seed: String, length: Int = 15) -> String {
    let keySeed = seed.unicodeScalars.reduce(0) { $0 + Int($1.value) }
    return String((0..<length).map { Character(UnicodeScalar(UInt8((($0 * keySeed) % 26) + 97))) })
}
