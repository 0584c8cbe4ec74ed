/// What the coder reads itself from an AVIF image sequence's colour track — the first `pict` track that is not an
/// auxiliary image (alpha, depth: no `tref/auxl`), the one libavif decodes: its loop count from the edit list
/// (libavif 0.11 does not report it) and its frame durations from the time-to-sample table (libavif's
/// per-frame timing call sums every earlier frame's duration, quadratic in the frame count). Every read is
/// bounds-checked; anything missing or malformed gives the "unknown" answer.
///
/// Loop count (ISO/IEC 23008-12 9.6.1, ISO/IEC 14496-12 8.6.6; libavif 1.x's `repetitionCount` follows the same
/// rules), as plays, 0 meaning forever:
/// - no `edts`: unknown, played forever, as Chromium does for libavif's `AVIF_REPETITION_COUNT_UNKNOWN`;
/// - `elst` without the repeat flag: played once (1);
/// - repeat flag: the edit (its first entry's `segment_duration`) repeats to fill the track's duration (`tkhd`,
///   both in the movie timescale): ⌈track ÷ segment⌉ plays; an indefinite or zero track duration, a zero segment
///   or more plays than an `Int32` holds mean forever (0).
struct AVIFColourTrack {
    /// Plays of the sequence: 0 means forever.
    var plays = 0
    /// The media timescale (`mdhd`), units per second.
    var timescale: UInt32?
    /// `stts` entries: so many samples of so many timescale units each.
    var timeToSample: [(count: UInt32, delta: UInt32)] = []

    /// The colour track of the file in `bytes`, or nil when there is none that can be read.
    static func find(in bytes: UnsafeRawBufferPointer) -> AVIFColourTrack? {
        guard let moov = ISOBMFFBoxes.first("moov", in: bytes) else { return nil }
        for trak in ISOBMFFBoxes(bytes, in: moov.payload) where trak.type == "trak" {
            guard let track = Parsed(bytes, trak.payload), track.isPicture, !track.isAuxiliary else { continue }
            return AVIFColourTrack(plays: track.plays, timescale: track.timescale, timeToSample: track.timeToSample)
        }
        return nil
    }

    /// Seconds each of the first `frameCount` frames lasts, as libavif times them (a frame past the table takes
    /// the last entry's duration), or nil without a timescale and a table. Linear in the frames and entries.
    func durations(frameCount: Int) -> [Double]? {
        guard let timescale, timescale > 0, let last = timeToSample.last else { return nil }
        var durations: [Double] = []
        durations.reserveCapacity(max(0, frameCount))
        for entry in timeToSample where durations.count < frameCount {
            let seconds = Double(entry.delta) / Double(timescale)
            durations += repeatElement(seconds, count: min(Int(entry.count), frameCount - durations.count))
        }
        durations += repeatElement(Double(last.delta) / Double(timescale), count: max(0, frameCount - durations.count))
        return durations
    }

    /// What one `trak` box says about itself.
    private struct Parsed {
        var isPicture = false
        var isAuxiliary = false
        /// tkhd duration (movie timescale), nil when indefinite.
        var duration: UInt64?
        /// nil without edts/elst; (repeats, first segment duration) otherwise.
        var edit: (repeats: Bool, segment: UInt64)?
        var timescale: UInt32?
        var timeToSample: [(count: UInt32, delta: UInt32)] = []

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
                    media(bytes, p)
                case "edts":
                    edit = Self.editList(bytes, p)
                default:
                    continue
                }
            }
        }

        /// The handler (hdlr), the timescale (mdhd) and the time-to-sample table (minf/stbl/stts).
        private mutating func media(_ bytes: UnsafeRawBufferPointer, _ mdia: Range<Int>) {
            if let hdlr = ISOBMFFBoxes.first("hdlr", in: bytes, range: mdia), hdlr.payload.count >= 12 {
                // version/flags u32, pre_defined u32, handler_type.
                isPicture = ISOBMFFBoxes.u32(bytes, hdlr.payload.lowerBound + 8) == 0x7069_6374  // "pict"
            }
            if let mdhd = ISOBMFFBoxes.first("mdhd", in: bytes, range: mdia), mdhd.payload.count >= 4 {
                // After version/flags: v1 creation u64, modification u64, timescale; v0 the same with u32 times.
                let at = mdhd.payload.lowerBound + (bytes[mdhd.payload.lowerBound] == 1 ? 20 : 12)
                if at + 4 <= mdhd.payload.upperBound { timescale = ISOBMFFBoxes.u32(bytes, at) }
            }
            guard let minf = ISOBMFFBoxes.first("minf", in: bytes, range: mdia),
                  let stbl = ISOBMFFBoxes.first("stbl", in: bytes, range: minf.payload),
                  let stts = ISOBMFFBoxes.first("stts", in: bytes, range: stbl.payload), stts.payload.count >= 8 else { return }
            let count = Int(ISOBMFFBoxes.u32(bytes, stts.payload.lowerBound + 4))
            // Entries beyond the box's end are not there: the box's size bounds the loop, not the count it declares.
            let available = min(count, (stts.payload.count - 8) / 8)
            timeToSample.reserveCapacity(available)
            for i in 0..<available {
                let at = stts.payload.lowerBound + 8 + i * 8
                timeToSample.append((ISOBMFFBoxes.u32(bytes, at), ISOBMFFBoxes.u32(bytes, at + 4)))
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
