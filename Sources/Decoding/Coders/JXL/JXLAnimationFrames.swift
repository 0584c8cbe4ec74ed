import CImageCodecs
import Foundation

/// A JPEG XL animation's frames for `AnimatedImage`: the file's bytes and each frame's duration, decoded on
/// demand by libjxl, which composites them itself (blending, crops, reference frames).
///
/// Random access: every frame is reachable from frame 0 (`keyFrame` is 0): a compositor skips the frames
/// before the one asked for with `JxlDecoderSkipFrames`, and libjxl decodes of those only what later frames
/// refer to. Playing in order continues from the kept compositor, one frame's work per frame.
struct JXLAnimationFrames: AnimationSource {
    let lib: LibJXL
    let data: Data
    let frameTicks: [UInt32]
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    /// Seconds per tick.
    private let tick: Double
    /// libjxl's working memory besides the canvas: its float planes and the kept previous frame.
    let workingBytes: Int

    init(lib: LibJXL, data: Data, info: cic_jxl_info, frameTicks: [UInt32]) {
        self.lib = lib
        self.data = data
        self.frameTicks = frameTicks
        canvasWidth = Int(info.width)
        canvasHeight = Int(info.height)
        loopCount = Int(info.num_loops)
        tick = info.tps_numerator > 0 ? Double(info.tps_denominator) / Double(info.tps_numerator) : 0
        let channels = Int(info.num_color_channels) + (info.alpha_bits > 0 ? 1 : 0)
        workingBytes = canvasWidth * canvasHeight * 8 * channels
    }

    var frameCount: Int { frameTicks.count }

    /// The browser rule every animated format here follows: under 20 ms shows for 100 ms.
    func duration(at index: Int) -> TimeInterval {
        let seconds = Double(frameTicks[index]) * tick
        return seconds < 0.02 ? 0.1 : seconds
    }

    var retainedBytes: Int { data.count + frameTicks.count * MemoryLayout<UInt32>.stride }

    func keyFrame(atOrBefore index: Int) -> Int { 0 }

    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor {
        Compositor(source: self, next: keyFrame)
    }

    func hasSameContent(as other: any AnimationSource) -> Bool {
        guard let other = other as? JXLAnimationFrames else { return false }
        return frameTicks == other.frameTicks && data == other.data
    }

    /// One libjxl decoder playing the animation forward. Frames passed over without output are skipped in one
    /// call when the next frame is drawn.
    final class Compositor: AnimationCompositor {
        private let source: JXLAnimationFrames
        private(set) var nextIndex: Int
        private var session: JXLSession?
        /// Frames to skip before the next one drawn.
        private var pendingSkips: Int
        /// Set once a frame was cut short: libjxl may still point into that frame's buffer, so it is never fed again.
        private var ended = false

        init(source: JXLAnimationFrames, next: Int) {
            self.source = source
            nextIndex = next
            pendingSkips = next
        }

        var retainedBytes: Int { session == nil ? 0 : source.workingBytes }

        func advance(output: Bool) throws -> [UInt8]? {
            let index = nextIndex
            nextIndex += 1
            guard output else {
                pendingSkips += 1
                return nil
            }
            guard !ended else { throw ImageDecodingError.corrupt("animation frame \(index): the data ends before it") }
            let decoding = JXLImageDecoding(lib: source.lib, options: ImageDecodingOptions())
            let session = try self.session ?? JXLSession(
                lib: source.lib, mode: Int32(CIC_JXL_MODE_PIXELS), threads: decoding.threads(source.canvasWidth * source.canvasHeight))
            self.session = session
            session.skipFrames(pendingSkips)
            pendingSkips = 0
            let frame = try source.data.withUnsafeBytes { bytes in
                try JXLImageDecoding.nextFrame(session, bytes, width: source.canvasWidth, height: source.canvasHeight)
            }
            guard let frame else {
                ended = true
                throw ImageDecodingError.corrupt("animation frame \(index): the data ends before it")
            }
            if !frame.complete { ended = true }
            return frame.pixels
        }
    }
}
