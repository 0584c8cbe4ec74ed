import Foundation

/// EXIF orientation (TIFF tag 0x0112), values 1...8. It is reported, never applied to the pixels:
/// a viewer rotates or flips at display time, as UIKit and browsers do.
public enum ImageOrientation: Int, Sendable, CaseIterable {
    case up = 1
    case upMirrored = 2
    case down = 3
    case downMirrored = 4
    case leftMirrored = 5
    case right = 6
    case rightMirrored = 7
    case left = 8

    /// Whether displaying the image swaps width and height (orientations 5...8).
    public var swapsDimensions: Bool { rawValue >= 5 }
}

/// One frame of an animated image: a fully composited canvas of the image's size.
public struct ImageFrame: Sendable, Equatable {
    /// RGBA8, straight alpha, top-down rows of `width * 4` bytes (the owning image's width and height).
    public var pixels: [UInt8]
    /// How long the frame is shown, in seconds (browser rule applied: under 20 ms means 100 ms).
    public var duration: TimeInterval

    public init(pixels: [UInt8], duration: TimeInterval) {
        self.pixels = pixels
        self.duration = duration
    }
}

/// A decoded bitmap: RGBA8 with straight (non-premultiplied) alpha, top-down rows.
///
/// An animated image keeps its first frame in `pixels` (the poster) and every frame in `animation`, which
/// composites them on demand from the compressed bytes; `frames` holds composited frames only when they were
/// asked for up front (`ImageDecodingOptions.preloadAllFrames`) or built by the caller.
public struct DecodedImage: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// RGBA8, straight alpha, top-down rows, `width * 4` bytes each (`width * height * 4` in all). For an
    /// animation: its first frame.
    public let pixels: [UInt8]
    /// Points-to-pixels scale: 1, 2 or 3 from "@2x"/"@3x" in the URL, or the context's override.
    public var scale: Double
    /// The container format the pixels came from.
    public let format: ImageFormat
    /// EXIF orientation, reported and not applied to `pixels`.
    public var orientation: ImageOrientation
    /// Composited animation frames, only when preloaded (`preloadAllFrames`) or given to `init`; empty otherwise
    /// (still images, and animations decoded on demand: use `animation`).
    public var frames: [ImageFrame]
    /// How many times an animation plays: 0 means forever.
    public var loopCount: Int
    /// True for a partial image: a progressive pass, rows decoded so far, or a truncated file.
    public var isIncomplete: Bool
    /// The ICC profile describing `pixels` when they are not sRGB: the file's embedded profile, handed back when
    /// colour management kept the original pixels (`.keepOriginal`, or conversion impossible). nil once the
    /// pixels were converted to sRGB, and for files without a profile.
    public var iccProfile: Data?
    /// What colour management did (or why it did not): see `ImageColorState`.
    public var colorState: ImageColorState
    /// Colour information other than ICC bytes (PNG gAMA/cHRM) while the pixels are not converted.
    var colorSource: ColorSource?
    /// Every frame of an animation, composited on demand; nil for a still image.
    public internal(set) var animation: AnimatedImage?

    /// An image; `frames` with more than one frame make it an animation whose `animation` hands them out.
    public init(
        width: Int, height: Int, pixels: [UInt8], format: ImageFormat,
        scale: Double = 1, orientation: ImageOrientation = .up,
        frames: [ImageFrame] = [], loopCount: Int = 0, isIncomplete: Bool = false,
        iccProfile: Data? = nil, colorState: ImageColorState = .sRGB
    ) {
        self.init(width: width, height: height, pixels: pixels, format: format, scale: scale, orientation: orientation,
                  frames: frames, animation: nil, loopCount: loopCount, isIncomplete: isIncomplete,
                  iccProfile: iccProfile, colorState: colorState)
    }

    /// An image with an animation composited on demand (coders), or built from `frames` when `animation` is nil.
    init(
        width: Int, height: Int, pixels: [UInt8], format: ImageFormat,
        scale: Double = 1, orientation: ImageOrientation = .up,
        frames: [ImageFrame] = [], animation: AnimatedImage?, loopCount: Int = 0, isIncomplete: Bool = false,
        iccProfile: Data? = nil, colorState: ImageColorState = .sRGB
    ) {
        self.iccProfile = iccProfile
        self.colorState = colorState
        self.width = width
        self.height = height
        self.pixels = pixels
        self.scale = scale
        self.format = format
        self.orientation = orientation
        self.frames = frames
        self.loopCount = loopCount
        self.isIncomplete = isIncomplete
        // The animation knows its image's format (`AnimatedImage.image(at:)` reports it).
        self.animation = (animation ?? Self.precomposed(frames, width: width, height: height, loopCount: loopCount))?
            .belonging(to: format)
    }

    /// An animation over frames that already exist (more than one), or nil.
    static func precomposed(_ frames: [ImageFrame], width: Int, height: Int, loopCount: Int) -> AnimatedImage? {
        guard frames.count > 1 else { return nil }
        return AnimatedImage(source: PrecomposedAnimation(frames: frames, canvasWidth: width, canvasHeight: height,
                                                          loopCount: loopCount), budget: .shared)
    }

    /// The same image (scale, orientation, colour information...) with other pixels, for scalers and coders.
    func replacingPixels(width: Int, height: Int, pixels: [UInt8], frames: [ImageFrame], animation: AnimatedImage?) -> DecodedImage {
        var copy = DecodedImage(
            width: width, height: height, pixels: pixels, format: format, scale: scale, orientation: orientation,
            frames: frames, animation: animation, loopCount: loopCount, isIncomplete: isIncomplete,
            iccProfile: iccProfile, colorState: colorState)
        copy.colorSource = colorSource
        return copy
    }

    /// The frames of this image's animation after one more processing step: the step appended to the
    /// on-demand animation, or (for frames that already exist) an animation over `mappedFrames`.
    func animation(after step: FramePipeline.Step, mappedFrames: [ImageFrame], loopCount: Int) -> AnimatedImage? {
        guard let animation else { return nil }
        if animation.source is PrecomposedAnimation && animation.pipeline.steps.isEmpty {
            return Self.precomposed(mappedFrames, width: step.width, height: step.height, loopCount: loopCount)
        }
        return animation.appending(step)
    }

    /// Every frame of an animation (1 for a still image), whether composited on demand or preloaded.
    public var frameCount: Int { animation?.frameCount ?? max(1, frames.count) }

    /// Whether this image has more than one frame.
    public var isAnimated: Bool { frameCount > 1 }

    /// Bytes of memory the value holds: the poster (or every preloaded frame), plus what its animation keeps
    /// (compressed bytes, the kept canvas, cached frames). The cost the memory cache counts.
    public var memoryCost: Int {
        let frameBytes = width * height * 4
        let held = frames.isEmpty ? frameBytes : frameBytes * frames.count
        return held + (animation?.memoryCost ?? 0)
    }

    /// Size in points: pixels divided by `scale`.
    public var pointSize: (width: Double, height: Double) {
        let s = scale > 0 ? scale : 1
        return (Double(width) / s, Double(height) / s)
    }
}
