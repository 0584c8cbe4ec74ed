import Foundation

/// Decodes a PNG (or APNG) from bytes delivered in pieces, through libpng's progressive reader.
///
/// `PNGCoder.decode` is this decoder fed everything at once, so both paths give identical pixels.
/// Partial images: the rows decoded so far with the rest transparent, or for Adam7 the passes so far
/// (libpng's progressive display fills each pass's pixel blocks, so early passes look coarse, not sparse).
/// APNG frames are indexed as they stream past and composited on demand (`APNGFrames`); partial images
/// show the default image as it loads.
final class PNGIncrementalDecoder: IncrementalImageDecoder, PNGChunkSink {
    private let options: ImageDecodingOptions
    private var filter = PNGChunkFilter()
    let stream: PNGStreamDecoder?
    private var animation: APNGAnimation
    private var color = PNGColorChunks()
    private var orientation = ImageOrientation.up
    private var seenEXIF = false
    private var width = 0
    private var height = 0
    private var failure: ImageDecodingError?
    private var finalImage: DecodedImage?
    /// The last partial image, reused while nothing new was decoded.
    private var partial: (rows: UInt32, passes: Int32, image: DecodedImage)?

    init(options: ImageDecodingOptions) {
        self.options = options
        animation = APNGAnimation(maximumFrameCount: options.maximumFrameCount)
        stream = PNGStreamDecoder(maximumPixelCount: options.maximumPixelCount)
    }

    func append(_ data: Data, isFinal: Bool) throws {
        if let failure { throw failure }
        guard finalImage == nil else { return }
        do {
            guard stream != nil else { throw ImageDecodingError.corrupt("libpng could not start") }
            // The cached partial image shares the canvas: holding it here would make libpng's next write
            // copy the whole canvas (copy on write) after every preview, even when the caller let it go.
            if !data.isEmpty { partial = nil }
            try data.withUnsafeBytes { try filter.consume($0, sink: self) }
            if isFinal { try finish() }
        } catch let error as ImageDecodingError {
            failure = error
            throw error
        }
    }

    func currentImage() -> DecodedImage? {
        if let finalImage { return finalImage }
        guard let stream, failure == nil, stream.hasRows else { return nil }
        let progress = stream.progress
        if let partial, partial.rows == progress.rows_done, partial.passes == progress.passes_completed {
            return partial.image
        }
        // Shares the canvas until the next append writes to it (copy on write).
        let image = color.tag(DecodedImage(width: width, height: height, pixels: stream.canvas, format: .png,
                                           orientation: orientation, isIncomplete: true))
        partial = (progress.rows_done, progress.passes_completed, image)
        return image
    }

    private func finish() throws {
        guard let stream, stream.hasRows else { throw ImageDecodingError.truncated }
        let complete = stream.isFinished
        partial = nil
        let pixels = stream.takeCanvas()
        var animated: AnimatedImage?
        if !options.decodeFirstFrameOnly,
           let frames = animation.frames(defaultImage: pixels, width: width, height: height, complete: complete) {
            animated = AnimatedImage(source: frames, budget: options.decodingBudget)
        }
        finalImage = color.tag(DecodedImage(
            width: width, height: height, pixels: pixels, format: .png, orientation: orientation,
            animation: animated, loopCount: animated == nil ? 0 : animation.loopCount, isIncomplete: !complete))
    }

    // MARK: - PNGChunkSink

    func pngPass(_ bytes: UnsafeRawBufferPointer) throws {
        guard let stream else { return }
        try stream.feed(bytes)
    }

    func pngChunkBegins(_ type: PNGChunkType, length: Int) throws {
        animation.chunkBegins(type)
    }

    func pngChunk(_ type: PNGChunkType, data: [UInt8]) throws {
        switch type {
        case .IHDR:
            guard width == 0, data.count == 13 else { return }  // libpng rejects a bad or second IHDR
            let w = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
            let h = Int(data[4]) << 24 | Int(data[5]) << 16 | Int(data[6]) << 8 | Int(data[7])
            // Before libpng sees the header and before any pixel memory exists.
            try options.checkDimensions(width: w, height: h)
            width = w
            height = h
            stream?.prepareCanvas(width: w, height: h)
        case .iCCP, .sRGB, .gAMA, .cHRM:
            color.record(type, data: data)
        case .eXIf:
            guard !seenEXIF else { return }
            seenEXIF = true
            orientation = EXIFOrientation.parse(data) ?? .up
        default:
            break
        }
        if !options.decodeFirstFrameOnly {
            try animation.record(type, data: data, canvasWidth: width, canvasHeight: height)
        }
    }
}
