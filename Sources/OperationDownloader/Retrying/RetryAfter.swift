import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `Retry-After` response header (RFC 9110 §10.2.3): delta-seconds or an HTTP-date.
enum RetryAfter {
    /// Seconds to wait that `response` asks for, or nil when it has no valid `Retry-After` (an invalid value is
    /// ignored, as if absent). A date in the past means 0.
    static func delay(in response: URLResponse?, now: Date) -> TimeInterval? {
        guard let http = response as? HTTPURLResponse else { return nil }
        for (key, value) in http.allHeaderFields {
            guard let name = key as? String, name.caseInsensitiveCompare("Retry-After") == .orderedSame else { continue }
            return parse(value as? String ?? "\(value)", now: now)
        }
        return nil
    }

    /// `value` as seconds from `now`; nil when it is neither delta-seconds nor an HTTP-date.
    static func parse(_ value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // delta-seconds: digits only (no sign, no fraction). Absurdly long values read as "very long"
            // (Double never overflows to a trap); the caller caps them at maximumDelay.
            return Double(trimmed) ?? .infinity
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
