import Foundation
import Testing
@testable import OperationDownloader

/// Docs/Observability.md's table of names is the catalogue the package reports (`ImageDownloaderMetricName`):
/// the same names, each with the same type, and nothing reported that the doc does not list.
@Suite struct ObservabilityDocTests {
    static let doc = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/Observability.md")

    @Test func theDocListsEveryNameWithItsType() throws {
        let text = try String(contentsOf: Self.doc, encoding: .utf8)
        var listed: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[0].hasPrefix("`"), cells[0].hasSuffix("`") else { continue }
            let name = String(cells[0].dropFirst().dropLast())
            guard name.hasPrefix("od_") || name.hasPrefix("http_client_") else { continue }
            listed[name] = cells[1]
        }
        let catalogue = Dictionary(uniqueKeysWithValues: ImageDownloaderMetricName.all.map { ($0.name, $0.kind.rawValue) })
        #expect(listed == catalogue)
        #expect(ImageDownloaderMetricName.all.allSatisfy { !$0.help.isEmpty })
        #expect(ImageDownloaderMetricName.all.filter { $0.kind == .counter }.allSatisfy { $0.name.hasSuffix("_total") })
        #expect(ImageDownloaderMetricName.all.filter { $0.kind == .histogram }.allSatisfy { $0.name.hasSuffix("_seconds") && !$0.buckets.isEmpty })
        // OpenTelemetry's advised buckets for http.client.request.duration.
        #expect(ImageDownloaderMetricName.definition(of: "http_client_request_duration_seconds")?.buckets
                == [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10])
    }
}
