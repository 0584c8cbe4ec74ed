import Foundation

/// The animation of an APNG file, collected from its acTL/fcTL/fdAT chunks as they stream past; `frames`
/// turns it into the `APNGFrames` that composite each frame on demand.
///
/// Debian's libpng has no APNG support, so each frame is rebuilt as a small standalone PNG (IHDR with the
/// frame's size, the file's PLTE and tRNS, IDAT made of the frame's fdAT data) and decoded by the same
/// libpng reader as the default image (`APNGFrames`).
///
/// When the default image is not part of the animation (IDAT before the first fcTL), it is still
/// reported as frame 0, as Pillow (the corpus reference) does, so `pixels` is always the first frame.
/// Structural problems never fail the decode: the animation ends at the last good frame control (a broken
/// acTL leaves a still image).
struct APNGAnimation {
    /// More frame controls than this fail the decode (`.tooManyFrames`), whatever acTL claims.
    let maximumFrameCount: Int

    struct Frame: Sendable {
        var control: APNGFrameControl
        var data: [[UInt8]] = []
    }
    private var header: [UInt8] = []
    private var palette: [UInt8]?
    private var transparency: [UInt8]?
    private var seenIDAT = false
    private var seenAcTL = false
    private var declaredFrames = 0
    private var accepting = true
    private var frames: [Frame] = []
    /// fcTL came before IDAT: the default image is the animation's first frame.
    private var defaultImageIsFirstFrame = false
    /// acTL num_plays: 0 means forever.
    private(set) var loopCount = 0
    private var frameControlsAfterIDAT = 0

    init(maximumFrameCount: Int = ImageDecodingOptions.defaultMaximumFrameCount) {
        self.maximumFrameCount = max(1, maximumFrameCount)
    }

    /// Whether a valid acTL announced an animation.
    var isAnimated: Bool { seenAcTL && declaredFrames > 0 && !frames.isEmpty }

    mutating func chunkBegins(_ type: PNGChunkType) {
        if type == .IDAT { seenIDAT = true }
    }

    mutating func record(_ type: PNGChunkType, data: [UInt8], canvasWidth: Int, canvasHeight: Int) throws {
        switch type {
        case .IHDR where header.isEmpty:
            header = data
        case .PLTE where !seenIDAT:
            palette = data
        case .tRNS where !seenIDAT:
            transparency = data
        case .acTL:
            guard !seenAcTL, !seenIDAT, data.count >= 8 else {
                // A second or misplaced acTL makes the animation invalid (the default image remains).
                declaredFrames = 0
                accepting = false
                return
            }
            seenAcTL = true
            let count = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
            let plays = Int(data[4]) << 24 | Int(data[5]) << 16 | Int(data[6]) << 8 | Int(data[7])
            guard count > 0, count <= 0x7FFF_FFFF else {
                accepting = false
                return
            }
            declaredFrames = count
            loopCount = plays
        case .fcTL:
            guard accepting, seenAcTL, declaredFrames > 0 else { return }
            guard frames.count < declaredFrames,
                  let control = APNGFrameControl(data, canvasWidth: canvasWidth, canvasHeight: canvasHeight) else {
                accepting = false
                return
            }
            if !seenIDAT {
                // Only the default image's own fcTL may come before IDAT, and it must cover the canvas.
                guard frames.isEmpty, control.coversCanvas(width: canvasWidth, height: canvasHeight) else {
                    accepting = false
                    return
                }
                defaultImageIsFirstFrame = true
            }
            // The default image, when not part of the animation, is reported as one more frame.
            if frames.count + (defaultImageIsFirstFrame ? 0 : 1) >= maximumFrameCount {
                throw ImageDecodingError.tooManyFrames(limit: maximumFrameCount)
            }
            if seenIDAT { frameControlsAfterIDAT += 1 }
            frames.append(Frame(control: control))
        case .fdAT:
            guard accepting, data.count > 4, let last = frames.indices.last,
                  !(last == 0 && defaultImageIsFirstFrame) else { return }
            frames[last].data.append(Array(data[4...]))  // after the sequence number
        default:
            break
        }
    }

    /// The frames for on-demand compositing, or nil when fewer than two frames exist (a still image).
    /// `defaultImage` is the decoded IDAT image (canvas size). `complete`: the file reached IEND; otherwise
    /// the last frame control's data may be cut short and that frame is left out.
    func frames(defaultImage: [UInt8], width: Int, height: Int, complete: Bool) -> APNGFrames? {
        guard isAnimated, width > 0, height > 0, header.count == 13 else { return nil }
        // Cut short: the frames before the last frame control are whole; the default image is whole only
        // when a frame control followed its IDAT.
        guard complete || frameControlsAfterIDAT > 0 else { return nil }
        var kept = complete ? frames : Array(frames.dropLast())
        // A frame without data ends the animation (as a frame that does not decode did before).
        if let empty = kept.indices.first(where: { kept[$0].data.isEmpty && !($0 == 0 && defaultImageIsFirstFrame) }) {
            kept.removeSubrange(empty...)
        }
        let total = kept.count + (defaultImageIsFirstFrame ? 0 : 1)
        guard total >= 2 else { return nil }
        return APNGFrames(header: header, palette: palette, transparency: transparency, frames: kept,
                          defaultImage: defaultImage, defaultImageIsFirstFrame: defaultImageIsFirstFrame,
                          canvasWidth: width, canvasHeight: height, loopCount: loopCount)
    }
}
