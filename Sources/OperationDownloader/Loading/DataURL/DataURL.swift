import Foundation

/// A parsed `data:` URL (RFC 2397, read as the WHATWG fetch standard's data: URL processor does):
/// `data:[<media type>][;base64],<data>`.
///
/// The payload stays inside the URL's string: `validate()` walks it once to check it and count the bytes it
/// decodes to (so the size limit applies before anything is decoded), and `decode(chunkSize:deliver:)` then
/// decodes it a chunk at a time (DataURLDecoding.swift). Percent escapes are decoded first, then base64 when the media type ends in
/// `;base64` ("forgiving" base64: ASCII whitespace ignored, padding optional).
struct DataURL: Sendable {
    struct Parameter: Sendable, Equatable {
        /// Lower-cased.
        var name: String
        var value: String
    }

    /// Why a `data:` URL cannot be loaded.
    struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        var description: String
    }

    /// Lower-cased `type/subtype`; "text/plain" when the URL names none (or names an invalid one).
    let mimeType: String
    /// The media type's parameters (without `base64`), in order; `charset=US-ASCII` when the URL names no type.
    let parameters: [Parameter]
    let isBase64: Bool
    /// The whole URL text; the payload is `text.utf8[payloadStart..<payloadEnd]`.
    private let text: String
    private let payloadStart: String.Index
    private let payloadEnd: String.Index

    /// The `charset` parameter, if any (the response's `textEncodingName`).
    var charset: String? { parameters.first { $0.name == "charset" }?.value }

    /// The media type with its parameters, as a Content-Type value would carry it.
    var mediaType: String {
        ([mimeType] + parameters.map { "\($0.name)=\($0.value)" }).joined(separator: ";")
    }

    init(_ url: URL) throws(Failure) {
        var text = url.absoluteString
        text.makeContiguousUTF8()  // a bridged string's UTF-8 view is slow to walk and has no contiguous storage
        let utf8 = text.utf8
        guard utf8.count >= 5, text.prefix(5).lowercased() == "data:" else {
            throw Failure(description: "not a data: URL")
        }
        let afterScheme = utf8.index(utf8.startIndex, offsetBy: 5)
        // The fragment is not part of the data (a raw "#" cannot be in the payload).
        let end = utf8[afterScheme...].firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        guard let comma = utf8[afterScheme..<end].firstIndex(of: UInt8(ascii: ",")) else {
            throw Failure(description: "data: URL without a comma before its data")
        }
        self.text = text
        self.payloadStart = utf8.index(after: comma)
        self.payloadEnd = end
        let mediaType = String(text[afterScheme..<comma])
        (mimeType, parameters, isBase64) = Self.parseMediaType(mediaType.removingPercentEncoding ?? mediaType)
    }

    /// Checks the payload and returns how many bytes it decodes to, or throws saying what is wrong with it.
    func validate() throws(Failure) -> Int {
        try withPayload { DataURLDecoding.count($0, base64: isBase64) }.get()
    }

    /// Decodes the payload (checked by `validate()`) in pieces of `chunkSize` bytes (the last may be shorter),
    /// handing each to `deliver`, which returns false to stop.
    func decode(chunkSize: Int, deliver: (Data) -> Bool) {
        withPayload { DataURLDecoding.decode($0, base64: isBase64, chunkSize: chunkSize, deliver: deliver) }
    }

    private func withPayload<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        let payload = text.utf8[payloadStart..<payloadEnd]
        return payload.withContiguousStorageIfAvailable(body) ?? Array(payload).withUnsafeBufferPointer(body)
    }

    // MARK: - Media type

    /// `type/subtype;name=value;...[;base64]`: the WHATWG rules, simplified (quoted values unquoted). An empty
    /// or invalid type is `text/plain;charset=US-ASCII`, RFC 2397's default.
    private static func parseMediaType(_ raw: String) -> (String, [Parameter], Bool) {
        var pieces = raw.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        var isBase64 = false
        if pieces.count > 1, pieces.last?.lowercased() == "base64" {
            isBase64 = true
            pieces.removeLast()
        }
        var type = pieces.first?.lowercased() ?? ""
        if type.isEmpty && pieces.count > 1 { type = "text/plain" }  // ";charset=utf-8,..." keeps its charset
        let halves = type.split(separator: "/", omittingEmptySubsequences: false)
        let isToken: (Substring) -> Bool = { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "!#$&-^_.+".contains($0)) }
        }
        guard halves.count == 2, isToken(halves[0]), isToken(halves[1]) else {
            return ("text/plain", [Parameter(name: "charset", value: "US-ASCII")], isBase64)
        }
        var parameters: [Parameter] = []
        for piece in pieces.dropFirst() {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !name.isEmpty, !parameters.contains(where: { $0.name == name }) else { continue }
            parameters.append(Parameter(name: name, value: value))
        }
        return (type, parameters, isBase64)
    }
}
