import Decoding
import Foundation
import Testing
import TestRequirements
@testable import ImagedlCore

/// `imagedl decode` dumps sRGB unless `--keep-color-profile`, and its JSON says what colour management did.
@Suite(.serialized, .offThePool) struct DecodeColorProfileTests {
    static let fixture = TestFolders.support.appendingPathComponent("DecoderFixtures/color_displayp3.png").path

    private func run(_ arguments: [String]) throws -> (ExitCode, [String: Any], Data) {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("decode-color-\(UUID().uuidString).rgba")
        defer { try? FileManager.default.removeItem(at: out) }
        guard case .decode(let options) = try ArgumentParser.parse(["decode", "--json", "--rgba", out.path] + arguments) else {
            throw UsageError("not a decode command")
        }
        var lines: [String] = []
        let status = DecodeCommand(options: options, emit: { lines.append($0) }, emitError: { _ in }).run()
        let object = try #require(try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any])
        return (status, object, try Data(contentsOf: out))
    }

    @Test(.requires(.lcms2))
    func dumpsSRGBUnlessAskedToKeepTheProfile() throws {
        let (status, converted, pixels) = try run([Self.fixture])
        #expect(status == .success)
        #expect(converted["color"] as? String == "converted")
        #expect((converted["color_detail"] as? String)?.contains("Display P3") == true)
        let (_, kept, original) = try run(["--keep-color-profile", Self.fixture])
        #expect(kept["color"] as? String == "not converted")
        #expect((kept["icc_profile_bytes"] as? Int ?? 0) > 128)
        #expect(pixels != original && pixels.count == original.count)
        let reference = try PNGCoder().decode(try Data(contentsOf: URL(fileURLWithPath: Self.fixture)), options: ImageDecodingOptions())
        #expect([UInt8](original) == reference.pixels)
    }
}
