/// A small seeded generator (SplitMix64) so that chunkings and mutations are reproducible from a seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A chunk length from 1 byte to 64 KB, small sizes as likely as large ones (log-uniform).
    mutating func chunkSize() -> Int {
        let exponent = Int(next() % 17)
        return max(1, Int(next() % UInt64(1 << exponent)) + 1)
    }
}

/// Stable 64-bit FNV-1a of a string: a per-file seed that does not depend on test order.
func stableSeed(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return hash
}
