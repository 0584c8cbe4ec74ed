/// How many times an AVIF image sequence plays, from the edit list of its colour track (ISO/IEC 23008-12 9.6.1,
/// ISO/IEC 14496-12 8.6.6), read here because libavif 0.11 does not report it (1.x's `repetitionCount` follows the
/// same rules). Every read is bounds-checked; anything missing or malformed gives the "unknown" answer.
///
/// The colour track is the first `pict` track that is not an auxiliary (alpha, depth) image: no `tref/auxl`.
/// - no `edts`: unknown, played forever, as Chromium does for libavif's `AVIF_REPETITION_COUNT_UNKNOWN`;
/// - `elst` without the repeat flag: played once (1);
/// - repeat flag: the edit (its first entry's `segment_duration`) repeats to fill the track's duration (`tkhd`,
///   both in the movie timescale): ⌈track ÷ segment⌉ plays; an indefinite track duration (all ones), a zero
///   segment or more plays than an `Int32` holds mean forever (0).
enum AVIFEditList {
    /// Plays of the sequence in `bytes` (a whole file): 0 means forever.
    static func loopCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let moov = ISOBMFFBoxes.first("moov", in: bytes) else { return 0 }
        for trak in ISOBMFFBoxes(bytes, in: moov.payload) where trak.type == "trak" {
            guard let track = Track(bytes, trak.payload), track.isPicture, !track.isAuxiliary else { continue }
            return track.plays
        }
        return 0
    }

    /// What one `trak` box says about itself.
    private struct Track {
        var isPicture = false
        var isAuxiliary = false
        /// tkhd duration (movie timescale), nil when indefinite.
        var duration: UInt64?
        /// nil without edts/elst; (repeats, first segment duration) otherwise.
        var edit: (repeats: Bool, segment: UInt64)?

        init?(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
            for box in ISOBMFFBoxes(bytes, in: range) {
                let p = box.payload
                switch box.type {
                case "tkhd":
                    guard p.count >= 4 else { return nil }
                    let version = bytes[p.lowerBound]
                    // v1: creation u64, modification u64, track_ID u32, reserved u32, duration u64.
                    // v0: creation u32, modification u32, track_ID u32, reserved u32, duration u32.
                    if version == 1, p.count >= 4 + 32 {
                        let d = ISOBMFFBoxes.u64(bytes, p.lowerBound + 4 + 24)
                        duration = d == UInt64.max ? nil : d
                    } else if version == 0, p.count >= 4 + 20 {
                        let d = ISOBMFFBoxes.u32(bytes, p.lowerBound + 4 + 16)
                        duration = d == UInt32.max ? nil : UInt64(d)
                    } else {
                        return nil
                    }
                case "tref":
                    isAuxiliary = ISOBMFFBoxes.first("auxl", in: bytes, range: p) != nil
                case "mdia":
                    if let hdlr = ISOBMFFBoxes.first("hdlr", in: bytes, range: p), hdlr.payload.count >= 12 {
                        // version/flags u32, pre_defined u32, handler_type.
                        isPicture = ISOBMFFBoxes.u32(bytes, hdlr.payload.lowerBound + 8) == 0x7069_6374  // "pict"
                    }
                case "edts":
                    edit = Self.editList(bytes, p)
                default:
                    continue
                }
            }
        }

        /// (repeats, first segment duration) of the elst inside an edts payload.
        private static func editList(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> (repeats: Bool, segment: UInt64)? {
            guard let elst = ISOBMFFBoxes.first("elst", in: bytes, range: range), elst.payload.count >= 8 else { return nil }
            let p = elst.payload.lowerBound
            let version = bytes[p]
            let repeats = bytes[p + 3] & 1 != 0
            let entries = ISOBMFFBoxes.u32(bytes, p + 4)
            guard repeats else { return (false, 0) }
            guard entries >= 1 else { return nil }
            if version == 1, elst.payload.count >= 8 + 8 { return (true, ISOBMFFBoxes.u64(bytes, p + 8)) }
            if version == 0, elst.payload.count >= 8 + 4 { return (true, UInt64(ISOBMFFBoxes.u32(bytes, p + 8))) }
            return nil
        }

        var plays: Int {
            guard let edit else { return 0 }
            guard edit.repeats else { return 1 }
            guard let duration, duration > 0, edit.segment > 0 else { return 0 }
            let (whole, remainder) = duration.quotientAndRemainder(dividingBy: edit.segment)
            let plays = whole + (remainder == 0 ? 0 : 1)
            return plays > UInt64(Int32.max) ? 0 : Int(plays)
        }
    }
}
