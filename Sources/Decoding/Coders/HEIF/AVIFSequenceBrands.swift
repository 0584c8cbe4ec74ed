import Foundation

/// The ftyp box of an AVIF image sequence, rewritten so that libheif accepts its primary image.
///
/// AVIF sequences (major brand `avis`, often with only `avis`, `msf1`, `miaf`, `MA1B` compatible) may carry
/// a still primary image in their `meta` box next to the track. libheif 1.15 reads that image only when the
/// ftyp lists a still-image brand (`avif` or `mif1`). Rewriting brands in place keeps every byte offset
/// (iloc, stco) valid.
enum AVIFSequenceBrands {
    /// A copy of `data` whose ftyp names `avif` as major brand and `mif1` in place of `avis`/`msf1`, or nil
    /// when `data` does not start with an ftyp that needs it (not a sequence, or already still-compatible).
    static func stillImageCompatible(_ data: Data) -> Data? {
        var bytes = [UInt8](data.prefix(256))
        guard bytes.count >= 16, Array(bytes[4..<8]) == Array("ftyp".utf8) else { return nil }
        let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard size >= 16, size <= bytes.count, size % 4 == 0 else { return nil }
        let brands = stride(from: 16, to: size, by: 4).map { Array(bytes[$0..<$0 + 4]) }
        let avis = Array("avis".utf8), msf1 = Array("msf1".utf8)
        guard Array(bytes[8..<12]) == avis || brands.contains(avis) else { return nil }
        guard !brands.contains(Array("mif1".utf8)) || !brands.contains(Array("avif".utf8)) else { return nil }
        bytes.replaceSubrange(8..<12, with: Array("avif".utf8))
        var replacedMif1 = false
        for (index, brand) in brands.enumerated() where brand == avis || brand == msf1 {
            let at = 16 + index * 4
            bytes.replaceSubrange(at..<at + 4, with: Array((replacedMif1 ? "avif" : "mif1").utf8))
            replacedMif1 = true
        }
        guard replacedMif1 else { return nil }
        var patched = data
        patched.replaceSubrange(patched.startIndex..<patched.startIndex + size, with: bytes[0..<size])
        return patched
    }
}
