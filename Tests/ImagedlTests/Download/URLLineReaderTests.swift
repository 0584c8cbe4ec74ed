import Foundation
import Testing
@testable import ImagedlCore
#if canImport(Glibc)
import Glibc
#endif

/// `--input`'s line reader: comments, blank lines, CRLF, a BOM, no final newline, invalid and over-long lines,
/// lines split across reads, and reading lazily from a pipe.
@Suite struct URLLineReaderTests {
    /// A reader over `text` through a pipe, read `chunkSize` bytes at a time (small: lines cross reads).
    private static func lines(_ text: String, chunkSize: Int = 5) throws -> [URLLineReader.Line] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("urls-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fd = open(file.path, O_RDONLY)
        #expect(fd >= 0)
        let reader = URLLineReader(fileDescriptor: fd, ownsDescriptor: true, chunkSize: chunkSize)
        var result: [URLLineReader.Line] = []
        for _ in 0..<10_000 {  // bounded
            guard let line = try reader.next() else { break }
            result.append(line)
        }
        return result
    }

    private static func url(_ text: String, _ number: Int) -> URLLineReader.Line {
        .url(URL(string: text)!, number: number)
    }

    @Test func skipsCommentsAndBlankLinesAndKeepsLineNumbers() throws {
        let text = "\u{FEFF}# images\nhttp://a.test/1.png\n\n   \n  # indented comment\r\n\thttps://b.test/2.gif  \r\nhttp://c.test/3.jpg"
        for chunk in [1, 3, 7, 64 * 1024] {
            #expect(try Self.lines(text, chunkSize: chunk) == [
                Self.url("http://a.test/1.png", 2), Self.url("https://b.test/2.gif", 6), Self.url("http://c.test/3.jpg", 7),
            ], "chunk \(chunk)")
        }
    }

    @Test func aBOMOnTheFirstLineIsNotPartOfTheURL() throws {
        #expect(try Self.lines("\u{FEFF}http://a.test/x.png\n") == [Self.url("http://a.test/x.png", 1)])
    }

    @Test func invalidLinesAreReportedWithTheirNumber() throws {
        let text = "ftp://a.test/x\nnot a url\nhttp://ok.test/a.png\nhttp:///nohost\n" + String(repeating: "x", count: 200) + "\n"
        let lines = try Self.lines(text)
        #expect(lines.count == 5)
        #expect(lines[0] == .invalid("ftp://a.test/x", number: 1))
        #expect(lines[1] == .invalid("not a url", number: 2))
        #expect(lines[2] == Self.url("http://ok.test/a.png", 3))
        #expect(lines[3] == .invalid("http:///nohost", number: 4))
        if case .invalid(let shown, 5) = lines[4] { #expect(shown.count == 81 && shown.hasSuffix("…")) } else { Issue.record("\(lines[4])") }
    }

    @Test func anOverlongLineIsSkippedWithoutBufferingIt() throws {
        let limit = URLLineReader.maximumLineLength
        let long = "http://a.test/" + String(repeating: "a", count: limit + 10)
        let exact = "http://a.test/" + String(repeating: "b", count: limit - 14)  // exactly the limit: kept
        let lines = try Self.lines("http://a.test/1.png\n\(long)\n\(exact)\nhttp://a.test/2.png\n\(long)", chunkSize: 4096)
        // Short descriptions, so that a failure does not print 64 KB lines.
        let shown = lines.map { line -> String in
            switch line {
            case .url(let url, let number): return "\(number): url of \(url.absoluteString.count)"
            case .invalid(let text, let number): return "\(number): \(text)"
            }
        }
        #expect(shown == [
            "1: url of 19", "2: a line of more than \(limit) bytes", "3: url of \(limit)", "4: url of 19",
            "5: a line of more than \(limit) bytes",
        ])
    }

    @Test func emptyInputsHaveNoLines() throws {
        #expect(try Self.lines("").isEmpty)
        #expect(try Self.lines("\n\n# only comments\n").isEmpty)
    }

    @Test func readsAPipeLazilyLineByLine() throws {
        let pipe = Pipe()
        let reader = URLLineReader(fileDescriptor: pipe.fileHandleForReading.fileDescriptor, ownsDescriptor: false)
        pipe.fileHandleForWriting.write(Data("http://a.test/1.png\nhttp://a.te".utf8))
        // The first line is available although the input is still open (a whole-file read would block here).
        #expect(try reader.next() == Self.url("http://a.test/1.png", 1))
        pipe.fileHandleForWriting.write(Data("st/2.png\n".utf8))
        #expect(try reader.next() == Self.url("http://a.test/2.png", 2))
        try pipe.fileHandleForWriting.close()
        #expect(try reader.next() == nil)
    }

    @Test func aFolderOrAMissingFileIsAClearError() {
        #expect(throws: URLLineReader.ReadError.self) { try URLLineReader(path: FileManager.default.temporaryDirectory.path) }
        do {
            _ = try URLLineReader(path: "/nonexistent/urls.txt")
            Issue.record("no error for a missing file")
        } catch {
            #expect(error.description.contains("/nonexistent/urls.txt"))
        }
    }
}
