@testable import OperationDownloader
import TestRequirements

extension Requirement {
    /// hiredis, through the package's own loader (libhiredis.so.1.1.0, 1.0.0 or Debian 12's 0.14).
    static let hiredis = Requirement("hiredis", install: "apt-get install libhiredis0.14") {
        HiredisLibrary.unavailableReason
    }
}
