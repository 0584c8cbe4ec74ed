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
/// Still images have `frames` empty; animated images carry every composited frame in `frames`
/// and the first one in `pixels` as well.
public struct DecodedImage: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// RGBA8, straight alpha, top-down rows, `width * 4` bytes each (`width * height * 4` in all).
    public let pixels: [UInt8]
    /// Points-to-pixels scale: 1, 2 or 3 from "@2x"/"@3x" in the URL, or the context's override.
    public var scale: Double
    /// The container format the pixels came from.
    public let format: ImageFormat
    /// EXIF orientation, reported and not applied to `pixels`.
    public var orientation: ImageOrientation
    /// Animation frames (composited canvases); empty for a still image.
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

    public init(
        width: Int, height: Int, pixels: [UInt8], format: ImageFormat,
        scale: Double = 1, orientation: ImageOrientation = .up,
        frames: [ImageFrame] = [], loopCount: Int = 0, isIncomplete: Bool = false,
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
    }

    /// The same image (scale, orientation, colour information...) with other pixels, for scalers and coders.
    func replacingPixels(width: Int, height: Int, pixels: [UInt8], frames: [ImageFrame]) -> DecodedImage {
        var copy = DecodedImage(
            width: width, height: height, pixels: pixels, format: format, scale: scale, orientation: orientation,
            frames: frames, loopCount: loopCount, isIncomplete: isIncomplete, iccProfile: iccProfile, colorState: colorState)
        copy.colorSource = colorSource
        return copy
    }

    /// Whether this image has more than one frame.
    public var isAnimated: Bool { frames.count > 1 }

    /// Bytes of pixel memory held, over all frames: the cost the memory cache counts.
    public var memoryCost: Int {
        let frameBytes = width * height * 4
        return frames.isEmpty ? frameBytes : frameBytes * frames.count
    }

    /// Size in points: pixels divided by `scale`.
    public var pointSize: (width: Double, height: Double) {
        let s = scale > 0 ? scale : 1
        return (Double(width) / s, Double(height) / s)
    }
}
