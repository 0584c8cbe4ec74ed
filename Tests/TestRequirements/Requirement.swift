import Foundation
import Testing

/// Something a test needs from the machine: a library loaded with `dlopen`, a server binary, IPv6 loopback, the
/// shared corpus. Tests name what they need with `.requires(...)`; what happens when it is missing depends on
/// `OD_REQUIRE_ALL`:
/// - set (`.ci/run` sets it, and installs everything): the test FAILS, naming what is missing and how to install
///   it. Nothing can pass on CI by skipping.
/// - unset (a developer's machine): the test is skipped (cancelled, with the same reason).
public struct Requirement: Sendable, CustomStringConvertible {
    /// Short name, as the failure names it ("libwebp", "redis-server").
    public let name: String
    /// How to get it ("apt-get install libwebp7").
    public let install: String
    private let probe: @Sendable () -> String?

    /// `probe` returns nil when the requirement holds, else why it does not (the loader's message, say).
    public init(_ name: String, install: String, probe: @escaping @Sendable () -> String?) {
        self.name = name
        self.install = install
        self.probe = probe
    }

    /// Why it is missing, or nil when it is here.
    public var missingReason: String? { probe() }
    public var isAvailable: Bool { missingReason == nil }
    public var description: String { name }

    /// `OD_REQUIRE_ALL=1` (set by `.ci/run`): a missing requirement fails its tests instead of skipping them.
    public static var requireAll: Bool {
        let value = ProcessInfo.processInfo.environment["OD_REQUIRE_ALL"] ?? ""
        return !value.isEmpty && value != "0"
    }

    /// Whether a test that needs these should run its body: true when all are here, and always in require-all
    /// mode (where `RequirementTrait` fails the test first). For `arguments:` lists that drop a case otherwise.
    public static func shouldRun(_ requirements: Requirement...) -> Bool {
        requireAll || requirements.allSatisfy(\.isAvailable)
    }

    /// The one-line message for the missing ones, or nil when all are here.
    public static func missingMessage(_ requirements: [Requirement]) -> String? {
        let missing = requirements.compactMap { requirement in
            requirement.missingReason.map { "\(requirement.name) is missing (\($0)); install: \(requirement.install)" }
        }
        return missing.isEmpty ? nil : missing.joined(separator: "; ")
    }

    /// Inside a test body (or a helper it calls): fails the test naming what is missing in require-all mode,
    /// else cancels (skips) it. Returns normally when everything is here.
    public static func check(_ requirements: Requirement..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let message = missingMessage(requirements) else { return }
        // Thrown, the error is the test's one issue ("Caught error: required by OD_REQUIRE_ALL: …").
        if requireAll { throw RequirementMissing(message: message) }
        try Test.cancel(Comment(rawValue: "skipped: " + message), sourceLocation: sourceLocation)
    }

    /// For a helper that cannot throw (say, the factory every end-to-end case calls with its transport), on a
    /// case that `shouldRun` kept: records a failure naming what is missing (which, outside require-all mode,
    /// `shouldRun` has already kept from running). Returns whether everything is here.
    @discardableResult
    public static func recordIfMissing(_ requirements: Requirement..., sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let message = missingMessage(requirements) else { return true }
        Issue.record(Comment(rawValue: RequirementMissing(message: message).description), sourceLocation: sourceLocation)
        return false
    }
}

/// Thrown by `Requirement.check` in require-all mode: the failure of the test, naming what is missing.
public struct RequirementMissing: Error, CustomStringConvertible {
    public let message: String
    public var description: String { "required by OD_REQUIRE_ALL: " + message }
}
