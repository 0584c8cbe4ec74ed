import Foundation

/// Tracks of an AVIF image sequence that carry no pictures (an audio track muxed in by MP4Box, a timed-text
/// track), hidden from libavif. libavif 0.11 validates every track's header as if it were a picture and refuses
/// the whole file for an audio track's 0×0 size ("Track ID [0] has an invalid size [0x0]"); 1.x skips such
/// tracks. Renaming each foreign `trak` box to `free` (same size, so no offset in the file moves) makes 0.11 skip
/// it as 1.x does.
enum AVIFForeignTracks {
    /// Handlers of tracks a decoder reads pictures from: image sequences (`pict`), auxiliary images such as alpha
    /// (`auxv`) and video.
    static let pictureHandlers: Set<String> = ["pict", "auxv", "vide"]

    /// A copy of `data` with every foreign track renamed `free`, or nil when it has none.
    static func hidden(in data: Data) -> Data? {
        let offsets: [Int] = data.withUnsafeBytes { bytes in
            guard let moov = ISOBMFFBoxes.first("moov", in: bytes) else { return [] }
            return ISOBMFFBoxes(bytes, in: moov.payload).compactMap { trak in
                guard trak.type == "trak", let handler = handler(bytes, trak.payload), !pictureHandlers.contains(handler) else { return nil }
                return trak.start + 4  // the type field
            }
        }
        guard !offsets.isEmpty else { return nil }
        var patched = data
        for offset in offsets {
            let at = patched.startIndex + offset
            patched.replaceSubrange(at..<at + 4, with: Array("free".utf8))
        }
        return patched
    }

    /// The handler type of a trak (mdia/hdlr), or nil when it cannot be read.
    private static func handler(_ bytes: UnsafeRawBufferPointer, _ trak: Range<Int>) -> String? {
        guard let mdia = ISOBMFFBoxes.first("mdia", in: bytes, range: trak),
              let hdlr = ISOBMFFBoxes.first("hdlr", in: bytes, range: mdia.payload), hdlr.payload.count >= 12
        else { return nil }
        let at = hdlr.payload.lowerBound + 8
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<at + 4]), as: UTF8.self)
    }
}
