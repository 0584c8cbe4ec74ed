import Foundation
import Decoding

/// Hashes for the disk cache: SHA-256 names entry files (so that any key maps to a fixed-length hex name
/// that cannot escape the directory), and a fast 64-bit checksum detects truncated or damaged bodies.
/// Foundation on Linux has no CryptoKit and the package takes no dependencies.
enum HTTPCacheHashing {
    /// Lower-case hex SHA-256 of the UTF-8 bytes of `string`.
    static func sha256Hex(_ string: String) -> String {
        let digest = SHA256.digest(Array(string.utf8))
        let hexDigits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A 64-bit checksum of `data` for corruption detection (not a security measure): every 8-byte word is
    /// mixed through a bijective step, so any single damaged word always changes the result; the length is
    /// mixed in so that truncation does too.
    static func checksum(_ data: Data) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        let count = data.count
        data.withUnsafeBytes { raw in
            // Word-at-a-time keeps this fast even in debug builds.
            let words = raw.count / 8
            var i = 0
            while i < words {
                h = mix(h, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
                i += 1
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            for byte in raw[(words * 8)...] {
                tail |= UInt64(byte) << shift
                shift += 8
            }
            if shift > 0 { h = mix(h, tail) }
        }
        h = mix(h, UInt64(truncatingIfNeeded: count))
        // Final avalanche (splitmix64) so that high and low bits depend on every input bit.
        h ^= h >> 30; h &*= 0xbf58_476d_1ce4_e5b9
        h ^= h >> 27; h &*= 0x94d0_49bb_1331_11eb
        h ^= h >> 31
        return h
    }

    @inline(__always)
    private static func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let x = (h ^ word) &* 0x0000_0100_0000_01b3
        return (x << 29) | (x >> 35)
    }
}
