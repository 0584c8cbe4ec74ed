/// The APP2 "ICC_PROFILE" segments of a JPEG, joined in sequence order once every chunk is there (as libjpeg's
/// and Pillow's readers join them; an inconsistent set gives no profile).
struct JPEGICCChunks {
    private var chunks: [Int: [UInt8]] = [:]
    private var count = 0

    /// One APP2 segment's payload: "ICC_PROFILE\0", sequence number (1-based), chunk count, data.
    mutating func add(_ b: [UInt8]) {
        guard b.count > 14, Array(b.prefix(12)) == Array("ICC_PROFILE".utf8) + [0] else { return }
        let sequence = Int(b[12]), total = Int(b[13])
        guard sequence >= 1, sequence <= total, count == 0 || count == total else { return }
        count = total
        chunks[sequence] = Array(b[14...])
    }

    /// The embedded profile, or nil when chunks are missing.
    var profile: [UInt8]? {
        guard count > 0, chunks.count == count else { return nil }
        return (1...count).reduce(into: [UInt8]()) { $0 += chunks[$1] ?? [] }
    }
}
