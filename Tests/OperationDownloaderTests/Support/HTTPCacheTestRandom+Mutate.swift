extension HTTPCacheTestRandom {
    /// One to four random edits of `bytes` (a byte replaced by one of `specials` or by any byte, one of `specials`
    /// inserted, the tail cut): the deterministic mutations the fuzz regression suites run their seeds through.
    mutating func mutate(_ bytes: inout [UInt8], specials: [UInt8]) {
        for _ in 0..<(1 + Int(next() % 4)) where !bytes.isEmpty {
            let at = Int(next() % UInt64(bytes.count))
            switch next() % 4 {
            case 0: bytes[at] = specials[Int(next() % UInt64(specials.count))]
            case 1: bytes.insert(specials[Int(next() % UInt64(specials.count))], at: at)
            case 2: bytes.removeSubrange(at...)
            default: bytes[at] = UInt8(truncatingIfNeeded: next())
            }
        }
    }
}
