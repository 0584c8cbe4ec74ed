import Testing

/// `@Test(.requires(.libwebp))` / `@Suite(.requires(.redisServer))`: runs the test when everything is here; else
/// fails it naming what is missing (`OD_REQUIRE_ALL=1`, CI) or skips it (elsewhere). See `Requirement`.
///
/// Checked per test case: a skipped case of a parameterised test is reported only as a cancelled test case
/// (the console then says the test passed), which `.ci/skipped-tests.py` counts from the event stream. A
/// parameterised test whose `arguments:` list is empty never reaches this trait: it is reported as skipped
/// ("No test cases found"), and counted too.
public struct RequirementTrait: TestTrait, SuiteTrait, TestScoping {
    public let requirements: [Requirement]
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        // A suite's scope wraps its tests, each of which gets this trait again (recursive): check once, per test.
        if test.isSuite { try await function(); return }
        guard let message = Requirement.missingMessage(requirements) else {
            try await function()
            return
        }
        if Requirement.requireAll {
            Issue.record(Comment(rawValue: RequirementMissing(message: message).description), sourceLocation: test.sourceLocation)
            return
        }
        try Test.cancel(Comment(rawValue: "skipped: " + message), sourceLocation: test.sourceLocation)
    }
}

extension Trait where Self == RequirementTrait {
    /// The test (or every test of the suite) needs these; see `Requirement`.
    public static func requires(_ requirements: Requirement...) -> Self {
        RequirementTrait(requirements: requirements)
    }
}
