import Foundation

/// libwebp's "simple" encoding API, resolved with `dlsym` from `libwebp.so.7` (separately from the decoder's
/// entry points, so a decoder-only build of libwebp still decodes).
struct LibWebPEncoder: DynamicCodecLibrary {
    /// WebP's format limit per side.
    static let maximumDimension = 16383

    typealias EncodeRGBA = @convention(c) (UnsafePointer<UInt8>?, Int32, Int32, Int32, Float,
                                           UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int
    typealias EncodeLosslessRGBA = @convention(c) (UnsafePointer<UInt8>?, Int32, Int32, Int32,
                                                   UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias GetEncoderVersion = @convention(c) () -> Int32

    /// WebPEncodeRGBA(rgba, width, height, stride, quality 0...100, &output) → size, 0 on failure.
    let encodeRGBA: EncodeRGBA
    /// WebPEncodeLosslessRGBA(rgba, width, height, stride, &output) → size, 0 on failure.
    let encodeLosslessRGBA: EncodeLosslessRGBA
    /// WebPFree: releases what the encoders returned.
    let free: Free
    let encoderVersion: Int32

    static func load(_ soname: String) -> Result<LibWebPEncoder, LibraryUnavailable> {
        DynamicLibrary.load(soname, as: LibWebPEncoder.self) { library in Result { () throws(LibraryUnavailable) in try resolve(library) } }
    }

    private static func resolve(_ library: DynamicLibrary) throws(LibraryUnavailable) -> LibWebPEncoder {
        LibWebPEncoder(
            encodeRGBA: try library.function("WebPEncodeRGBA", as: EncodeRGBA.self),
            encodeLosslessRGBA: try library.function("WebPEncodeLosslessRGBA", as: EncodeLosslessRGBA.self),
            free: try library.function("WebPFree", as: Free.self),
            encoderVersion: try library.function("WebPGetEncoderVersion", as: GetEncoderVersion.self)())
    }

    /// "libwebp 1.2.4", from WebPGetEncoderVersion (0xMMmmpp).
    var versionString: String {
        "libwebp \(encoderVersion >> 16).\((encoderVersion >> 8) & 0xFF).\(encoderVersion & 0xFF)"
    }
}

/// WebP output: lossy (quality) or lossless, alpha kept, no metadata chunks (the simple API writes none).
enum WebPEncoder {
    static func encode(_ image: DecodedImage, lossless: Bool, quality: Int, soname: String) throws(ImageEncodingError) -> Data {
        let lib: LibWebPEncoder
        switch LibWebPEncoder.load(soname) {
        case .success(let loaded): lib = loaded
        case .failure(let why): throw .libraryUnavailable("WebP encoding needs libwebp (\(why)); install libwebp7")
        }
        guard image.width <= LibWebPEncoder.maximumDimension, image.height <= LibWebPEncoder.maximumDimension else {
            throw .invalidImage("\(image.width)x\(image.height) exceeds WebP's \(LibWebPEncoder.maximumDimension) pixels per side")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let size = image.pixels.withUnsafeBufferPointer { p in
            lossless
                ? lib.encodeLosslessRGBA(p.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width * 4), &output)
                : lib.encodeRGBA(p.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width * 4),
                                 Float(quality), &output)
        }
        guard size > 0, let output else {
            if let output { lib.free(output) }
            throw .failed("libwebp could not encode the image")
        }
        defer { lib.free(output) }
        return Data(bytes: output, count: size)
    }
}
