import Foundation
import Testing
@testable import Decoding

/// What the AVIF coder reads itself from a sequence's colour track, on box structures written here: the loop count
/// from the edit list (libavif 0.11 does not report it), every rule of it, the frame durations from the
/// time-to-sample table, the track chosen, and malformed boxes.
@Suite struct AVIFColourTrackTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        ICCProfileBuilder.be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload
    }

    static func u64(_ v: UInt64) -> [UInt8] { ICCProfileBuilder.be32(UInt32(v >> 32)) + ICCProfileBuilder.be32(UInt32(v & 0xFFFF_FFFF)) }

    /// tkhd version 1 (64-bit duration) or 0.
    static func tkhd(duration: UInt64, version: UInt8 = 1) -> [UInt8] {
        if version == 1 {
            return box("tkhd", [1, 0, 0, 1] + u64(0) + u64(0) + ICCProfileBuilder.be32(1) + ICCProfileBuilder.be32(0) + u64(duration)
                + [UInt8](repeating: 0, count: 60))
        }
        return box("tkhd", [0, 0, 0, 1] + [UInt8](repeating: 0, count: 16) + ICCProfileBuilder.be32(UInt32(truncatingIfNeeded: duration))
            + [UInt8](repeating: 0, count: 60))
    }

    static func elst(repeats: Bool, segment: UInt64, version: UInt8 = 1, entries: UInt32 = 1) -> [UInt8] {
        let entry = version == 1 ? u64(segment) + u64(0) : ICCProfileBuilder.be32(UInt32(segment)) + ICCProfileBuilder.be32(0)
        return box("edts", box("elst", [version, 0, 0, repeats ? 1 : 0] + ICCProfileBuilder.be32(entries) + entry + [0, 1, 0, 0]))
    }

    /// hdlr, mdhd (version 0, `timescale`) and minf/stbl/stts with `timeToSample` entries.
    static func mdia(_ handler: String, timescale: UInt32 = 30, timeToSample: [(UInt32, UInt32)] = [(5, 1)]) -> [UInt8] {
        let mdhd = box("mdhd", [0, 0, 0, 0] + ICCProfileBuilder.be32(0) + ICCProfileBuilder.be32(0) + ICCProfileBuilder.be32(timescale)
            + ICCProfileBuilder.be32(5) + [0, 0, 0, 0])
        let stts = box("stts", [0, 0, 0, 0] + ICCProfileBuilder.be32(UInt32(timeToSample.count))
            + timeToSample.flatMap { ICCProfileBuilder.be32($0.0) + ICCProfileBuilder.be32($0.1) })
        return box("mdia", box("hdlr", [0, 0, 0, 0] + ICCProfileBuilder.be32(0) + Array(handler.utf8) + [UInt8](repeating: 0, count: 13))
            + mdhd + box("minf", box("stbl", stts)))
    }

    static func trak(duration: UInt64 = 300, edit: [UInt8]?, handler: String = "pict", auxiliary: Bool = false) -> [UInt8] {
        box("trak", tkhd(duration: duration) + (auxiliary ? box("tref", box("auxl", ICCProfileBuilder.be32(1))) : [])
            + (edit ?? []) + mdia(handler))
    }

    static func file(_ traks: [UInt8]...) -> [UInt8] {
        box("ftyp", Array("avis".utf8) + [0, 0, 0, 0] + Array("avismsf1".utf8)) + box("moov", traks.flatMap { $0 })
            + box("mdat", [1, 2, 3])
    }

    static func loopCount(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { AVIFColourTrack.find(in: $0)?.plays ?? 0 }
    }

    static func durations(_ bytes: [UInt8], frames: Int) -> [Double]? {
        bytes.withUnsafeBytes { AVIFColourTrack.find(in: $0)?.durations(frameCount: frames) }
    }

    @Test func rules() {
        // No edit list: unknown, played forever (Chromium's reading of libavif's "unknown").
        #expect(Self.loopCount(Self.file(Self.trak(edit: nil))) == 0)
        // Not repeating: once.
        #expect(Self.loopCount(Self.file(Self.trak(edit: Self.elst(repeats: false, segment: 100)))) == 1)
        // Repeating: the segment fills the track's duration, a partial last play counting.
        #expect(Self.loopCount(Self.file(Self.trak(duration: 300, edit: Self.elst(repeats: true, segment: 100)))) == 3)
        #expect(Self.loopCount(Self.file(Self.trak(duration: 301, edit: Self.elst(repeats: true, segment: 100)))) == 4)
        #expect(Self.loopCount(Self.file(Self.trak(duration: 100, edit: Self.elst(repeats: true, segment: 100)))) == 1)
        #expect(Self.loopCount(Self.file(Self.trak(duration: 50, edit: Self.elst(repeats: true, segment: 100)))) == 1)
        // Indefinite track duration, zero segment, more plays than an Int32: forever.
        #expect(Self.loopCount(Self.file(Self.trak(duration: .max, edit: Self.elst(repeats: true, segment: 100)))) == 0)
        #expect(Self.loopCount(Self.file(Self.trak(duration: 300, edit: Self.elst(repeats: true, segment: 0)))) == 0)
        #expect(Self.loopCount(Self.file(Self.trak(duration: 1 << 40, edit: Self.elst(repeats: true, segment: 1)))) == 0)
        // Version 0 edit list (32-bit segment).
        #expect(Self.loopCount(Self.file(Self.trak(duration: 200, edit: Self.elst(repeats: true, segment: 100, version: 0)))) == 2)
    }

    @Test func theColourTrackIsRead() {
        // An audio track and an alpha (auxiliary) track before the colour track are skipped.
        let audio = Self.trak(edit: Self.elst(repeats: false, segment: 100), handler: "soun")
        let alpha = Self.trak(duration: 900, edit: Self.elst(repeats: true, segment: 100), auxiliary: true)
        let colour = Self.trak(duration: 500, edit: Self.elst(repeats: true, segment: 100))
        #expect(Self.loopCount(Self.file(audio, alpha, colour)) == 5)
        // No picture track at all: unknown.
        #expect(Self.loopCount(Self.file(audio)) == 0)
    }

    @Test func malformedBoxesGiveTheUnknownAnswer() {
        let good = Self.file(Self.trak(duration: 300, edit: Self.elst(repeats: true, segment: 100)))
        #expect(Self.loopCount(good) == 3)
        // Every truncation and a zero entry count: never a trap, and 0 (unknown) unless the edit list is whole.
        for length in 0..<good.count {
            let count = Self.loopCount(Array(good.prefix(length)))
            #expect(count == 0 || count == 3, "cut at \(length)")
        }
        #expect(Self.loopCount(Self.file(Self.trak(edit: Self.elst(repeats: true, segment: 100, entries: 0)))) == 0)
        // A box claiming more bytes than there are, or fewer than its header.
        var lying = good
        lying.replaceSubrange(0..<4, with: ICCProfileBuilder.be32(UInt32.max))
        #expect(Self.loopCount(lying) == 0)
        var tiny = good
        let moov = 24  // after the ftyp box
        tiny.replaceSubrange(moov..<moov + 4, with: ICCProfileBuilder.be32(4))
        #expect(Self.loopCount(tiny) == 0)
    }

    @Test func durationsFromTheTimeToSampleTable() {
        let track = Self.box("trak", Self.tkhd(duration: 300) + Self.mdia("pict", timescale: 100, timeToSample: [(2, 4), (1, 50), (3, 1)]))
        // Frames past the table take its last entry's duration, as libavif's timing does; a shorter count stops early.
        #expect(Self.durations(Self.file(track), frames: 8) == [0.04, 0.04, 0.5, 0.01, 0.01, 0.01, 0.01, 0.01])
        #expect(Self.durations(Self.file(track), frames: 2) == [0.04, 0.04])
        // No timescale or no table: unknown (the coder applies the unknown-duration rule).
        let untimed = Self.box("trak", Self.tkhd(duration: 300) + Self.mdia("pict", timescale: 0))
        #expect(Self.durations(Self.file(untimed), frames: 3) == nil)
        let empty = Self.box("trak", Self.tkhd(duration: 300) + Self.mdia("pict", timeToSample: []))
        #expect(Self.durations(Self.file(empty), frames: 3) == nil)
        // An entry count larger than the box holds: only the entries there are read.
        var lying = Self.file(track)
        guard let stts = lying.firstRange(of: Array("stts".utf8)) else { Issue.record("no stts"); return }
        lying.replaceSubrange(stts.upperBound + 4..<stts.upperBound + 8, with: ICCProfileBuilder.be32(UInt32.max))
        #expect(Self.durations(lying, frames: 4) == [0.04, 0.04, 0.5, 0.01])
    }
}
