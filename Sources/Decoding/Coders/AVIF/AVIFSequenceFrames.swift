import Foundation

/// An AVIF image sequence's frames for `AnimatedImage`: the file's bytes, each frame's duration and whether it is an
/// AV1 key frame, read once from libavif's sample table. Every frame is a whole picture (nothing is composited
/// over the previous one), but AV1 frames predict from earlier ones: a compositor is a libavif decoder that
/// decodes forward from a key frame, so playback costs one frame's decode per frame and random access starts from
/// the nearest key frame at or before the frame asked for.
struct AVIFSequenceFrames: AnimationSource {
    let lib: LibAVIF
    let bytes: AVIFBytes
    let canvasWidth: Int
    let canvasHeight: Int
    let loopCount: Int
    /// Seconds per frame, the browser rule applied.
    let durations: [TimeInterval]
    let keyFrames: [Bool]
    /// libavif's own limits for each compositor's decoder (frame count at parse, pixels for dav1d).
    let maximumFrames: Int
    let pixelLimit: Int
    /// What one compositor's libavif decoder holds (`AVIFImageDecoding.decoderBytes`).
    let decoderBytes: Int

    /// Indexes the frames `file` (the decoder that made the poster) parsed. `durations` are the colour track's,
    /// read from its time-to-sample table (`AVIFColourTrack`); without them libavif is asked frame by frame, which
    /// costs time quadratic in the frames (it sums every earlier frame's duration), so only up to
    /// `libavifTimingLimit` frames: beyond that the timing is unknown.
    init(lib: LibAVIF, bytes: AVIFBytes, file: AVIFFile, loopCount: Int, durations: [Double]?, maximumFrames: Int,
         pixelLimit: Int, decoderBytes: Int) {
        self.lib = lib
        self.bytes = bytes
        canvasWidth = file.width
        canvasHeight = file.height
        self.loopCount = loopCount
        if let durations, durations.count == file.frameCount {
            self.durations = durations.map { Self.duration(seconds: $0) }
        } else if file.frameCount <= Self.libavifTimingLimit {
            self.durations = (0..<file.frameCount).map { Self.duration(seconds: file.duration(at: $0)) }
        } else {
            self.durations = Array(repeating: Self.duration(seconds: nil), count: file.frameCount)
        }
        keyFrames = (0..<file.frameCount).map { $0 == 0 || file.isKeyFrame($0) }
        self.maximumFrames = maximumFrames
        self.pixelLimit = pixelLimit
        self.decoderBytes = decoderBytes
    }

    /// Frames libavif's own timing is asked for when the track's table cannot be read.
    static let libavifTimingLimit = 1_000

    /// Chromium's rule for every animated format, AVIF included: a frame declared to last 10 ms or less (or whose
    /// timing is unknown) is shown for 100 ms. Finer timings are kept: an AVIF sequence is video, and 60 fps
    /// (16.7 ms) is common, where the GIF rule's 20 ms threshold would slow it six-fold.
    static func duration(seconds: Double?) -> TimeInterval {
        guard let seconds, seconds > 0.010 else { return 0.1 }
        return seconds
    }

    var frameCount: Int { durations.count }
    func duration(at index: Int) -> TimeInterval { durations[index] }
    var retainedBytes: Int { bytes.count + frameCount * (MemoryLayout<TimeInterval>.stride + 1) }
    var workingBytes: Int { decoderBytes }

    func keyFrame(atOrBefore index: Int) -> Int {
        var i = index
        while i > 0 && !keyFrames[i] { i -= 1 }
        return i
    }

    func makeCompositor(startingAt keyFrame: Int) -> any AnimationCompositor {
        Compositor(source: self, next: keyFrame)
    }

    func hasSameContent(as other: any AnimationSource) -> Bool {
        guard let other = other as? AVIFSequenceFrames else { return false }
        return bytes === other.bytes || (frameCount == other.frameCount && bytes.buffer.elementsEqual(other.bytes.buffer))
    }

    /// Decodes the frames of one `AVIFSequenceFrames` in order with its own libavif decoder, opened on the first
    /// `advance` (so that a parse failure is thrown there, as the frame's error).
    final class Compositor: AnimationCompositor {
        private let source: AVIFSequenceFrames
        private(set) var nextIndex: Int
        private var file: AVIFFile?

        init(source: AVIFSequenceFrames, next: Int) {
            self.source = source
            nextIndex = next
        }

        var retainedBytes: Int { file == nil ? 0 : source.decoderBytes }

        func advance(output: Bool) throws -> [UInt8]? {
            let index = nextIndex
            nextIndex += 1
            do {
                let file = try opened()
                try file.decodeFrame(index)
                return output ? try file.rgba() : nil
            } catch {
                throw ImageDecodingError.corrupt("AVIF frame \(index): libavif: \(error.message)")
            }
        }

        private func opened() throws(AVIFFailure) -> AVIFFile {
            if let file { return file }
            let opened = try AVIFFile(lib: source.lib, bytes: source.bytes.buffer, owner: source.bytes,
                                      maximumFrames: source.maximumFrames)
            guard opened.width == source.canvasWidth, opened.height == source.canvasHeight,
                  opened.frameCount == source.frameCount
            else {
                throw AVIFFailure(code: -1, message: "the file parsed differently a second time")
            }
            opened.setPixelLimit(source.pixelLimit)
            file = opened
            return opened
        }
    }
}
