import Foundation

/// SHA-256 (FIPS 180-4), shared inside the package: the HTTP cache names its entry files with it, and the tests
/// compare decoded pixels with the corpus's reference hashes. Foundation on Linux has no CryptoKit, and the
/// package takes no dependencies. `package`, not public: it is no part of an image library's API.
package enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// Lower-case hex digest of `bytes`.
    package static func hex(_ bytes: [UInt8]) -> String {
        digest(bytes).map { String(format: "%02x", $0) }.joined()
    }

    package static func digest(_ input: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        // Only the last partial block and the padding are copied; full blocks are read in place.
        let fullBlocks = input.count / 64
        var tail = Array(input[(fullBlocks * 64)...])
        let bitLength = UInt64(input.count) * 8
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        // Unsafe pointers and plain locals: tests run unoptimized, where array accesses in this loop
        // would make hashing a 12 MP image take tens of seconds.
        let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        defer { w.deallocate() }
        SHA256.k.withUnsafeBufferPointer { kBuffer in
            guard let k = kBuffer.baseAddress else { return }
            h.withUnsafeMutableBufferPointer { hBuffer in
                guard let hh = hBuffer.baseAddress else { return }
                func compress(_ m: UnsafePointer<UInt8>, blocks: Int) {
                    var j = 0
                    for _ in 0..<blocks {
                        var i = 0
                        while i < 16 {
                            w[i] = UInt32(m[j]) << 24 | UInt32(m[j + 1]) << 16 | UInt32(m[j + 2]) << 8 | UInt32(m[j + 3])
                            i += 1
                            j += 4
                        }
                        while i < 64 {
                            let x = w[i - 15], y = w[i - 2]
                            let s0 = (x >> 7 | x << 25) ^ (x >> 18 | x << 14) ^ (x >> 3)
                            let s1 = (y >> 17 | y << 15) ^ (y >> 19 | y << 13) ^ (y >> 10)
                            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                            i += 1
                        }
                        var a = hh[0], b = hh[1], c = hh[2], d = hh[3], e = hh[4], f = hh[5], g = hh[6], h7 = hh[7]
                        i = 0
                        while i < 64 {
                            let s1 = (e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7)
                            let t1 = h7 &+ s1 &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                            let s0 = (a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)
                            let t2 = s0 &+ ((a & b) ^ (a & c) ^ (b & c))
                            h7 = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
                            i += 1
                        }
                        hh[0] &+= a; hh[1] &+= b; hh[2] &+= c; hh[3] &+= d
                        hh[4] &+= e; hh[5] &+= f; hh[6] &+= g; hh[7] &+= h7
                    }
                }
                input.withUnsafeBufferPointer { m in
                    if let base = m.baseAddress, fullBlocks > 0 { compress(base, blocks: fullBlocks) }
                }
                tail.withUnsafeBufferPointer { m in
                    if let base = m.baseAddress { compress(base, blocks: m.count / 64) }
                }
            }
        }
        return h.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - $0 * 8)) } }
    }
}

