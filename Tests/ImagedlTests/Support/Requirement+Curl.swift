import OperationDownloader
import TestRequirements

extension Requirement {
    /// libcurl, through the package's own loader (the `--transport curl` cases).
    static let libcurl = Requirement("libcurl", install: "apt-get install libcurl4") {
        ImageDownloaderTransport.curl.unavailableReason
    }
}
