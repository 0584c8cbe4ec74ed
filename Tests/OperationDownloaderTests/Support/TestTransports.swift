import Foundation
import OperationDownloader
import Testing
import TestRequirements

/// The transports the end-to-end tests run on: URLSession, and curl where libcurl loads — and always under
/// `OD_REQUIRE_ALL=1` (CI), where `makeDownloader` then fails each curl case naming libcurl instead of the case
/// silently disappearing (elsewhere `TestTransportsTests` is skipped in their name). `OD_TEST_TRANSPORTS=urlSession,curl`
/// narrows it.
enum TestTransports {
    static let all: [ImageDownloaderTransport] = {
        let candidates: [ImageDownloaderTransport] = [.urlSession] + (Requirement.shouldRun(.libcurl) ? [.curl] : [])
        guard let only = ProcessInfo.processInfo.environment["OD_TEST_TRANSPORTS"] else { return candidates }
        let names = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        return candidates.filter { names.contains($0.description.lowercased()) }
    }()

    // Where the transports legitimately differ (Docs/Transports.md, Errors): the expected
    // `ImageDownloaderError.caseName` on each.

    /// A reply that is not HTTP: corelibs reports -1002 (unsupported URL), the curl transport
    /// `.badServerResponse` (-1011).
    static func notAnHTTPResponse(_ transport: ImageDownloaderTransport) -> String {
        transport == .curl ? "network-1011" : "network-1002"
    }
}

extension ImageDownloaderTransport: CustomTestStringConvertible {
    public var testDescription: String { description }
}
