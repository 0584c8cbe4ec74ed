import CImageCodecs
import Foundation

/// What a header-only pass over a JPEG XL file learns, before any pixel memory exists: the image's size, and
/// every displayed frame's duration. libjxl reads each frame's header and table of contents and skips its data;
/// with coalescing off it reports every layer at its coded size, so a layer larger than the pixel limit (a
/// small image with a huge frame, which libjxl 0.7 would try to allocate, aborting the process when it cannot)
/// is refused here, as a GIF frame reaching outside its screen is.
///
/// It can also run while bytes arrive (`feed`): it needs only the headers, so it finds a bomb before the
/// pixel decoder reaches that frame's data.
final class JXLFrameIndex {
    /// The header's facts; nil until the basic info has arrived.
    private(set) var info: cic_jxl_info?
    /// Ticks of each displayed frame (one for a still image).
    private(set) var frameTicks: [UInt32] = []
    /// Whether the last frame's header has been read.
    private(set) var sawLastFrame = false

    private let session: JXLSession
    private let options: ImageDecodingOptions
    /// Layers read since the last displayed frame (a frame of duration 0 is a layer of the next one).
    private var pendingLayers = 0

    init(lib: LibJXL, options: ImageDecodingOptions) throws {
        session = try JXLSession(lib: lib, mode: Int32(CIC_JXL_MODE_INDEX))
        self.options = options
    }

    /// Reads the headers in `bytes` (every byte so far). Throws `.tooLarge`, `.zeroPixels`, `.tooManyFrames` or
    /// `.corrupt` as soon as the headers show it.
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        let last = try session.feed(bytes) { event in
            switch event {
            case .basicInfo:
                let header = session.basicInfo
                try options.checkPixelLimit(width: Int(header.width), height: Int(header.height))
                info = header
            case .frame:
                try record(session.frameHeader)
            default:
                break
            }
            return true
        }
        if case .error(let message) = last { throw ImageDecodingError.corrupt(message) }
    }

    private func record(_ frame: cic_jxl_frame) throws {
        // The layer's own extent must fit the pixel limit: libjxl allocates it whole.
        try options.checkPixelLimit(width: Int(frame.layer_width), height: Int(frame.layer_height))
        pendingLayers += 1
        // libjxl caps nothing: a codestream of tiny layers could make millions of them.
        guard pendingLayers <= Self.maximumLayersPerFrame else {
            throw ImageDecodingError.corrupt("a JPEG XL frame of more than \(Self.maximumLayersPerFrame) layers")
        }
        // A frame of duration 0 that is not the last is a layer of the next displayed frame (libjxl's own rule
        // when it composites); a still image's frames are all layers of one picture.
        let animated = info?.have_animation ?? 0 != 0
        if frame.is_last != 0 { sawLastFrame = true }
        guard frame.is_last != 0 || (animated && frame.duration > 0) else { return }
        pendingLayers = 0
        frameTicks.append(animated ? frame.duration : 0)
        try options.checkFrameCount(frameTicks.count)
    }

    /// Layers one displayed frame may have: far above what encoders write (cjxl writes one), far below what
    /// would make the index itself a cost.
    static let maximumLayersPerFrame = 10_000
}
