import Foundation

/// The on-disk format of one cache entry, self-validating so that a truncated, damaged or foreign file is
/// recognised and discarded instead of served.
///
/// Layout (little-endian), version 2:
/// ```
///  0  magic "ODHC"            4  version UInt16        6  kind UInt16 (see `Kind`)
///  8  status code UInt32     12  metadata length UInt32
/// 16  body length UInt64     24  request date (Float64 bits)   32  response date (Float64 bits)
/// 40  checksum of bytes 0..<40 + metadata (UInt64)             48  checksum of the body (UInt64)
/// 56  metadata: key, header fields, varied request values (UInt32-length-prefixed UTF-8 strings)
///     body
/// ```
/// The file's size must be exactly 56 + metadata + body: a short file is truncated, a long one foreign.
/// Version 1 (before `Vary` variants and responses stored without their body) had 0 where `kind` is: its
/// files are left alone like those of any other version.
struct HTTPCacheEntryFile: Equatable, Sendable {
    /// What an entry file holds.
    enum Kind: UInt16, Sendable {
        /// A response and its body.
        case response = 0
        /// The variants of a URL whose responses carry `Vary`: the headers hold that `Vary` field and the
        /// body is the generation that names the variant files (see `HTTPCacheKey.variantFileName`).
        case variantIndex = 1
        /// A response stored without its body (an error status the download rejects at the header).
        case headersOnly = 2
    }

    var kind: Kind = .response
    var key: String
    var statusCode: Int
    var headers: HTTPHeaderFields
    /// Normalised values of the request fields the response varies on (lower-cased names).
    var varyValues: [String: String]
    var requestDate: Date
    var responseDate: Date
    var body: Data

    /// Why bytes are not a valid entry.
    enum DecodeError: Error, Equatable {
        case notAnEntry
        case unsupportedVersion(Int)
        case truncated
        case lengthMismatch
        case checksumMismatch
        case malformedMetadata
    }

    static let magic: [UInt8] = Array("ODHC".utf8)
    static let version: UInt16 = 2
    static let headerSize = 56
    /// Metadata beyond this is not something this cache wrote (keys and headers are small).
    static let maximumMetadataLength = 1 << 20
    /// Limits on counts read from a file, so that damaged lengths cannot make a loop run long.
    static let maximumFieldCount = 1024

    // MARK: Encoding

    func encoded() -> Data {
        var meta = Data()
        Self.appendString(key, to: &meta)
        Self.appendUInt32(UInt32(clamping: headers.fields.count), to: &meta)
        for field in headers.fields {
            Self.appendString(field.name, to: &meta)
            Self.appendString(field.value, to: &meta)
        }
        let vary = varyValues.sorted { $0.key < $1.key }
        Self.appendUInt32(UInt32(clamping: vary.count), to: &meta)
        for (name, value) in vary {
            Self.appendString(name, to: &meta)
            Self.appendString(value, to: &meta)
        }

        var out = Data(capacity: Self.headerSize + meta.count + body.count)
        out.append(contentsOf: Self.magic)
        Self.appendUInt16(Self.version, to: &out)
        Self.appendUInt16(kind.rawValue, to: &out)
        Self.appendUInt32(UInt32(clamping: statusCode), to: &out)
        Self.appendUInt32(UInt32(clamping: meta.count), to: &out)
        Self.appendUInt64(UInt64(body.count), to: &out)
        Self.appendUInt64(requestDate.timeIntervalSince1970.bitPattern, to: &out)
        Self.appendUInt64(responseDate.timeIntervalSince1970.bitPattern, to: &out)
        Self.appendUInt64(HTTPCacheHashing.checksum(out + meta), to: &out)
        Self.appendUInt64(HTTPCacheHashing.checksum(body), to: &out)
        out.append(meta)
        out.append(body)
        return out
    }

    // MARK: Decoding

    /// Parses and validates `data` (a whole file).
    static func decode(_ data: Data) throws(DecodeError) -> HTTPCacheEntryFile {
        let bytes = data.count
        guard bytes >= 4 else { throw .notAnEntry }
        var reader = Reader(data: data)
        guard let magicBytes = reader.bytes(4), Array(magicBytes) == magic else { throw .notAnEntry }
        guard bytes >= headerSize else { throw .truncated }
        guard let version = reader.uint16(), let rawKind = reader.uint16() else { throw .truncated }
        guard version == Self.version else { throw .unsupportedVersion(Int(version)) }
        guard let kind = Kind(rawValue: rawKind) else { throw .malformedMetadata }
        guard let status = reader.uint32(), let metaLength32 = reader.uint32(), let bodyLength64 = reader.uint64(),
              let requestBits = reader.uint64(), let responseBits = reader.uint64(),
              let metaChecksum = reader.uint64(), let bodyChecksum = reader.uint64() else { throw .truncated }
        let metaLength = Int(metaLength32)
        guard metaLength <= maximumMetadataLength, bodyLength64 <= UInt64(Int.max - headerSize - metaLength) else {
            throw .lengthMismatch
        }
        let bodyLength = Int(bodyLength64)
        let expected = headerSize + metaLength + bodyLength
        if bytes < expected { throw .truncated }
        if bytes > expected { throw .lengthMismatch }

        let base = data.startIndex
        let fixedPart = data[base..<(base + 40)]
        let meta = data[(base + headerSize)..<(base + headerSize + metaLength)]
        guard HTTPCacheHashing.checksum(Data(fixedPart) + Data(meta)) == metaChecksum else { throw .checksumMismatch }
        let body = Data(data[(base + headerSize + metaLength)..<(base + expected)])
        guard HTTPCacheHashing.checksum(body) == bodyChecksum else { throw .checksumMismatch }

        let requestTime = Double(bitPattern: requestBits)
        let responseTime = Double(bitPattern: responseBits)
        guard requestTime.isFinite, responseTime.isFinite, (100...599).contains(status) else { throw .malformedMetadata }

        var metaReader = Reader(data: Data(meta))
        guard let key = metaReader.string(), let headerCount = metaReader.uint32(),
              headerCount <= maximumFieldCount else { throw .malformedMetadata }
        var fields: [(name: String, value: String)] = []
        for _ in 0..<Int(headerCount) {
            guard let name = metaReader.string(), let value = metaReader.string() else { throw .malformedMetadata }
            fields.append((name, value))
        }
        guard let varyCount = metaReader.uint32(), varyCount <= maximumFieldCount else { throw .malformedMetadata }
        var vary: [String: String] = [:]
        for _ in 0..<Int(varyCount) {
            guard let name = metaReader.string(), let value = metaReader.string() else { throw .malformedMetadata }
            vary[name] = value
        }
        guard metaReader.isAtEnd else { throw .malformedMetadata }

        return HTTPCacheEntryFile(kind: kind, key: key, statusCode: Int(status), headers: HTTPHeaderFields(fields),
                                  varyValues: vary, requestDate: Date(timeIntervalSince1970: requestTime),
                                  responseDate: Date(timeIntervalSince1970: responseTime), body: body)
    }

    // MARK: Byte helpers

    private static func appendUInt16(_ v: UInt16, to data: inout Data) {
        withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) }
    }
    private static func appendUInt32(_ v: UInt32, to data: inout Data) {
        withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) }
    }
    private static func appendUInt64(_ v: UInt64, to data: inout Data) {
        withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) }
    }
    private static func appendString(_ s: String, to data: inout Data) {
        let utf8 = Array(s.utf8)
        appendUInt32(UInt32(clamping: utf8.count), to: &data)
        data.append(contentsOf: utf8)
    }

    /// A bounds-checked little-endian reader: every read returns nil past the end instead of trapping.
    private struct Reader {
        let data: Data
        var offset: Int

        init(data: Data) {
            self.data = data
            self.offset = data.startIndex
        }

        var isAtEnd: Bool { offset == data.endIndex }

        mutating func bytes(_ count: Int) -> Data? {
            guard count >= 0, data.endIndex - offset >= count else { return nil }
            defer { offset += count }
            return data[offset..<(offset + count)]
        }

        mutating func uint16() -> UInt16? { integer(UInt16.self) }
        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }

        private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let raw = bytes(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            for (i, byte) in raw.enumerated() { value |= T(byte) << (i * 8) }
            return value
        }

        mutating func string() -> String? {
            guard let length = uint32(), let raw = bytes(Int(length)) else { return nil }
            return String(validating: raw, as: UTF8.self)
        }
    }
}
