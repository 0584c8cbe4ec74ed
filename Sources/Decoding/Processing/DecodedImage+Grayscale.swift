extension DecodedImage {
    /// Gray pixels (alpha kept): luma with the Rec. 709 weights of sRGB's primaries on the encoded values,
    /// `(54 R + 183 G + 19 B + 128) / 256`, the same weights libvips uses for `b-w`. Every frame is converted.
    public func grayscaled() throws(ImageProcessingError) -> DecodedImage {
        _ = try validatedBufferSize()
        return mappingFrames(width: width, height: height) { src in
            var out = src
            out.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i + 3 < p.count {
                    let y = (54 * UInt32(p[i]) + 183 * UInt32(p[i + 1]) + 19 * UInt32(p[i + 2]) + 128) >> 8
                    let v = UInt8(truncatingIfNeeded: y)
                    p[i] = v
                    p[i + 1] = v
                    p[i + 2] = v
                    i += 4
                }
            }
            return out
        }
    }
}
