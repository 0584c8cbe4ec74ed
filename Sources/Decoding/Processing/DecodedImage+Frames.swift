extension DecodedImage {
    /// Checks that `pixels` and every frame hold `width * height * 4` bytes, so kernels can index freely.
    func validatedBufferSize() throws(ImageProcessingError) -> Int {
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !overflow, count <= Int.max / 4 else { throw .malformedImage }
        let bytes = count * 4
        guard pixels.count == bytes, frames.allSatisfy({ $0.pixels.count == bytes }) else { throw .malformedImage }
        return bytes
    }

    /// A new image of `width`×`height` whose still pixels and every animation frame are `body` applied to
    /// the old ones; everything else (format, scale, loop count, durations, incompleteness) is kept. Frames
    /// composited on demand get `body` as one more step, applied when each frame is asked for.
    func mappingFrames(width newWidth: Int, height newHeight: Int, orientation newOrientation: ImageOrientation? = nil,
                       label: String = #function, _ body: @escaping @Sendable ([UInt8]) -> [UInt8]) -> DecodedImage {
        let frames = frames.map { ImageFrame(pixels: body($0.pixels), duration: $0.duration) }
        // An animation's `pixels` is its first frame: reuse that result instead of computing it twice.
        let still = frames.first?.pixels ?? body(pixels)
        let step = FramePipeline.Step(label: "\(label) \(newWidth)x\(newHeight)", width: newWidth, height: newHeight, apply: body)
        return DecodedImage(
            width: newWidth, height: newHeight, pixels: still, format: format, scale: scale,
            orientation: newOrientation ?? orientation, frames: frames,
            animation: animation(after: step, mappedFrames: frames, loopCount: loopCount), loopCount: loopCount,
            isIncomplete: isIncomplete)
    }
}
