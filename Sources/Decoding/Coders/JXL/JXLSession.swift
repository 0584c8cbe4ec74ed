import CImageCodecs
import Foundation

/// One libjxl decoder (`cic_jxl_decoder`) and the input it has used: bytes are handed to libjxl only while the
/// caller's buffer is pinned (`feed`), and the bytes libjxl did not use are handed again next time.
/// Used by one thread at a time.
final class JXLSession {
    enum Event: Equatable {
        case needMoreInput, basicInfo, color, frame, needOutput, fullImage, success
        case error(String)
    }

    let lib: LibJXL
    private let decoder: OpaquePointer
    /// Bytes of the caller's data libjxl has used (kept internally or decoded).
    private(set) var consumed = 0

    /// A decoder reading headers only (`index`: every layer as coded) or decoding composited frames.
    init(lib: LibJXL, mode: Int32, threads: Int = 1) throws {
        guard let decoder = cic_jxl_decoder_create(lib.api, mode, Int32(clamping: threads)) else {
            throw ImageDecodingError.corrupt("libjxl could not create a decoder")
        }
        self.lib = lib
        self.decoder = decoder
    }

    deinit { cic_jxl_decoder_destroy(decoder) }

    /// Runs libjxl over `bytes` (all the data so far, from byte 0), starting where it stopped, and calls
    /// `handle` with each event until `handle` returns false or libjxl needs more input or fails. Returns the
    /// last event. libjxl holds no pointer into `bytes` afterwards.
    @discardableResult
    func feed(_ bytes: UnsafeRawBufferPointer, handle: (Event) throws -> Bool) throws -> Event {
        let start = min(consumed, bytes.count)
        let base = bytes.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + start }
        let given = bytes.count - start
        guard cic_jxl_set_input(decoder, base, given, 0) == 0 else {
            throw ImageDecodingError.corrupt("libjxl refused its input")
        }
        defer { consumed = start + given - min(given, cic_jxl_release_input(decoder)) }
        while true {  // every pass returns, or handles one libjxl event (libjxl ends with input or an error)
            let event = next()
            switch event {
            case .needMoreInput, .success, .error:
                return event
            default:
                if try !handle(event) { return event }
            }
        }
    }

    private func next() -> Event {
        switch cic_jxl_process(decoder) {
        case Int32(CIC_JXL_EVENT_NEED_MORE_INPUT): return .needMoreInput
        case Int32(CIC_JXL_EVENT_BASIC_INFO): return .basicInfo
        case Int32(CIC_JXL_EVENT_COLOR): return .color
        case Int32(CIC_JXL_EVENT_FRAME): return .frame
        case Int32(CIC_JXL_EVENT_NEED_OUTPUT): return .needOutput
        case Int32(CIC_JXL_EVENT_FULL_IMAGE): return .fullImage
        case Int32(CIC_JXL_EVENT_SUCCESS): return .success
        default: return .error(String(cString: cic_jxl_message(decoder)))
        }
    }

    var basicInfo: cic_jxl_info {
        var info = cic_jxl_info()
        cic_jxl_basic_info(decoder, &info)
        return info
    }

    var color: cic_jxl_color {
        var color = cic_jxl_color()
        cic_jxl_color_info(decoder, &color)
        return color
    }

    /// The data profile's ICC bytes, when libjxl has them.
    var iccProfile: Data? {
        let size = color.icc_size
        guard size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard bytes.withUnsafeMutableBufferPointer({ cic_jxl_copy_icc(decoder, $0.baseAddress, size) }) == 0 else { return nil }
        return Data(bytes)
    }

    var frameHeader: cic_jxl_frame {
        var frame = cic_jxl_frame()
        cic_jxl_frame_header(decoder, &frame)
        return frame
    }

    /// Where libjxl writes the current frame: `buffer` must stay valid until `.fullImage` (or the session ends).
    func setOutput(_ buffer: UnsafeMutableBufferPointer<UInt8>) throws {
        guard cic_jxl_set_output(decoder, buffer.baseAddress, buffer.count) == 0 else {
            throw ImageDecodingError.corrupt(String(cString: cic_jxl_message(decoder)))
        }
    }

    /// Renders the part of the current frame decoded so far into the output buffer; false when nothing can be.
    func flush() -> Bool { cic_jxl_flush(decoder) == 0 }

    func skipFrames(_ count: Int) {
        if count > 0 { cic_jxl_skip_frames(decoder, count) }
    }
}
