/// Reads the orientation tag (0x0112) from EXIF data: a TIFF structure ("II*\0" or "MM\0*") as found in
/// a JPEG APP1 segment after "Exif\0\0", in a PNG eXIf chunk, or in a WebP/HEIF EXIF box.
/// Every offset is bounds-checked; anything malformed yields `nil`.
public enum EXIFOrientation {
    /// Orientation from a JPEG APP1 payload (starting with "Exif\0\0") or a bare TIFF block.
    public static func parse<C: Collection>(_ bytes: C) -> ImageOrientation? where C.Element == UInt8 {
        var b = Array(bytes)
        if b.count >= 6, b[0] == 0x45, b[1] == 0x78, b[2] == 0x69, b[3] == 0x66, b[4] == 0, b[5] == 0 {
            b.removeFirst(6)
        }
        return parseTIFF(b)
    }

    static func parseTIFF(_ b: [UInt8]) -> ImageOrientation? {
        guard b.count >= 8 else { return nil }
        let little: Bool
        switch (b[0], b[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ i: Int) -> Int? {
            guard i >= 0, i + 2 <= b.count else { return nil }
            return little ? Int(b[i]) | Int(b[i + 1]) << 8 : Int(b[i]) << 8 | Int(b[i + 1])
        }
        func u32(_ i: Int) -> Int? {
            guard let lo = u16(little ? i : i + 2), let hi = u16(little ? i + 2 : i) else { return nil }
            return hi << 16 | lo
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<min(count, 1000) {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            guard tag == 0x0112 else { continue }
            guard u16(at + 2) == 3, let value = u16(at + 8) else { return nil }  // SHORT, value in place
            return ImageOrientation(rawValue: value)
        }
        return nil
    }
}
