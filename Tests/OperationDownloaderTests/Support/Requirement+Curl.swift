import OperationDownloader
import TestRequirements

extension Requirement {
    /// libcurl, through the package's own loader (a broken `dlopen` in the package fails CI, not only a missing
    /// library).
    static let libcurl = Requirement("libcurl", install: "apt-get install libcurl4") {
        ImageDownloaderTransport.curl.unavailableReason
    }
}
