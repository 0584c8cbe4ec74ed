extension DecodedImage {
    /// The image composited over an opaque colour (straight alpha, rounded): what a format without alpha
    /// should show. Returns `self` when every pixel is already opaque.
    func flattened(over background: SIMD3<UInt8>) -> DecodedImage {
        let opaque = pixels.withUnsafeBufferPointer { p in stride(from: 3, to: p.count, by: 4).allSatisfy { p[$0] == 255 } }
        if opaque { return self }
        let bg = SIMD3<UInt32>(truncatingIfNeeded: background)
        return mappingFrames(width: width, height: height) { src in
            var out = src
            out.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i + 3 < p.count {
                    let a = UInt32(p[i + 3])
                    if a != 255 {
                        let c = SIMD3<UInt32>(UInt32(p[i]), UInt32(p[i + 1]), UInt32(p[i + 2]))
                        let mixed = (c &* a &+ bg &* (255 &- a) &+ 127) / 255
                        p[i] = UInt8(truncatingIfNeeded: mixed.x)
                        p[i + 1] = UInt8(truncatingIfNeeded: mixed.y)
                        p[i + 2] = UInt8(truncatingIfNeeded: mixed.z)
                        p[i + 3] = 255
                    }
                    i += 4
                }
            }
            return out
        }
    }
}
