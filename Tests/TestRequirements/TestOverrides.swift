import Foundation
import Testing

/// Environment variables that narrow what a test checks, for a developer's quick look (`OD_TEST_TRANSPORTS`,
/// `OD_FAULT`) or that change what it does (`OD_UPDATE_USAGE_DOC` rewrites the doc it compares). `.ci/run` unsets
/// every `OD_*` variable it does not set itself; should one reach a CI-mode test run anyway (`OD_REQUIRE_ALL`),
/// the test that reads it fails, naming it: CI never passes by running less than the tests say.
public enum TestOverrides {
    /// The value of the override `name` (nil when unset). Under `OD_REQUIRE_ALL` a set override is an issue of
    /// the calling test. Call it from a test body.
    public static func value(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name] else { return nil }
        if Requirement.requireAll {
            Issue.record(Comment(rawValue: "\(name)=\(value) narrows what this test checks; a CI-mode run (OD_REQUIRE_ALL) "
                + "must not set it (.ci/run unsets every OD_* variable it does not set itself)"), sourceLocation: sourceLocation)
        }
        return value
    }
}
