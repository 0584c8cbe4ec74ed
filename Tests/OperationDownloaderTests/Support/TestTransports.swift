import Foundation
import OperationDownloader
import Testing

/// The transports the end-to-end tests run on: every one available here (today `.urlSession`; `.curl` joins
/// by itself once its transport is built and libcurl loads). `OD_TEST_TRANSPORTS=urlSession,curl` narrows it.
enum TestTransports {
    static let all: [ImageDownloaderTransport] = {
        let candidates: [ImageDownloaderTransport] = [.urlSession, .curl].filter(\.isAvailable)
        guard let only = ProcessInfo.processInfo.environment["OD_TEST_TRANSPORTS"] else { return candidates }
        let names = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        return candidates.filter { names.contains($0.description.lowercased()) }
    }()
}

extension ImageDownloaderTransport: CustomTestStringConvertible {
    public var testDescription: String { description }
}
