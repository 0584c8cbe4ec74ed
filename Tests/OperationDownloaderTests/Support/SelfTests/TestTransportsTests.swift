import Foundation
import OperationDownloader
import Testing
import TestRequirements

/// The end-to-end tests run every case on each transport of `TestTransports.all`. Where libcurl is missing (and
/// OD_REQUIRE_ALL is not set) the `.curl` cases are left out of those lists, and a case left out of an
/// `arguments:` list is reported nowhere. This test stands for all of them: it is skipped naming libcurl, so the
/// skip count sees the missing cases, and under OD_REQUIRE_ALL it fails naming it.
@Suite struct TestTransportsTests {
    @Test(.requires(.libcurl)) func endToEndCasesRunOnEveryTransport() {
        // OD_TEST_TRANSPORTS narrows the list on purpose, on a developer's machine only (a failure under OD_REQUIRE_ALL).
        guard TestOverrides.value("OD_TEST_TRANSPORTS") == nil else { return }
        #expect(TestTransports.all == [.urlSession, .curl])
    }
}
