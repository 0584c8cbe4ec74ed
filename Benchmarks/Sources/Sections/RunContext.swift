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
    /// The same files over HTTPS with HTTP/2 (run.sh's second nginx listener), when run.sh set one up.
    var tls: TLSEndpoint?
    /// "redis://127.0.0.1:PORT/0" of the redis-server run.sh started (`--redis-url`), for the Fleet section.
    var redisURL: String?

    /// `--tls-base-url URL --ca-file FILE [--ca-bundle FILE]` of `Benchmarks run`.
    struct TLSEndpoint {
        /// "https://127.0.0.1:PORT".
        let baseURL: String
        /// The test CA that signed nginx's certificate (given to curl and the curl transport).
        let caFile: String
        /// The system bundle plus that CA, mounted over the system bundle for URLSession's children (nil where
        /// no private mount namespace can be made: URLSession over HTTPS is then not measured).
        let caBundle: String?

        init?(_ arguments: Arguments) {
            guard let baseURL = arguments.value("--tls-base-url"), let caFile = arguments.value("--ca-file") else { return nil }
            self.baseURL = baseURL
            self.caFile = caFile
            caBundle = arguments.value("--ca-bundle")
        }
    }

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
