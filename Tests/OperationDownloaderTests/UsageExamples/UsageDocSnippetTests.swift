import Foundation
import Testing
import TestRequirements

/// Docs/Usage.md and Docs/Observability.md show code that compiles and runs: every ```swift block in them is a
/// region of a file in Tests/UsageExamples (a target compiled with the package as an application would compile
/// it), quoted verbatim, and UsageExampleTests runs each example against the fixture server. The one exception
/// is code for a package this one does not depend on (Observability.md's swift-metrics and swift-log adapters):
/// its block is preceded by `<!-- not compiled: WHY -->`.
///
/// In the doc, a block is preceded by `<!-- snippet: NAME -->`; in the sources the region runs from a
/// `// snippet: NAME` line to the next `// end snippet` line. After editing an example, run this suite with
/// `OD_UPDATE_USAGE_DOC=1` to copy the regions into the docs.
@Suite struct UsageDocSnippetTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let docURLs = ["Docs/Usage.md", "Docs/Observability.md"].map { root.appendingPathComponent($0) }
    static let examplesURL = root.appendingPathComponent("Tests/UsageExamples")
    /// The complete program (an executable target of its own).
    static let programURL = root.appendingPathComponent("Tests/UsageProgram")

    @Test func everySwiftBlockOfTheGuidesIsACompiledExample() throws {
        let regions = try Self.exampleRegions()
        var shown: Set<String> = []
        for docURL in Self.docURLs {
            let name = docURL.lastPathComponent
            var doc = try String(contentsOf: docURL, encoding: .utf8)
            // Rewrites the doc before comparing: a developer's tool, a failure under OD_REQUIRE_ALL (TestOverrides).
            if TestOverrides.value("OD_UPDATE_USAGE_DOC") == "1" && !Requirement.requireAll {
                doc = try UsageDoc.replacingBlocks(in: doc, with: regions)
                try doc.write(to: docURL, atomically: true, encoding: .utf8)
            }
            let blocks = try UsageDoc.blocks(in: doc)
            #expect(!blocks.isEmpty, "\(name) shows no example")
            for block in blocks {
                let region = try #require(regions[block.name], "\(name) quotes snippet \"\(block.name)\", which no file in Tests/UsageExamples has")
                #expect(block.code == region, """
                    \(name)'s snippet "\(block.name)" differs from Tests/UsageExamples; \
                    run `OD_UPDATE_USAGE_DOC=1 swift test --skip-build --filter UsageDocSnippetTests`
                    """)
                shown.insert(block.name)
            }
        }
        let unused = Set(regions.keys).subtracting(shown)
        #expect(unused.isEmpty, "examples shown in no guide: \(unused.sorted())")
    }

    @Test func theParserFindsBlocksAndRefusesUnmarkedCode() throws {
        let doc = "text\n<!-- snippet: a -->\n```swift\nlet x = 1\n```\n\n```swift\nlet y = 2\n```\n"
        #expect(throws: UsageDoc.Problem.self) { try UsageDoc.blocks(in: doc) }
        let marked = "<!-- snippet: a -->\n```swift\nlet x = 1\n\nlet z = 3\n```\n"
        #expect(try UsageDoc.blocks(in: marked).map(\.code) == ["let x = 1\n\nlet z = 3"])
        let exempt = "<!-- not compiled: needs swift-log -->\n```swift\nimport Logging\n```\n" + marked
        #expect(try UsageDoc.blocks(in: exempt).map(\.name) == ["a"])
        let replaced = try UsageDoc.replacingBlocks(in: marked, with: ["a": "let w = 4"])
        #expect(replaced == "<!-- snippet: a -->\n```swift\nlet w = 4\n```\n")
        let regions = try UsageDoc.regions(in: "x\n// snippet: b\nlet b = 1\n// end snippet\ny\n", file: "f.swift")
        #expect(regions == ["b": "let b = 1"])
    }

    /// Every region of every example file (Tests/UsageExamples, Tests/UsageProgram), by name.
    static func exampleRegions() throws -> [String: String] {
        var files: [URL] = []
        for folder in [examplesURL, programURL] {
            files += try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
                .sorted().map { folder.appendingPathComponent($0) }
        }
        var regions: [String: String] = [:]
        for url in files {
            let file = url.lastPathComponent
            let text = try String(contentsOf: url, encoding: .utf8)
            for (name, code) in try UsageDoc.regions(in: text, file: file) {
                if regions[name] != nil { throw UsageDoc.Problem(message: "snippet \"\(name)\" is defined twice (\(file))") }
                regions[name] = code
            }
        }
        return regions
    }
}

/// The two formats: ```swift blocks marked in Markdown, and marked regions in Swift files.
enum UsageDoc {
    struct Problem: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    struct Block: Equatable {
        let name: String
        let code: String
    }

    private static let marker = "<!-- snippet: "
    private static let exemption = "<!-- not compiled: "
    private static let regionStart = "// snippet: "
    private static let regionEnd = "// end snippet"

    /// The ```swift blocks of `doc`; each must follow a `<!-- snippet: NAME -->` line.
    static func blocks(in doc: String) throws -> [Block] {
        try scan(doc).map { Block(name: $0.name, code: $0.lines.joined(separator: "\n")) }
    }

    /// `doc` with each marked block's code replaced by `regions[name]` (blocks without a region are kept).
    static func replacingBlocks(in doc: String, with regions: [String: String]) throws -> String {
        var lines = doc.components(separatedBy: "\n")
        for found in try scan(doc).reversed() {
            guard let code = regions[found.name] else { continue }
            lines.replaceSubrange(found.range, with: code.components(separatedBy: "\n"))
        }
        return lines.joined(separator: "\n")
    }

    /// The regions of one Swift file by name: the lines between `// snippet: NAME` and `// end snippet`.
    static func regions(in text: String, file: String) throws -> [String: String] {
        var regions: [String: String] = [:]
        var current: (name: String, lines: [String])?
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(regionStart) {
                if current != nil { throw Problem(message: "\(file): snippet inside a snippet") }
                current = (String(trimmed.dropFirst(regionStart.count)), [])
            } else if trimmed == regionEnd {
                guard let open = current else { throw Problem(message: "\(file): \(regionEnd) without a snippet") }
                regions[open.name] = open.lines.joined(separator: "\n")
                current = nil
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        if let open = current { throw Problem(message: "\(file): snippet \"\(open.name)\" never ends") }
        return regions
    }

    private struct Found {
        let name: String
        /// The code lines' indices in the doc (between the fences).
        let range: Range<Int>
        let lines: [String]
    }

    private static func scan(_ doc: String) throws -> [Found] {
        let lines = doc.components(separatedBy: "\n")
        var found: [Found] = []
        var index = 0
        while index < lines.count {
            guard lines[index].trimmingCharacters(in: .whitespaces) == "```swift" else {
                index += 1
                continue
            }
            let previous = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
            if previous.hasPrefix(exemption), previous.hasSuffix("-->") {
                // Code for another package (named in the exemption): not compiled here.
                index = (lines[(index + 1)...].firstIndex { $0.trimmingCharacters(in: .whitespaces) == "```" } ?? lines.count) + 1
                continue
            }
            guard previous.hasPrefix(marker), previous.hasSuffix("-->") else {
                throw Problem(message: "line \(index + 1): a ```swift block without a <!-- snippet: NAME --> line before it")
            }
            let name = previous.dropFirst(marker.count).dropLast(3).trimmingCharacters(in: .whitespaces)
            guard let close = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "```" }) else {
                throw Problem(message: "line \(index + 1): the block never closes")
            }
            found.append(Found(name: name, range: (index + 1)..<close, lines: Array(lines[(index + 1)..<close])))
            index = close + 1
        }
        return found
    }
}
