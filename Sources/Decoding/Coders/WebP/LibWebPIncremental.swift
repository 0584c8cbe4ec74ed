/// One libwebp incremental decoder (WebPINewRGB in MODE_RGBA, fed with WebPIAppend), owned for its lifetime.
///
/// WebPIAppend copies the new bytes and resumes where it stopped, so every byte is decoded once however
/// the data is split. Rows `0..<decodedRows` are final as soon as they are reported.
final class LibWebPIncremental {
    private let lib: LibWebP
    private let decoder: OpaquePointer
    /// The status of the last append.
    private(set) var status: LibWebP.Status = .suspended

    /// nil when libwebp cannot allocate a decoder.
    init?(_ lib: LibWebP) {
        guard let decoder = lib.iNewRGB(LibWebP.modeRGBA, nil, 0, 0) else { return nil }
        self.lib = lib
        self.decoder = decoder
    }

    deinit { lib.iDelete(decoder) }

    /// Feeds the next bytes and returns the decoder's status (.suspended: wants more data).
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> LibWebP.Status {
        guard status == .suspended else { return status }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return status }
        let code = lib.iAppend(decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        status = LibWebP.Status(rawValue: code) ?? .bitstreamError
        return status
    }

    /// The image so far: full size, rows below `decodedRows` left transparent; nil before any row.
    func image(requireComplete: Bool = false) -> (width: Int, height: Int, pixels: [UInt8], decodedRows: Int)? {
        var lastY: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
        guard let rgba = lib.iDecGetRGB(decoder, &lastY, &width, &height, &stride) else { return nil }
        let w = Int(width), h = Int(height), rows = min(Int(lastY), h), rowBytes = w * 4
        guard w > 0, h > 0, rows > 0, Int(stride) >= rowBytes else { return nil }
        if requireComplete && rows < h { return nil }
        var pixels = [UInt8](repeating: 0, count: rowBytes * h)
        pixels.withUnsafeMutableBytes { out in
            for y in 0..<rows {
                out.baseAddress?.advanced(by: y * rowBytes)
                    .copyMemory(from: rgba.advanced(by: y * Int(stride)), byteCount: rowBytes)
            }
        }
        return (w, h, pixels, rows)
    }
}
