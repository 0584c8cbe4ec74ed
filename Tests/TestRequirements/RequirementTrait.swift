import Testing

/// `@Test(.requires(.libwebp))` / `@Suite(.requires(.redisServer))`: runs the test when everything is here; else
/// fails it naming what is missing (`OD_REQUIRE_ALL=1`, CI) or skips it (elsewhere). See `Requirement`.
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
            Issue.record(Comment(rawValue: "required by OD_REQUIRE_ALL: " + message), sourceLocation: test.sourceLocation)
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
