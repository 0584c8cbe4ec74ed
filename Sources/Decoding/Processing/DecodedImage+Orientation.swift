extension DecodedImage {
    /// The pixels as they are meant to be seen: the EXIF `orientation` applied (rotated and/or mirrored),
    /// and `orientation` set to `.up`. Width and height swap for orientations 5...8. Every frame is turned.
    public func orientedUp() throws(ImageProcessingError) -> DecodedImage {
        _ = try validatedBufferSize()
        return remapped(orientation)
    }

    /// Mirrored left-right (`horizontally`) and/or top-bottom (`vertically`); `orientation` is kept.
    public func flipped(horizontally: Bool, vertically: Bool) throws(ImageProcessingError) -> DecodedImage {
        _ = try validatedBufferSize()
        switch (horizontally, vertically) {
        case (false, false): return self
        case (true, false): return remapped(.upMirrored, keepOrientation: true)
        case (false, true): return remapped(.downMirrored, keepOrientation: true)
        case (true, true): return remapped(.down, keepOrientation: true)
        }
    }

    /// Turned clockwise by `quarterTurns` × 90° (negative turns go anticlockwise); `orientation` is kept.
    public func rotated(quarterTurns: Int) throws(ImageProcessingError) -> DecodedImage {
        _ = try validatedBufferSize()
        switch ((quarterTurns % 4) + 4) % 4 {
        case 1: return remapped(.right, keepOrientation: true)
        case 2: return remapped(.down, keepOrientation: true)
        case 3: return remapped(.left, keepOrientation: true)
        default: return self
        }
    }

    /// Applies the display transform of `transform` (an EXIF orientation) to the pixels.
    ///
    /// Output pixel (x, y) reads source pixel `origin + x·dx + y·dy` (in pixels), which covers all eight
    /// orientations with one copy loop of 32-bit pixels.
    func remapped(_ transform: ImageOrientation, keepOrientation: Bool = false) -> DecodedImage {
        guard transform != .up else { return keepOrientation ? self : withOrientation(.up) }
        let w = width, h = height
        let swaps = transform.swapsDimensions
        let outW = swaps ? h : w, outH = swaps ? w : h
        // (origin, step along an output row, step to the next output row) in source pixel indices.
        let walk: (origin: Int, dx: Int, dy: Int)
        switch transform {
        case .up: walk = (0, 1, w)
        case .upMirrored: walk = (w - 1, -1, w)
        case .down: walk = (w * h - 1, -1, -w)
        case .downMirrored: walk = (w * (h - 1), 1, -w)
        case .leftMirrored: walk = (0, w, 1)                       // transpose
        case .right: walk = (w * (h - 1), -w, 1)                   // 90° clockwise
        case .rightMirrored: walk = (w * h - 1, -w, -1)            // transverse
        case .left: walk = (w - 1, w, -1)                          // 90° anticlockwise
        }
        return mappingFrames(width: outW, height: outH, orientation: keepOrientation ? orientation : .up) { src in
            [UInt8](unsafeUninitializedCapacity: src.count) { dst, initialized in
                src.withUnsafeBytes { s in
                    let input = s.bindMemory(to: UInt32.self)
                    let output = UnsafeMutableRawBufferPointer(dst).bindMemory(to: UInt32.self)
                    var o = 0
                    for y in 0..<outH {
                        var i = walk.origin + y * walk.dy
                        for _ in 0..<outW {
                            output[o] = input[i]
                            o += 1
                            i += walk.dx
                        }
                    }
                }
                initialized = src.count
            }
        }
    }

    private func withOrientation(_ value: ImageOrientation) -> DecodedImage {
        var copy = self
        copy.orientation = value
        return copy
    }
}
