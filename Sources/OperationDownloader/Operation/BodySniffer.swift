import Foundation
import Decoding

/// Looks at the first bytes of a body as they arrive and decides whether it can be an image at all, so that
/// an HTML error page, JSON, text or a run of zeros served as `image/jpeg` fails at once (and the transfer is
/// cancelled) instead of being buffered to the end and then blamed on a missing decoder.
///
/// Never rejects what some coder claims: a known image signature or any registered coder's `canDecode` on the
/// prefix wins (so a custom SVG or PNM coder keeps working). Unknown binary data is left to the decoder.
struct BodySniffer {
    /// Bytes looked at before deciding that a body of zeros is not an image; past this, sniffing stops.
    static let maximumPrefix = 4096
    /// Bytes needed before any verdict (every built-in signature fits in 32), unless the body ends sooner.
    static let minimumPrefix = 32

    enum Verdict: Equatable {
        /// Keep feeding.
        case undecided
        /// An image, or at least not recognisably something else: stop sniffing.
        case mayBeImage
        /// What the body looks like instead ("an HTML page", "JSON", ...).
        case notAnImage(String)
    }

    private var prefix = Data()

    /// Adds `data` (new bytes only); `isComplete` when the body has ended.
    mutating func feed(_ data: Data, isComplete: Bool = false, coders: () -> [any ImageCoder]) -> Verdict {
        if prefix.count < Self.maximumPrefix { prefix.append(data.prefix(Self.maximumPrefix - prefix.count)) }
        guard prefix.count >= Self.minimumPrefix || (isComplete && !prefix.isEmpty) else { return .undecided }
        if ImageFormat(sniffing: prefix) != .undefined { return .mayBeImage }
        if coders().contains(where: { $0.canDecode(prefix) }) { return .mayBeImage }
        if let what = Self.describeNonImage(prefix, isComplete: isComplete) { return .notAnImage(what) }
        // Unknown binary data: the decoder decides at the end. Zeros are only conclusive after a while.
        if prefix.allSatisfy({ $0 == 0 }) && prefix.count < Self.maximumPrefix && !isComplete { return .undecided }
        return .mayBeImage
    }

    /// What a body that is no image looks like, from its first bytes, or nil when it is binary data of an
    /// unknown kind. `isComplete`: these are all of the bytes (a short body of zeros is then conclusive).
    static func describeNonImage(_ bytes: Data, isComplete: Bool = true) -> String? {
        let head = bytes.prefix(maximumPrefix)
        if head.isEmpty { return nil }
        if head.allSatisfy({ $0 == 0 }) {
            guard head.count >= maximumPrefix || isComplete else { return nil }
            return head.count >= maximumPrefix ? "zeros (the first \(head.count) bytes are all 0)" : "\(head.count) zero bytes"
        }
        var text = head[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }  // UTF-8 byte-order mark
        text = text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = text.first else { return nil }
        let sample = text.prefix(512)
        let lower = String(decoding: sample.prefix(256), as: UTF8.self).lowercased()
        if first == UInt8(ascii: "<") {
            if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") || lower.contains("<body")
                || lower.contains("<head") {
                return "an HTML page"
            }
            if lower.hasPrefix("<svg") || lower.contains("<svg") { return "SVG (XML; no coder decodes it)" }
            if lower.hasPrefix("<?xml") { return "XML" }
            if isText(sample) { return "HTML or XML markup" }
            return nil
        }
        guard isText(sample) else { return nil }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return "JSON" }
        return "text"
    }

    /// Printable ASCII, whitespace, or bytes of a multi-byte UTF-8 sequence; no other control characters.
    private static func isText(_ bytes: Data.SubSequence) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x0C }
    }

    /// Hex of the first bytes, for messages about unknown data ("3c 21 44 4f").
    static func hexPrefix(_ bytes: Data, count: Int = 8) -> String {
        bytes.prefix(count).map { String(format: "%02x", $0) }.joined(separator: " ")
    }
}
