extension DecodedImage {
    /// Runs `body` over the pixels of the image and of every frame, in their own buffers when this value holds
    /// the only reference to them (colour conversion then costs no copy). An animation's `pixels` that share
    /// the first frame's buffer are converted once, with the frame. An on-demand animation gets `body` as a step
    /// (`label` names it) for the frames it composites later.
    mutating func transformPixels(label: String, _ body: @escaping @Sendable (inout [UInt8]) -> Void) {
        let step = FramePipeline.Step(label: label, width: width, height: height) { pixels in
            var out = pixels
            body(&out)
            return out
        }
        let animation = self.animation
        var pixels = self.pixels
        var frames = self.frames
        let sharesFirstFrame = frames.first.map { frame in
            frame.pixels.withUnsafeBufferPointer { a in pixels.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress } }
        } ?? false
        // Drop this value's references first, so the local arrays are unique.
        self = replacingPixels(width: width, height: height, pixels: [], frames: [], animation: animation)
        if sharesFirstFrame { pixels = [] }
        for index in frames.indices { body(&frames[index].pixels) }
        if sharesFirstFrame, let first = frames.first {
            pixels = first.pixels
        } else {
            body(&pixels)
        }
        self = replacingPixels(width: width, height: height, pixels: pixels, frames: frames, animation: animation)
        self.animation = self.animation(after: step, mappedFrames: frames, loopCount: loopCount)
    }
}
