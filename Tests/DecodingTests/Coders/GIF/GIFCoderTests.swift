import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// GIF against the corpus (Pillow's per-frame hashes) and against the browser rules where Pillow differs.
@Suite(.serialized, .offThePool) struct GIFCoderTests {
    /// Frames where the corpus reference (Pillow) and browsers disagree; each is checked by its own test below.
    /// - dispose_bgnd.gif frames 2...4: the previous frame used disposal 2 and has no transparent index.
    ///   Pillow fills its rectangle with the opaque background colour, browsers (and we) clear it to transparent.
    /// - test_extents*.gif frame 1: the second frame reaches outside the 100x100 screen; Pillow grows the canvas
    ///   to 150x150, browsers (and we) keep the screen size and clip the frame.
    static let browserRuleFrames: [String: Set<Int>] = [
        "pillow/dispose_bgnd.gif": [2, 3, 4],
        "pillow/test_extents.gif": [1],
        "pillow/test_extents_transparency.gif": [1],
    ]

    static func decode(_ data: Data, _ options: ImageDecodingOptions = .init()) throws -> DecodedImage {
        try GIFCoder().decode(data, options: options)
    }

    static func isRejected(_ entry: Corpus.Entry) -> Bool {
        entry.expected.hasPrefix("reject") || entry.expected == "error"
    }

    @Test(.requires(.corpus))
    func everyCorpusGIFGetsItsDocumentedOutcome() throws {
        let files = Corpus.files(format: "gif")
        #expect(files.count == 30)
        var matchedFrames = 0
        for file in files {
            guard let entry = Corpus.expected[file] else { continue }
            let data = try Corpus.data(file)
            if Self.isRejected(entry) {
                #expect(throws: ImageDecodingError.self, "\(file)") { try Self.decode(data) }
                continue
            }
            let image = try Self.decode(data)
            #expect(image.format == .gif)
            #expect(image.width == entry.width && image.height == entry.height, "\(file)")
            #expect(!image.isIncomplete, "\(file)")
            #expect(SHA256.hex(image.pixels) == entry.sha256_rgba, "\(file) first frame")
            // loop: the NETSCAPE2.0 value as Pillow reports it; no NETSCAPE block means one play.
            #expect(image.loopCount == (entry.loop ?? 1), "\(file) loop")
            let frames = try image.animationFrames()
            guard let expectedFrames = entry.frames_rgba, expectedFrames.count > 1 else {
                #expect(frames.isEmpty && image.frameCount == 1, "\(file) is a still image")
                continue
            }
            try #require(frames.count == expectedFrames.count && image.frameCount == expectedFrames.count, "\(file) frame count")
            let skip = Self.browserRuleFrames[file] ?? []
            for (i, (frame, reference)) in zip(frames, expectedFrames).enumerated() {
                let ms = reference.duration_ms ?? 0
                #expect(frame.duration == (ms < 20 ? 0.1 : ms / 1000), "\(file) frame \(i) duration")
                guard !skip.contains(i) else { continue }
                #expect(SHA256.hex(frame.pixels) == reference.sha256, "\(file) frame \(i)")
                matchedFrames += 1
            }
        }
        #expect(matchedFrames == 128)
    }

    @Test(.requires(.corpus))
    func bombsAreRejectedByTheirHeaders() throws {
        // A 65535x65535 screen, and frames whose extent (offset + size) is gigapixels on a small screen.
        #expect(throws: ImageDecodingError.tooLarge(width: 65535, height: 65535)) {
            try Self.decode(try Corpus.data("generated/gif_huge_screen.gif"))
        }
        #expect(throws: ImageDecodingError.tooLarge(width: 65535, height: 66601)) {
            try Self.decode(try Corpus.data("pillow/decompression_bomb.gif"))
        }
        #expect(throws: ImageDecodingError.tooLarge(width: 65635, height: 65635)) {
            try Self.decode(try Corpus.data("pillow/decompression_bomb_extents.gif"))
        }
        #expect(throws: ImageDecodingError.zeroPixels) { try Self.decode(try Corpus.data("pillow/zero_width.gif")) }
    }

    /// Browser rule: disposal 2 clears to transparent. Pillow paints the background colour instead: background
    /// index 0 looked up in the local palette of the disposed frame (opaque black for frames 1...3 here).
    /// Painting our cleared pixels with that colour must give exactly Pillow's frames.
    @Test(.requires(.corpus))
    func disposeToBackgroundClearsToTransparent() throws {
        let file = "pillow/dispose_bgnd.gif"
        let data = try Corpus.data(file)
        let frames = try Self.decode(data).animationFrames()
        let reference = try #require(Corpus.expected[file]?.frames_rgba)
        let localPaletteStarts = GIFBuilder.localPaletteOffsets(data)
        try #require(localPaletteStarts.count == 5 && frames.count == 5)
        // A hole keeps the colour Pillow painted when it was made: Pillow's previous frame where it persists.
        var pillowPrevious = frames[1].pixels
        for i in [2, 3, 4] {
            let p0 = localPaletteStarts[i - 1]
            let background: [UInt8] = [data[p0], data[p0 + 1], data[p0 + 2], 255]
            let ours = frames[i].pixels, previous = frames[i - 1].pixels
            var cleared = 0
            var painted = ours
            for p in stride(from: 0, to: ours.count, by: 4) where ours[p + 3] == 0 {
                #expect(Array(ours[p..<p + 4]) == [0, 0, 0, 0])
                let colour = previous[p + 3] == 0 ? Array(pillowPrevious[p..<p + 4]) : background
                painted.replaceSubrange(p..<p + 4, with: colour)
                cleared += 1
            }
            #expect(cleared > 0, "frame \(i) shows a transparent hole where frame \(i - 1) was")
            #expect(SHA256.hex(ours) != reference[i].sha256)
            #expect(SHA256.hex(painted) == reference[i].sha256, "frame \(i) equals Pillow's once the holes are painted")
            pillowPrevious = painted
        }
        // The hole is exactly frame 1's rectangle (5,10 32x32) minus what frame 2 (35,30 32x32) covers.
        let frame2 = frames[2].pixels
        func alpha(_ x: Int, _ y: Int) -> UInt8 { frame2[(y * 100 + x) * 4 + 3] }
        #expect(alpha(5, 10) == 0 && alpha(34, 29) == 0 && alpha(34, 41) == 0)
        #expect(alpha(4, 10) == 255 && alpha(5, 9) == 255 && alpha(35, 30) == 255)
    }

    /// Browser rule: frames are clipped to the logical screen. Both frames of these files carry the same
    /// 100x100 picture, the second one at (50,50): our second canvas is the first with its top-left quarter
    /// drawn over the bottom-right quarter (transparent pixels leaving the first frame visible).
    @Test(.requires(.corpus), arguments: ["pillow/test_extents.gif", "pillow/test_extents_transparency.gif"])
    func framesOutsideTheScreenAreClipped(file: String) throws {
        let image = try Self.decode(try Corpus.data(file))
        let frames = try image.animationFrames()
        try #require(image.width == 100 && image.height == 100 && frames.count == 2)
        let first = frames[0].pixels
        var expected = first
        for y in 50..<100 {
            for x in 50..<100 {
                let src = ((y - 50) * 100 + (x - 50)) * 4
                if first[src + 3] != 0 {
                    expected.replaceSubrange((y * 100 + x) * 4..<(y * 100 + x) * 4 + 4, with: first[src..<src + 4])
                }
            }
        }
        #expect(frames[1].pixels == expected)
    }

    @Test(.requires(.corpus))
    func firstFrameOnly() throws {
        let image = try Self.decode(try Corpus.data("pillow/chi.gif"), .init(decodeFirstFrameOnly: true))
        #expect((try image.animationFrames()).isEmpty)
        #expect(SHA256.hex(image.pixels) == Corpus.expected["pillow/chi.gif"]?.sha256_rgba)
        #expect(image.loopCount == 0)
    }

    // MARK: - Incremental

    static func decodeInChunks(_ data: Data, seed: UInt64, options: ImageDecodingOptions = .init()) throws -> DecodedImage? {
        var random = SeededRandom(seed: seed)
        let decoder = GIFCoder().makeIncrementalDecoder(options: options)
        var offset = 0
        while offset < data.count {
            let size = random.chunkSize()
            let end = min(data.count, offset + size)
            try decoder.append(data.subdata(in: offset..<end), isFinal: end == data.count)
            if random.next() % 4 == 0 { _ = decoder.currentImage() }
            offset = end
        }
        return decoder.currentImage()
    }

    @Test(.requires(.corpus))
    func randomChunkingGivesTheOneShotResult() throws {
        for file in Corpus.files(format: "gif") {
            let data = try Corpus.data(file)
            for seed in 1...3 {
                let chunkSeed = UInt64(seed) &* 0x9E37_79B9 &+ UInt64(data.count)
                switch (Result { try Self.decode(data) }, Result { try Self.decodeInChunks(data, seed: chunkSeed) }) {
                case (.success(let whole), .success(let chunked)):
                    #expect(chunked == whole, "\(file) seed \(seed)")
                case (.failure(let a), .failure(let b)):
                    #expect(String(describing: a) == String(describing: b), "\(file)")
                default:
                    Issue.record("\(file): one-shot and incremental disagree on success")
                }
            }
        }
    }

    @Test(.requires(.corpus))
    func managerChoosesTheIncrementalGIFDecoder() throws {
        let data = try Corpus.data("sdwebimage/TestImage.gif")
        let manager = ImageCodersManager.shared
        let decoder = try #require(manager.incrementalDecoder(for: data.prefix(16), options: .init()))
        try decoder.append(data, isFinal: true)
        #expect(decoder.currentImage() == (try manager.decode(data)))
    }

    @Test(.requires(.corpus))
    func partialFirstFrameShowsRowsAsTheyArrive() throws {
        let data = try Corpus.data("pillow/hopper.gif")  // 128x128, not interlaced
        let full = try Self.decode(data)
        let decoder = GIFCoder().makeIncrementalDecoder(options: .init())
        try decoder.append(data.prefix(13 + 768), isFinal: false)
        #expect(decoder.currentImage() == nil, "header and palette only: nothing to show")
        try decoder.append(data.subdata(in: (13 + 768)..<(data.count / 2)), isFinal: false)
        let partial = try #require(decoder.currentImage())
        #expect(partial.isIncomplete && partial.width == 128 && partial.animation == nil)
        let rowBytes = 128 * 4
        #expect(partial.pixels.prefix(rowBytes * 20) == full.pixels.prefix(rowBytes * 20), "top rows are final")
        #expect(partial.pixels.suffix(rowBytes).allSatisfy { $0 == 0 }, "bottom row not there yet")
        try decoder.append(data.subdata(in: (data.count / 2)..<data.count), isFinal: true)
        #expect(decoder.currentImage() == full)
    }

    @Test(.requires(.corpus))
    func firstFrameIsReadyBeforeTheAnimationEnds() throws {
        let data = try Corpus.data("pillow/iss634.gif")
        let full = try Self.decode(data)
        let decoder = GIFCoder().makeIncrementalDecoder(options: .init())
        try decoder.append(data.prefix(data.count / 2), isFinal: false)
        let partial = try #require(decoder.currentImage())
        #expect(partial.isIncomplete)
        #expect(partial.pixels == full.pixels)
        // While bytes arrive only the poster is shown; the animation exists once the data is complete.
        #expect(partial.animation == nil && full.frameCount == 42)
        try decoder.append(data.suffix(from: data.count / 2), isFinal: true)
        #expect(decoder.currentImage() == full)
    }

    // MARK: - Truncated and hostile

    @Test(.requires(.corpus))
    func truncatedAnimationKeepsTheFramesDecodedSoFar() throws {
        let data = try Corpus.data("pillow/chi.gif")
        let full = try Self.decode(data)
        let cut = try Self.decode(data.prefix(data.count / 2))
        #expect(cut.isIncomplete)
        let cutFrames = try cut.animationFrames(), fullFrames = try full.animationFrames()
        #expect(cutFrames.count > 1 && cutFrames.count < 31)
        #expect(cutFrames.dropLast() == fullFrames.prefix(cutFrames.count - 1))
        #expect(throws: ImageDecodingError.truncated) { try Self.decode(data.prefix(10)) }
        #expect(throws: ImageDecodingError.truncated) { try Self.decode(data.prefix(13 + 768 + 20)) }
    }

    @Test func signatureAndLZWErrorsAreTyped() throws {
        #expect(throws: ImageDecodingError.corrupt("not a GIF signature")) {
            try Self.decode(Data("GIF88a".utf8 + [1, 0, 1, 0, 0, 0, 0]))
        }
        // 1x1 frame whose first code (7 with 3-bit codes, minimum code size 2) is not in the table.
        let badCode = GIFBuilder.gif(width: 1, height: 1, minCodeSize: 2, data: [0x07])
        #expect(throws: ImageDecodingError.corrupt("GIF image data has an invalid LZW code or code size")) {
            try Self.decode(badCode)
        }
        let badCodeSize = GIFBuilder.gif(width: 1, height: 1, minCodeSize: 12, data: [0x00])
        #expect(throws: ImageDecodingError.self) { try Self.decode(badCodeSize) }
    }

    /// A 12-bit table that fills up and is never cleared ("deferred clear"), KwKwK codes and every code-size
    /// step, from an independent encoder.
    @Test func fullTableWithoutClearCodeDecodes() throws {
        var random = SeededRandom(seed: 7)
        let width = 200, height = 150
        let indices = (0..<(width * height)).map { i in UInt8((i / 7 + Int(random.next() % 3)) % 4) }
        let lzw = GIFBuilder.lzwEncode(indices, minCodeSize: 2)
        let data = GIFBuilder.gif(width: width, height: height, minCodeSize: 2, data: lzw)
        let image = try Self.decode(data)
        let gray: [UInt8] = indices.flatMap { v -> [UInt8] in [v, v, v, 255] }  // no palette: indices read as gray levels
        #expect(image.pixels == gray)
        #expect(try Self.decodeInChunks(data, seed: 3) == image)
    }

    /// Found by fuzzing: a frame right of the screen has rows inside it but no columns; disposing it
    /// (2 = clear, 3 = restore) must touch nothing.
    @Test func framesRightOfTheScreenDisposeNothing() throws {
        for disposal: UInt8 in [2, 3] {
            let first = [UInt8](GIFBuilder.gif(width: 4, height: 2, minCodeSize: 2,
                                               data: GIFBuilder.lzwEncode([UInt8](repeating: 1, count: 8), minCodeSize: 2)))
            let body = Array(first.dropLast())  // without the trailer
            let control: [UInt8] = [0x21, 0xF9, 4, disposal << 2, 0, 0, 0, 0]
            let outside: [UInt8] = [0x2C, 9, 0, 0, 0, 2, 0, 2, 0, 0, 2] + GIFBuilder.subBlocks(
                GIFBuilder.lzwEncode([2, 2, 2, 2], minCodeSize: 2)) + [0]
            let data = Data(body + control + outside + control + outside + [0x3B])
            let image = try Self.decode(data)
            #expect((try image.animationFrames()).count == 3)
            #expect((try image.animationFrames()).allSatisfy { $0.pixels == image.pixels }, "disposal \(disposal)")
        }
    }

    @Test func interlacedRowsLandInPlace() throws {
        let width = 3, height = 11
        let rows = (0..<height).map { y in [UInt8](repeating: UInt8(y), count: width) }
        let order = [0, 8, 4, 2, 6, 10, 1, 3, 5, 7, 9]  // passes: every 8th from 0, from 4, every 4th from 2, odd rows
        let stream: [UInt8] = order.flatMap { rows[$0] }
        let data = GIFBuilder.gif(width: width, height: height, minCodeSize: 4,
                                  data: GIFBuilder.lzwEncode(stream, minCodeSize: 4), interlaced: true)
        let image = try Self.decode(data)
        let expected: [UInt8] = rows.joined().flatMap { v -> [UInt8] in [v, v, v, 255] }
        #expect(image.pixels == expected)
    }
}

/// Builds small GIFs for tests: one frame, no palette unless given.
enum GIFBuilder {
    /// Byte offset of each frame's local palette (or of its descriptor when it has none), for well-formed files.
    static func localPaletteOffsets(_ data: Data) -> [Int] {
        let b = [UInt8](data)
        var offsets: [Int] = []
        var p = 13 + (b[10] & 0x80 != 0 ? 3 * (2 << Int(b[10] & 7)) : 0)
        func skipSubBlocks() { while p < b.count && b[p] != 0 { p += Int(b[p]) + 1 }; p += 1 }
        while p < b.count {
            switch b[p] {
            case 0x21:
                p += 2
                skipSubBlocks()
            case 0x2C:
                let flags = b[p + 9]
                p += 10
                offsets.append(p)
                if flags & 0x80 != 0 { p += 3 * (2 << Int(flags & 7)) }
                p += 1
                skipSubBlocks()
            default:
                return offsets
            }
        }
        return offsets
    }

    static func gif(width: Int, height: Int, minCodeSize: Int, data: [UInt8], interlaced: Bool = false) -> Data {
        var out = Array("GIF89a".utf8)
        out += [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 0, 0, 0]
        out += [0x2C, 0, 0, 0, 0, UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
        out += [interlaced ? 0x40 : 0, UInt8(minCodeSize)]
        out += subBlocks(data)
        out += [0, 0x3B]
        return Data(out)
    }

    /// `data` cut into sub-blocks of at most 255 bytes, each prefixed with its length (no terminator).
    static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < data.count {
            let n = min(255, data.count - offset)
            out.append(UInt8(n))
            out += data[offset..<offset + n]
            offset += n
        }
        return out
    }

    /// A plain LZW encoder (clear code first, end code last) that stops adding codes at 4096 without clearing.
    static func lzwEncode(_ indices: [UInt8], minCodeSize: Int) -> [UInt8] {
        let clear = 1 << minCodeSize
        var codeSize = minCodeSize + 1
        var next = clear + 2
        var table: [Int: Int] = [:]
        var out: [UInt8] = []
        var bits = 0, bitCount = 0
        func emit(_ code: Int) {
            bits |= code << bitCount
            bitCount += codeSize
            while bitCount >= 8 {
                out.append(UInt8(bits & 0xFF))
                bits >>= 8
                bitCount -= 8
            }
        }
        emit(clear)
        guard var current = indices.first.map(Int.init) else { return out }
        for value in indices.dropFirst() {
            let key = current << 8 | Int(value)
            if let code = table[key] {
                current = code
                continue
            }
            emit(current)
            if next < 4096 {
                table[key] = next
                next += 1
                if next > (1 << codeSize) && codeSize < 12 { codeSize += 1 }
            }
            current = Int(value)
        }
        emit(current)
        emit(clear + 1)
        if bitCount > 0 { out.append(UInt8(bits & 0xFF)) }
        return out
    }
}
