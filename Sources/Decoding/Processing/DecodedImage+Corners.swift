extension DecodedImage {
    /// The image with rounded corners: pixels outside a circle of `radius` pixels in each chosen corner
    /// become transparent, with antialiased edges (SDWebImage's `SDImageRoundCornerTransformer`).
    ///
    /// A pixel's alpha is multiplied by how much of it lies inside the rounded rectangle, estimated from the
    /// distance of its centre to the corner circle: `clamp(radius + 0.5 - distance, 0, 1)`. The radius is
    /// capped at half the shorter side. Every animation frame is processed.
    public func roundingCorners(radius: Double, corners: ImageCorners = .all) throws(ImageProcessingError) -> DecodedImage {
        guard radius.isFinite, radius >= 0 else { throw .invalidParameter("corner radius \(radius)") }
        _ = try validatedBufferSize()
        let r = min(radius, Double(min(width, height)) / 2)
        guard r > 0, !corners.isEmpty else { return self }
        let mask = CornerMask(radius: r, width: width, height: height, corners: corners)
        return mappingFrames(width: width, height: height) { mask.apply(to: $0) }
    }

    /// A circle: the centred square crop with its corners rounded to half its side (transparent outside).
    public func circleCropped() throws(ImageProcessingError) -> DecodedImage {
        let side = min(width, height)
        return try croppedToCenter(width: side, height: side).roundingCorners(radius: Double(side) / 2)
    }
}

/// Coverage of the pixels in the corner squares; everything else is untouched, so the cost is proportional
/// to the corners' area, not the image's.
struct CornerMask {
    let width: Int
    let height: Int
    /// Side of the corner squares, in pixels.
    let size: Int
    /// Coverage (0...1) of the top-left corner square, row-major; mirrored for the other corners.
    let coverage: [Float]
    let corners: ImageCorners

    init(radius: Double, width: Int, height: Int, corners: ImageCorners) {
        self.width = width
        self.height = height
        self.corners = corners
        let size = min(Int(radius.rounded(.up)), width, height)
        self.size = size
        var coverage = [Float](repeating: 1, count: size * size)
        for y in 0..<size {
            for x in 0..<size {
                let dx = radius - (Double(x) + 0.5), dy = radius - (Double(y) + 0.5)
                guard dx > 0, dy > 0 else { continue }   // beside the arc: fully inside
                let distance = (dx * dx + dy * dy).squareRoot()
                coverage[y * size + x] = Float(min(1, max(0, radius + 0.5 - distance)))
            }
        }
        self.coverage = coverage
    }

    func apply(to src: [UInt8]) -> [UInt8] {
        var out = src
        out.withUnsafeMutableBufferPointer { p in
            coverage.withUnsafeBufferPointer { c in
                for y in 0..<size {
                    for x in 0..<size {
                        let k = c[y * size + x]
                        guard k < 1 else { continue }
                        if corners.contains(.topLeft) { scale(p, x: x, y: y, by: k) }
                        if corners.contains(.topRight) { scale(p, x: width - 1 - x, y: y, by: k) }
                        if corners.contains(.bottomLeft) { scale(p, x: x, y: height - 1 - y, by: k) }
                        if corners.contains(.bottomRight) { scale(p, x: width - 1 - x, y: height - 1 - y, by: k) }
                    }
                }
            }
        }
        return out
    }

    @inline(__always)
    private func scale(_ p: UnsafeMutableBufferPointer<UInt8>, x: Int, y: Int, by k: Float) {
        let i = (y * width + x) * 4 + 3
        p[i] = UInt8((Float(p[i]) * k).rounded())
    }
}
