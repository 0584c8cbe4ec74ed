import Decoding
import Foundation

/// What every section needs: where the fixtures are, the server, the mode, and where to report.
struct RunContext {
    let fixtures: Fixtures
    /// "http://127.0.0.1:PORT" of the nginx serving `fixtures.www`.
    let baseURL: String
    /// nginx's access log, to count the requests the server saw.
    let accessLog: URL
    let quick: Bool
    let report: BenchmarkReport
    /// This executable, for the child-process sections.
    let executable: String

    /// Rounds per figure: at least 5 in a full run (min/median), 3 in `--quick`.
    var rounds: Int { quick ? 3 : 7 }

    func url(_ path: String) -> URL? { URL(string: "\(baseURL)/\(path)") }

    /// Whether a registered coder decodes JPEG (the JPEG coder lands separately from the others).
    static let jpegCoderAvailable: Bool = {
        let header = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01])
        return ImageCodersManager.shared.coders.contains { $0.canDecode(header) }
    }()

    /// The format of the small images downloaded with decoding on: JPEG once its coder is registered.
    var decodedSmallFormat: String { Self.jpegCoderAvailable ? "jpg" : "png" }

    func log(_ text: String) {
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }
}
