import Foundation

extension RedisCacheOptions {
    /// The query parameters a Redis cache URL may carry, so that a whole configuration fits in one string
    /// (an environment variable, `imagedl --http-cache`):
    /// `redis://host:6379/0?prefix=thumbs&max_ttl=86400&max_body=4194304&lock_timeout=10&max_wait=30`
    /// `&connect_timeout=0.25&command_timeout=1&single_flight=0`. Durations are seconds, sizes bytes.
    static let queryParameters = ["prefix", "max_ttl", "max_body", "lock_timeout", "max_wait", "connect_timeout",
                                  "command_timeout", "single_flight"]

    /// These options with the URL's query parameters applied (they win over the values given in code).
    func applying(queryOf url: URL) throws(RedisCacheError) -> RedisCacheOptions {
        try applying(query: URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
    }

    /// These options with `query` (a URL's query, without `?`) applied.
    func applying(query: String?) throws(RedisCacheError) -> RedisCacheOptions {
        var options = self
        guard let query, !query.isEmpty else { return options }
        guard let items = URLComponents(string: "?" + query)?.queryItems else { throw .invalidURL("the query is not a URL query") }
        for item in items {
            let value = item.value ?? ""
            func seconds(maximum: TimeInterval = 30 * 86_400) throws(RedisCacheError) -> TimeInterval {
                guard let number = TimeInterval(value), number.isFinite, number > 0, number <= maximum else {
                    throw .invalidURL("\(item.name) needs a number of seconds above 0, not \"\(value)\"")
                }
                return number
            }
            switch item.name {
            case "prefix":
                guard !value.isEmpty else { throw .invalidURL("prefix must not be empty") }
                options.keyPrefix = value
            case "max_ttl": options.maximumTimeToLive = try seconds(maximum: 365 * 86_400)
            case "max_body":
                guard let bytes = Int(value), bytes >= 0, bytes <= 1 << 30 else {
                    throw .invalidURL("max_body needs a number of bytes up to 1 GiB, not \"\(value)\"")
                }
                options.maximumBodySize = bytes
            case "lock_timeout": options.lockTimeout = try seconds(maximum: 3600)
            case "max_wait": options.maximumWait = try seconds(maximum: 3600)
            case "connect_timeout": options.connectTimeout = try seconds(maximum: 60)
            case "command_timeout": options.commandTimeout = try seconds(maximum: 60)
            case "single_flight":
                guard value == "0" || value == "1" else { throw .invalidURL("single_flight is 0 or 1, not \"\(value)\"") }
                options.singleFlight = value == "1"
            default:
                throw .invalidURL("unknown parameter \"\(item.name)\" (known: \(Self.queryParameters.joined(separator: ", ")))")
            }
        }
        return options
    }
}
