import Foundation

/// Tests/Support (the decoder fixtures the command suites read), found from this file's place,
/// Tests/ImagedlTests/Support/TestFolders.swift, so that a suite finds it from any folder.
enum TestFolders {
    static let support = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support")
}
