/// A problem with the command line, reported as one line and exit status 2.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
