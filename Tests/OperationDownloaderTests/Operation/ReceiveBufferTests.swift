import Foundation
import Testing
@testable import OperationDownloader

/// The attempt's body buffer: the bytes come out as they went in, whether the body stays in `Data` or moves to
/// a mapping of its own, and a view taken earlier keeps its bytes while the buffer grows.
@Suite struct ReceiveBufferTests {
    /// Deterministic bytes: byte i is a hash of i, so a misplaced chunk shows.
    private func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 2_654_435_761 >> 13) }
    }

    private func fill(_ buffer: inout ReceiveBuffer, with bytes: [UInt8], chunk: Int) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            bytes[offset..<end].withUnsafeBytes { buffer.append($0) }
            offset = end
        }
    }

    @Test(arguments: [
        (reserved: 0, size: 1_000),  // small, no Content-Length
        (reserved: 1_000, size: 1_000),  // small, announced
        (reserved: 0, size: 3_000_000),  // no Content-Length: Data, then a mapping that doubles
        (reserved: 2_560_277, size: 2_560_277),  // the benchmark's 12 MP JPEG, announced exactly
        (reserved: 300_000, size: 1_200_000),  // a Content-Length that undercounts: the mapping grows
        (reserved: 8_000_000, size: 400_000),  // one that overcounts: untouched pages, right count
        (reserved: 100_000, size: 700_000),  // announced small, arrives large: Data moves to a mapping
    ])
    func bytesComeOutAsTheyWentIn(reserved: Int, size: Int) {
        let bytes = pattern(size)
        var buffer = ReceiveBuffer()
        buffer.reserve(reserved)
        #expect(buffer.isEmpty)
        fill(&buffer, with: bytes, chunk: 16_384)
        #expect(buffer.count == size)
        #expect(buffer.data == Data(bytes))
    }

    @Test func viewsTakenEarlierKeepTheirBytesWhileTheBufferGrows() {
        let bytes = pattern(2_000_000, seed: 7)
        var buffer = ReceiveBuffer()
        buffer.reserve(300_000)
        var views: [(Data, Int)] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + 65_536)
            bytes[offset..<end].withUnsafeBytes { buffer.append($0) }
            offset = end
            views.append((buffer.data, end))  // progressive decoding takes such snapshots
        }
        for (view, end) in views {
            #expect(view == Data(bytes[0..<end]))
        }
    }

    @Test func aViewOutlivesTheBuffer() {
        let bytes = pattern(1_000_000, seed: 3)
        var view = Data()
        do {
            var buffer = ReceiveBuffer()
            buffer.reserve(bytes.count)
            fill(&buffer, with: bytes, chunk: 10_000)
            view = buffer.data
        }
        #expect(view == Data(bytes))
        // A caller may mutate its copy: Data copies before writing, the bytes it was given stay intact.
        var edited = view
        edited[0] ^= 0xFF
        edited.append(1)
        #expect(view == Data(bytes))
        #expect(edited.count == bytes.count + 1 && edited[0] == bytes[0] ^ 0xFF)
    }

    @Test func aRestartedBodyStartsEmpty() {
        var buffer = ReceiveBuffer()
        buffer.reserve(1_000_000)
        fill(&buffer, with: pattern(500_000), chunk: 50_000)
        buffer = ReceiveBuffer()  // what a second response (an authentication retry) does
        #expect(buffer.isEmpty && buffer.data.isEmpty)
    }
}
