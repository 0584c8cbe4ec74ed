import CImageCodecs
import Foundation

/// The decoding steps shared by `JXLCoder.decode`, `JXLIncrementalDecoder` and the animation's frames, so all
/// reach the same pixels (and the same errors) for the same bytes.
///
/// A decode is a header pass (`JXLFrameIndex`: size, frames, their durations, every layer's extent checked
/// against the pixel limit), then frame 0 (the poster) decoded by libjxl, composited on the canvas, orientation
/// applied, alpha straight; an animation's other frames are decoded on demand (`JXLAnimationFrames`).
struct JXLImageDecoding {
    let lib: LibJXL
    let options: ImageDecodingOptions

    func decode(_ data: Data) throws -> DecodedImage {
        try data.withUnsafeBytes { bytes in
            let index = try JXLFrameIndex(lib: lib, options: options)
            try index.feed(bytes)
            guard let info = index.info, !index.frameTicks.isEmpty else { throw ImageDecodingError.truncated }
            let width = Int(info.width), height = Int(info.height)
            let session = try JXLSession(lib: lib, mode: Int32(CIC_JXL_MODE_PIXELS), threads: threads(width * height))
            var color = cic_jxl_color()
            guard let poster = try Self.nextFrame(session, bytes, width: width, height: height, onColor: {
                color = session.color
                try claimBudget(info, color: color, frames: index.frameTicks.count)
            }) else {
                throw ImageDecodingError.truncated
            }
            let animated = info.have_animation != 0 && index.frameTicks.count > 1 && !options.decodeFirstFrameOnly
            let animation = animated
                ? AnimatedImage(source: JXLAnimationFrames(lib: lib, data: data, info: info, frameTicks: index.frameTicks),
                                budget: options.decodingBudget)
                : nil
            let image = DecodedImage(
                width: width, height: height, pixels: poster.pixels, format: .jxl, animation: animation,
                loopCount: Int(info.num_loops),
                isIncomplete: !poster.complete || (info.have_animation != 0 && !index.sawLastFrame && !options.decodeFirstFrameOnly))
            return Self.tagColor(image, color: color, icc: session.iccProfile)
        }
    }

    /// Reserves the decode's memory once its colour (and so its sample type) is known, before libjxl allocates
    /// the frame: the RGBA8 canvas, libjxl's float planes (4 bytes a sample), the previous frame an animation
    /// keeps for blending, and the float samples of a linear image.
    func claimBudget(_ info: cic_jxl_info, color: cic_jxl_color, frames: Int) throws {
        let channels = Int(info.num_color_channels) + (info.alpha_bits > 0 ? 1 : 0)
        var bytesPerPixel = 4 + 4 * channels
        if info.have_animation != 0 && frames > 1 { bytesPerPixel += 4 * channels }
        if color.linear_output != 0 { bytesPerPixel += 16 }
        try options.checkDimensions(width: Int(info.width), height: Int(info.height),
                                    workingCanvases: (bytesPerPixel + 3) / 4)
    }

    /// Threads for a decode of `pixels`: libjxl's parallel runner on every core when this is the process's only
    /// decode and the image is large enough to split (1 MP), else the calling thread alone.
    func threads(_ pixels: Int) -> Int {
        guard lib.hasThreads, pixels >= 1 << 20, DecodeActivity.shared.isAlone else { return 1 }
        return min(ProcessInfo.processInfo.activeProcessorCount, 8)
    }

    /// The session's next displayed frame, decoded into a new canvas: complete, or (when the data ends inside
    /// it) as far as libjxl can render it; nil when nothing of it can be shown. `onColor` runs at the colour
    /// event, before libjxl allocates the frame. A frame cut short leaves the session unusable.
    static func nextFrame(
        _ session: JXLSession, _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, onColor: () throws -> Void = {}
    ) throws -> (pixels: [UInt8], complete: Bool)? {
        var outcome = JXLSession.Event.needMoreInput
        var shown = false
        let pixels = try [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
            var outputSet = false
            outcome = try session.feed(bytes) { event in
                switch event {
                case .color: try onColor()
                case .needOutput:
                    try session.setOutput(buffer)
                    outputSet = true
                case .fullImage: return false
                default: break
                }
                return true
            }
            // libjxl writes every pixel of the canvas at the end of a frame, and when it flushes one.
            if outcome == .fullImage || (outcome == .needMoreInput && outputSet && session.flush()) {
                shown = true
                count = buffer.count
            }
        }
        switch outcome {
        case .fullImage: return (pixels, true)
        case .needMoreInput: return shown ? (pixels, false) : nil
        case .error(let message): throw ImageDecodingError.corrupt(message)
        default: throw ImageDecodingError.corrupt("the JPEG XL codestream ended before its frame")
        }
    }

    /// `image` tagged with the colour space libjxl decoded it in, for `ImageCodersManager` to convert:
    /// - sRGB (any XYB image, which libjxl is asked to render as sRGB, and sRGB files): nothing to do;
    /// - linear samples (written with the sRGB curve by the shim): their primaries, if not sRGB's;
    /// - PQ and HLG (HDR): left as decoded, saying so (tone mapping is out of scope, as for HEIF's nclx);
    /// - anything else: the ICC profile libjxl gives for the data (its own, or one it writes for the
    ///   enumerated colour space), converted like any embedded profile.
    static func tagColor(_ image: DecodedImage, color: cic_jxl_color, icc: Data?) -> DecodedImage {
        var tagged = image
        if color.is_srgb != 0 { return tagged }
        if color.linear_output != 0 {
            let xy = [color.white_xy.0, color.white_xy.1, color.red_xy.0, color.red_xy.1,
                      color.green_xy.0, color.green_xy.1, color.blue_xy.0, color.blue_xy.1]
            let srgb = NCLXColor.chromaticities[1] ?? []
            let isSRGB = color.color_space == 1 || zip(xy, srgb).allSatisfy { abs($0 - $1) < 0.0005 }
            if !isSRGB {
                tagged.colorSource = .chromaticities(xy: xy, gamma: 0, description: "JPEG XL linear primaries")
                tagged.colorState = .awaitingConversion
            }
            return tagged
        }
        if color.has_encoding != 0, color.transfer == 16 || color.transfer == 18 {
            tagged.colorSource = .settled
            tagged.colorState = .notConverted(
                reason: "HDR transfer (\(color.transfer == 16 ? "PQ" : "HLG")) in a JPEG XL file is not tone-mapped")
            return tagged
        }
        if let icc {
            tagged.iccProfile = icc
            tagged.colorState = .awaitingConversion
        }
        return tagged
    }
}
