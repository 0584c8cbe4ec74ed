import Foundation

/// A W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` header's trace id, span id
/// (the header's `parent-id`) and flags, and the vendors' `tracestate`.
///
/// Every request of a download carries `traceparent` made of the caller's trace id and flags with a span id of
/// its own (Docs/Observability.md, "Trace context").
public struct ImageDownloaderTraceContext: Sendable, Hashable {
    /// 32 lower-case hex digits, not all zero.
    public let traceID: String
    /// 16 lower-case hex digits, not all zero: the span this context names.
    public let spanID: String
    /// The trace flags (bit 0: sampled).
    public let flags: UInt8
    /// The `tracestate` header, if any (list members as given, at most 512 characters).
    public let traceState: String?

    /// Parses a `traceparent` header value (and an optional `tracestate`); nil when it is not a valid one:
    /// version `ff`, wrong lengths, upper-case or non-hex digits, an all-zero trace or span id, or (version 00)
    /// anything after the flags. A later version's extra fields are accepted and dropped, as the
    /// specification asks. An invalid `tracestate` is dropped (the trace goes on without it).
    public init?(traceParent: String, traceState: String? = nil) {
        let fields = traceParent.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, fields[1].count == 32, fields[2].count == 16, fields[3].count == 2,
              Self.isLowerHex(fields[0]), Self.isLowerHex(fields[1]), Self.isLowerHex(fields[2]), Self.isLowerHex(fields[3]),
              fields[0] != "ff", let flags = UInt8(fields[3], radix: 16)
        else { return nil }
        if fields[0] == "00" && fields.count != 4 { return nil }
        guard fields[1].contains(where: { $0 != "0" }), fields[2].contains(where: { $0 != "0" }) else { return nil }
        self.traceID = String(fields[1])
        self.spanID = String(fields[2])
        self.flags = flags
        self.traceState = traceState.flatMap(Self.validTraceState)
    }

    /// A context from its parts; nil when an id is not valid (see `init(traceParent:traceState:)`).
    public init?(traceID: String, spanID: String, flags: UInt8 = 1, traceState: String? = nil) {
        self.init(traceParent: "00-\(traceID)-\(spanID)-\(Self.hex(flags))", traceState: traceState)
    }

    /// The same trace, flags and state, with `spanID` as the span (a child's context).
    init(child spanID: String, of parent: ImageDownloaderTraceContext) {
        traceID = parent.traceID
        self.spanID = spanID
        flags = parent.flags
        traceState = parent.traceState
    }

    /// A fresh random span id of this trace: what a request of the download carries without a tracer.
    func withNewSpanID() -> ImageDownloaderTraceContext {
        ImageDownloaderTraceContext(child: Self.randomSpanID(), of: self)
    }

    /// The `traceparent` header value (version 00).
    public var traceParent: String { "00-\(traceID)-\(spanID)-\(Self.hex(flags))" }

    /// Whether the caller's trace is sampled (flag bit 0).
    public var isSampled: Bool { flags & 1 == 1 }

    /// 16 random lower-case hex digits, never all zero.
    static func randomSpanID() -> String {
        var value: UInt64 = 0
        while value == 0 { value = UInt64.random(in: .min ... .max) }
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func hex(_ byte: UInt8) -> String {
        byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }

    private static func isLowerHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// At most 512 characters of printable ASCII, no more than 32 comma-separated members, each `key=value`.
    private static func validTraceState(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 512, trimmed.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else { return nil }
        let members = trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard members.count <= 32, members.allSatisfy({ member in
            guard let equals = member.firstIndex(of: "=") else { return false }
            return equals != member.startIndex && member.index(after: equals) != member.endIndex
        }) else { return nil }
        return trimmed
    }
}
