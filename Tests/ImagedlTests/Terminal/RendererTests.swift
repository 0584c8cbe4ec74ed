import Decoding
import Foundation
import Testing
@testable import ImagedlCore

@Suite struct HalfBlockRendererTests {
    private let esc = "\u{1B}["

    @Test func twoByTwoImageIsOneLineOfTwoCells() {
        // Row 0: red, green. Row 1: blue, white. All opaque.
        let pixels: [UInt8] = [255, 0, 0, 255, 0, 255, 0, 255,
                               0, 0, 255, 255, 255, 255, 255, 255]
        let image = DecodedImage(width: 2, height: 2, pixels: pixels, format: .png)
        let lines = HalfBlockRenderer.render(image, maxColumns: 10, maxRows: 10)
        #expect(lines == ["\(esc)38;2;255;0;0m\(esc)48;2;0;0;255m▀\(esc)38;2;0;255;0m\(esc)48;2;255;255;255m▀\(esc)0m"])
    }

    @Test func repeatedColoursAreNotRepeatedAndOddHeightKeepsTerminalBackground() {
        // 2x3 all black: the first line sets colours once; the last line has only a top pixel.
        let image = DecodedImage(width: 2, height: 3, pixels: [UInt8](repeating: 0, count: 24).enumerated().map { $0.offset % 4 == 3 ? 255 : 0 },
                                 format: .png)
        let lines = HalfBlockRenderer.render(image, maxColumns: 10, maxRows: 10)
        #expect(lines.count == 2)
        #expect(lines[0] == "\(esc)38;2;0;0;0m\(esc)48;2;0;0;0m▀▀\(esc)0m")
        #expect(lines[1] == "\(esc)38;2;0;0;0m\(esc)49m▀▀\(esc)0m")
    }

    @Test func transparentPixelsShowTheCheckerboard() {
        let image = DecodedImage(width: 1, height: 2, pixels: [255, 0, 0, 0, 255, 0, 0, 128], format: .png)
        let lines = HalfBlockRenderer.render(image, maxColumns: 4, maxRows: 4)
        // Fully transparent: the checker grey 0x66. Half transparent red over 0x66: (255*128 + 102*127 + 127) / 255.
        let r = (255 * 128 + 102 * 127 + 127) / 255, g = (102 * 127 + 127) / 255
        #expect(lines == ["\(esc)38;2;102;102;102m\(esc)48;2;\(r);\(g);\(g)m▀\(esc)0m"])
    }

    @Test func orientationIsAppliedForDisplay() {
        // Stored 2x1: red, blue. Orientation 6 (rotate 90° clockwise) shows 1x2: red on top, blue below.
        let image = DecodedImage(width: 2, height: 1, pixels: [255, 0, 0, 255, 0, 0, 255, 255], format: .jpeg, orientation: .right)
        let lines = HalfBlockRenderer.render(image, maxColumns: 4, maxRows: 4)
        #expect(lines == ["\(esc)38;2;255;0;0m\(esc)48;2;0;0;255m▀\(esc)0m"])
        // Orientation 8 (rotate 90° counter-clockwise): blue on top.
        var left = image
        left.orientation = .left
        #expect(HalfBlockRenderer.render(left, maxColumns: 4, maxRows: 4)
            == ["\(esc)38;2;0;0;255m\(esc)48;2;255;0;0m▀\(esc)0m"])
    }

    @Test func largeImagesShrinkToTheBoxKeepingAspect() {
        let image = DecodedImage(width: 640, height: 480, pixels: [UInt8](repeating: 200, count: 640 * 480 * 4), format: .jpeg)
        let lines = HalfBlockRenderer.render(image, maxColumns: 40, maxRows: 40)
        #expect(lines.count == 15)  // 40 columns wide, 30 pixel rows, two per line
        #expect(lines.allSatisfy { $0.components(separatedBy: "▀").count - 1 == 40 })
        #expect(HalfBlockRenderer.render(image, maxColumns: 0, maxRows: 5).isEmpty)
    }
}

@Suite struct ProgressLineTests {
    @Test func runningLineShowsBarPercentBytesAndRate() {
        let line = ProgressLine.running(name: "photo.jpg", received: 34_000, expected: 68_000, elapsed: 2, columns: 100)
        #expect(line == "photo.jpg                     [████████████░░░░░░░░░░░░]   50%  34.0 KB / 68.0 KB  17.0 KB/s")
        #expect(line.count <= 99)
    }

    @Test func unknownLengthShowsNoPercentage() {
        let line = ProgressLine.running(name: "x.png", received: 1_500, expected: -1, elapsed: 0.5, columns: 80)
        #expect(line.hasSuffix("[░░░░░░░░░░░░░░░░░░░░░░░░]   --  1.5 KB  3.0 KB/s"))
    }

    @Test func linesNeverWrapOnNarrowTerminals() {
        for columns in [10, 20, 40, 60, 80, 120] {
            let line = ProgressLine.running(name: String(repeating: "n", count: 90), received: 1_234_567,
                                            expected: 9_876_543, elapsed: 3, columns: columns)
            #expect(line.count <= max(20, columns - 1), "columns \(columns): \(line)")
        }
    }

    @Test func finishedLines() throws {
        var record = DownloadRecord(index: 0, url: try #require(URL(string: "http://127.0.0.1/a/photo.png")))
        record.startedAt = 10
        record.finishedAt = 11.5
        record.state = .succeeded
        record.bytes = 91_000
        record.format = .png
        record.width = 240
        record.height = 180
        #expect(ProgressLine.finished(record, columns: 100)
            == "photo.png                     [████████████████████████]  100%  91.0 KB  1.50 s  png 240x180")
        record.state = .failed
        record.error = "HTTP status 404"
        #expect(ProgressLine.finished(record, columns: 100) == "photo.png  failed: HTTP status 404")
    }

    @Test func summaryTableHasAHeaderARowPerURLAndATotal() throws {
        var ok = DownloadRecord(index: 0, url: try #require(URL(string: "http://h.test/a.gif")))
        ok.state = .succeeded
        ok.format = .gif
        ok.width = 96
        ok.height = 64
        ok.frames = 12
        ok.bytes = 5_851
        ok.startedAt = 1
        ok.finishedAt = 1.25
        ok.cacheResult = .hit
        var bad = DownloadRecord(index: 1, url: try #require(URL(string: "http://h.test/missing.png")))
        bad.state = .failed
        bad.error = "HTTP status 404"
        let lines = SummaryTable.render([ok, bad], columns: 120)
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix("#  name         result  format  pixels"))
        #expect(lines[2].contains("a.gif") && lines[2].contains("96x64x12") && lines[2].contains("5.9 KB")
            && lines[2].contains("250.0 ms") && lines[2].contains("hit"))
        #expect(lines[3].contains("missing.png") && lines[3].contains("failed") && lines[3].hasSuffix("HTTP status 404"))
        #expect(lines[4] == "1 of 2 downloaded, 5.9 KB in all; cache: 0 memory, 1 HTTP hit, 0 stale, 0 revalidated")
    }
}
