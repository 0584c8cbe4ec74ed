import CImageCodecs
import Foundation

/// Decodes JPEG XL while it downloads.
///
/// Two libjxl decoders read the bytes as they come: the header pass (`JXLFrameIndex`), which refuses a size or a
/// layer over the limits before the other reaches that frame's data, and the pixel decoder, which decodes the
/// first frame into a canvas of its own. `currentImage()` renders what has been decoded so far
/// (`JxlDecoderFlushImage`: the groups and passes that arrived, the 1:8 DC image upsampled where only that
/// arrived), lazily, when bytes arrived since the last render, and only once the bytes received have doubled since
/// the last render: a render runs libjxl's whole rendering pipeline over the canvas, so previews cost a number of
/// renders logarithmic in the file's size however often they are asked for, and which previews a download shows
/// depends on its bytes alone, never on the machine's speed. A still
/// image's final pixels are that decoder's; an animation, a file cut short or anything the first decoder did not
/// finish is decoded once at the end like `JXLCoder.decode`, so the final image and the errors are the same as a
/// one-shot decode's.
final class JXLIncrementalDecoder: IncrementalImageDecoder {
    private let soname: String
    private let options: ImageDecodingOptions
    /// Every byte so far: animations and cut files are decoded from it at the end.
    private var buffer = Data()
    private var index: JXLFrameIndex?
    private var session: JXLSession?
    /// The first frame, written by libjxl between appends: owned here, freed after the session.
    private var canvas: UnsafeMutableBufferPointer<UInt8>?
    private var color = cic_jxl_color()
    private var iccProfile: Data?
    private var firstFrameDone = false
    /// Bytes reached the first frame since the last partial image.
    private var renderPending = false
    /// How many bytes had arrived at the last preview render: the next waits until that many more have arrived.
    private var bytesAtLastRender = 0
    private var partial: DecodedImage?
    private var finalImage: DecodedImage?
    private var failure: (any Error)?

    init(soname: String, options: ImageDecodingOptions) {
        self.soname = soname
        self.options = options
    }

    deinit { release() }

    func append(_ data: Data, isFinal: Bool) throws {
        if let failure { throw failure }
        guard finalImage == nil else { return }
        do {
            try feed(data, isFinal: isFinal)
        } catch {
            failure = error
            release()
            throw error
        }
    }

    private func feed(_ data: Data, isFinal: Bool) throws {
        let lib = try LibJXL.loadForDecoding(soname)
        buffer.append(data)
        let index = try self.index ?? JXLFrameIndex(lib: lib, options: options)
        self.index = index
        try buffer.withUnsafeBytes { bytes in
            // The header pass first: it sees every frame header no later than the pixel decoder does.
            try index.feed(bytes)
            guard !firstFrameDone, let info = index.info else { return }
            try decodeFirstFrame(lib, info: info, bytes)
        }
        guard isFinal else { return }
        if firstFrameDone, let canvas, let info = index.info, info.have_animation == 0 {
            finalImage = image(Array(canvas), info: info, complete: true)
        } else {
            finalImage = try JXLImageDecoding(lib: lib, options: options).decode(buffer)
        }
        release()
    }

    private func decodeFirstFrame(_ lib: LibJXL, info: cic_jxl_info, _ bytes: UnsafeRawBufferPointer) throws {
        let decoding = JXLImageDecoding(lib: lib, options: options)
        let width = Int(info.width), height = Int(info.height)
        let session = try self.session ?? JXLSession(
            lib: lib, mode: Int32(CIC_JXL_MODE_PIXELS), threads: decoding.threads(width * height))
        self.session = session
        let last = try session.feed(bytes) { event in
            switch event {
            case .color:
                color = session.color
                iccProfile = session.iccProfile
                try decoding.claimBudget(info, color: color, frames: info.have_animation != 0 ? 2 : 1)
            case .needOutput:
                let canvas = self.canvas ?? UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width * height * 4)
                if self.canvas == nil { canvas.initialize(repeating: 0) }
                self.canvas = canvas
                try session.setOutput(canvas)
            case .fullImage:
                firstFrameDone = true
                return false
            default:
                break
            }
            return true
        }
        if case .error(let message) = last { throw ImageDecodingError.corrupt(message) }
        if canvas != nil && !firstFrameDone { renderPending = true }
    }

    func currentImage() -> DecodedImage? {
        if let finalImage { return finalImage }
        guard failure == nil, let canvas, let info = index?.info else { return nil }
        if firstFrameDone {
            if partial == nil || renderPending { partial = image(Array(canvas), info: info, complete: false) }
            renderPending = false
        } else if renderPending, buffer.count >= 2 * bytesAtLastRender, let session {
            if session.flush() { partial = image(Array(canvas), info: info, complete: false) }
            bytesAtLastRender = buffer.count
            renderPending = false
        }
        return partial
    }

    private func image(_ pixels: [UInt8], info: cic_jxl_info, complete: Bool) -> DecodedImage {
        let image = DecodedImage(width: Int(info.width), height: Int(info.height), pixels: pixels, format: .jxl,
                                 loopCount: Int(info.num_loops), isIncomplete: !complete)
        return JXLImageDecoding.tagColor(image, color: color, icc: iccProfile)
    }

    /// The decoders first (libjxl may still point into the canvas), then the canvas.
    private func release() {
        session = nil
        index = nil
        canvas?.deallocate()
        canvas = nil
    }
}
