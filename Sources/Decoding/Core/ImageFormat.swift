import Foundation

/// An image container format, recognised by content ("sniffing"), never by file name or MIME type.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp, bmp, tiff, heic, heif, avif, ico, undefined
    /// JPEG XL: a bare codestream or the ISOBMFF-style container.
    case jxl

    /// Identifies the format from the first bytes of `data` (a prefix of 32 bytes is enough).
    public init(sniffing data: Data) {
        self = data.withUnsafeBytes { ImageFormat.sniff(Array($0.prefix(32))) }
    }

    /// The usual MIME type, for `Accept` headers and output file names.
    public var mimeType: String? {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .bmp: return "image/bmp"
        case .tiff: return "image/tiff"
        case .heic: return "image/heic"
        case .heif: return "image/heif"
        case .avif: return "image/avif"
        case .ico: return "image/x-icon"
        case .jxl: return "image/jxl"
        case .undefined: return nil
        }
    }

    /// The usual file extension, without a dot.
    public var fileExtension: String? {
        switch self {
        case .jpeg: return "jpg"
        case .undefined: return nil
        default: return rawValue
        }
    }

    private static func sniff(_ b: [UInt8]) -> ImageFormat {
        func starts(_ sig: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + sig.count && Array(b[offset..<offset + sig.count]) == sig
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        // JPEG XL: the bare codestream, or the container's signature box ("JXL " in a 12-byte box).
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C] + Array("JXL ".utf8) + [0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        // Classic TIFF (version 42) and BigTIFF (version 43), either byte order.
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            return isobmffFormat(b)
        }
        // ICONDIR type 1 (icon) or 2 (cursor, .cur) with at least one entry.
        if starts([0x00, 0x00]), b.count >= 6, b[2] == 1 || b[2] == 2, b[3] == 0, b[4] != 0 || b[5] != 0 { return .ico }
        if starts(Array("BM".utf8)), b.count >= 18 {
            // "BM" alone is too weak: also require a known DIB header size.
            let dib = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(dib) { return .bmp }
        }
        return .undefined
    }

    /// HEIF family: the major brand, then the compatible brands within the sniffed prefix.
    private static func isobmffFormat(_ b: [UInt8]) -> ImageFormat {
        func brand(at i: Int) -> String? {
            guard i + 4 <= b.count else { return nil }
            return String(bytes: b[i..<i + 4], encoding: .ascii)
        }
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        var brands: [String] = []
        if let major = brand(at: 8) { brands.append(major) }
        var i = 16
        while i + 4 <= min(b.count, max(boxSize, 16)) {
            if let compatible = brand(at: i) { brands.append(compatible) }
            i += 4
        }
        for candidate in brands {
            switch candidate {
            case "avif", "avis": return .avif
            case "heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs": return .heic
            default: continue
            }
        }
        if brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) { return .heif }
        return .undefined
    }
}
