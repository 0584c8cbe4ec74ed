@testable import ImagedlCore
import OperationDownloader
import TestRequirements
import Testing

extension Requirement {
    /// libcurl, through the package's own loader (as in OperationDownloaderTests).
    static let libcurl = Requirement("libcurl", install: "apt-get install libcurl4") {
        ImageDownloaderTransport.curl.unavailableReason
    }
}

/// Every transport imagedl can use here (`--transport`): curl stays in the list under `OD_REQUIRE_ALL=1`,
/// where a missing libcurl then fails the test naming it.
enum ImagedlTransports {
    static let all: [TransportName] = TransportName.allCases.filter { $0 != .curl || Requirement.shouldRun(.libcurl) }

    static func check(_ transport: TransportName) throws {
        if transport == .curl { try Requirement.check(.libcurl) }
    }
}
