import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// Each caller of a shared download gets what it would have got downloading alone, whoever joined first
/// (issue 40, item 3), on the scripted transport: callers with every mix of the per-caller settings join one
/// transfer in every order, and each final answer is compared with that caller's answer alone, for a good
/// image, an animation, a truncated file and an HTML page served as an image.
@Suite struct JoinOrderTests {
    /// One caller's per-caller settings (Docs/Options.md, "Per transfer or per caller"), named.
    struct Kind: Sendable, CustomStringConvertible {
        let description: String
        var options: ImageDownloaderOptions = []
        var context = ImageDownloaderContext()
    }

    static let kinds: [Kind] = [
        Kind(description: "decode"),
        Kind(description: "data only", options: .avoidDecodeImage),
        Kind(description: "first frame", options: .decodeFirstFrameOnly),
        Kind(description: "progressive", options: .progressiveLoad),
        Kind(description: "incomplete allowed", context: ImageDownloaderContext(allowsIncompleteImages: true)),
        Kind(description: "pixel limit 10000", context: ImageDownloaderContext(maximumPixelCount: 10_000)),
        Kind(description: "thumbnail 40x30", context: ImageDownloaderContext(thumbnailPixelSize: CGSize(width: 40, height: 30))),
        Kind(description: "size limit 10000", context: ImageDownloaderContext(maximumResponseSize: 10_000)),
    ]

    /// A body the test server sends, whole, with an honest length.
    struct Body {
        let contentType: String
        let bytes: Data
    }

    /// The bodies, as test arguments: plain values, loaded in the test. (Test arguments that hold `Data` outlive
    /// the run in swift-testing's storage, which LeakSanitizer reports.)
    enum BodyKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case png = "png 160x120"
        case animatedGIF = "animated gif"
        case truncatedJPEG = "truncated progressive jpeg"
        case html = "HTML page as image/jpeg"

        var testDescription: String { rawValue }

        var body: Body {
            switch self {
            case .png: return Body(contentType: "image/png", bytes: ScriptedHarness.fixture("image.png"))
            case .animatedGIF: return Body(contentType: "image/gif", bytes: ScriptedHarness.fixture("animated.gif"))
            case .truncatedJPEG:
                let jpeg = ScriptedHarness.fixture("progressive.jpg")
                return Body(contentType: "image/jpeg", bytes: jpeg.prefix(jpeg.count / 2))
            case .html:
                let page = "<!DOCTYPE html><html><head><title>404</title></head><body>Not Found</body></html>"
                return Body(contentType: "image/jpeg", bytes: Data(page.utf8))
            }
        }
    }

    /// Every ordered pair of kinds, and every order of each three kinds that include a data-only caller (the
    /// one whose presence changes what the transfer may skip).
    static let groups: [[Kind]] = {
        var groups: [[Kind]] = []
        for first in kinds {
            for second in kinds where second.description != first.description { groups.append([first, second]) }
        }
        let others = kinds.filter { $0.options != .avoidDecodeImage }
        let dataOnly = kinds[1]
        for i in others.indices {
            for j in others.indices where j > i {
                let three = [dataOnly, others[i], others[j]]
                for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
                    groups.append(order.map { three[$0] })
                }
            }
        }
        return groups
    }()

    /// What a caller's final answer amounts to, for comparison: the error, or the image's size, frames and
    /// completeness, and the data's length.
    private static func summary(_ recorder: AsyncRecorder) -> String {
        guard let final = recorder.final else { return "no answer" }
        if let error = final.error { return "error: \(error)" }
        let data = final.data.map { "\($0.count) bytes" } ?? "no data"
        guard let image = final.image else { return "no image, \(data)" }
        return "\(image.width)x\(image.height), \(image.frameCount) frames, incomplete \(image.isIncomplete), \(data)"
    }

    /// The callers of `kinds` join, in this order, before any byte arrives; then `body` is served on every
    /// transfer they made (one, unless a caller set a field of the coalescing key). Their answers, in order.
    private func answers(_ kinds: [Kind], _ body: Body) async throws -> [String] {
        let harness = ScriptedHarness { $0.httpCache = nil }
        let recorders = kinds.map { harness.download(options: $0.options, context: $0.context).0 }
        let transfers = harness.downloader.currentDownloadCount
        let separate = Set(kinds.map(\.context.maximumResponseSize)).count
        #expect(transfers == separate, "\(kinds): callers share a transfer unless their size limits differ")
        for index in 0..<transfers {
            let transfer = try #require(await harness.transport.transfer(index))
            transfer.respond(headers: ["Content-Type": body.contentType, "Content-Length": "\(body.bytes.count)"])
            transfer.send(body.bytes)
            transfer.complete()
        }
        var answers: [String] = []
        for recorder in recorders {
            await recorder.completion()
            answers.append(Self.summary(recorder))
        }
        return answers
    }

    @Test(arguments: BodyKind.allCases)
    func eachCallerGetsWhatItWouldAloneInEveryJoinOrder(_ kind: BodyKind) async throws {
        let body = kind.body
        var alone: [String: String] = [:]  // by kind
        for kind in Self.kinds { alone[kind.description] = try await answers([kind], body)[0] }
        var mismatches: [String] = []
        for group in Self.groups {
            let together = try await answers(group, body)
            for (kind, answer) in zip(group, together) where answer != alone[kind.description] {
                let before = group.prefix { $0.description != kind.description }
                mismatches.append("\(kind) after \(before): \(answer), alone: \(alone[kind.description] ?? "?")")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(Self.groups.count) groups differ: \(mismatches.prefix(5))")
    }

    /// The reported case, end to end on the seam: a decoding caller then a data-only caller on an HTML body.
    /// The data-only caller gets the bytes (as it does alone or first); the decoding caller gets `.notAnImage`.
    @Test func aDataOnlyCallerAfterADecodingCallerStillGetsAnHTMLBody() async throws {
        let html = BodyKind.html.body
        let answers = try await answers([Self.kinds[0], Self.kinds[1]], html)
        #expect(answers[0] == "error: \(ImageDownloaderError.badImageData(.notAnImage("an HTML page")))")
        #expect(answers[1] == "no image, \(html.bytes.count) bytes")
    }

    /// With decoding callers only, the HTML page still fails at the first bytes and the rest is never fetched.
    @Test func decodingCallersAloneStillFailAtTheFirstBytes() async throws {
        let harness = ScriptedHarness { $0.httpCache = nil }
        let recorders = [harness.download().0, harness.download(options: .decodeFirstFrameOnly).0]
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(headers: ["Content-Type": "image/jpeg"])
        transfer.send(BodyKind.html.body.bytes)
        for recorder in recorders { await recorder.completion() }
        #expect(transfer.cancelCount == 1, "the body is not read to its end")
        let expected = "\(ImageDownloaderError.badImageData(.notAnImage("an HTML page")))"
        #expect(recorders.allSatisfy { $0.error.map { "\($0)" } == expected })
    }
}
