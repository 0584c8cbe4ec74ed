import Foundation

/// The sample images `--demo` serves, read from the tool's bundled resources.
enum DemoSamples {
    /// One thing the demo downloads: a path on the loopback server and how it is served.
    struct Sample {
        var path: String
        var file: String?
        var contentType: String
        var drip: (chunkSize: Int, interval: Double)?
    }

    /// In download order. The progressive JPEG is dripped (~1.5 KB every 120 ms, about 5 s) so its scans
    /// appear one by one; the last path is not served, to show a 404.
    static let samples: [Sample] = [
        Sample(path: "/progressive.jpg", file: "progressive.jpg", contentType: "image/jpeg", drip: (1_500, 0.12)),
        Sample(path: "/photo.png", file: "photo.png", contentType: "image/png", drip: (6_000, 0.1)),
        Sample(path: "/bounce.gif", file: "bounce.gif", contentType: "image/gif", drip: nil),
        Sample(path: "/baseline.jpg", file: "baseline.jpg", contentType: "image/jpeg", drip: (2_000, 0.1)),
        Sample(path: "/missing.png", file: nil, contentType: "image/png", drip: nil),
    ]

    enum LoadError: Error, CustomStringConvertible {
        case notFound(String)
        var description: String {
            switch self {
            case .notFound(let file): return "demo sample '\(file)' not found next to the executable or in the sources"
            }
        }
    }

    /// The server routes for every sample that has a file.
    static func routes() throws -> [String: LoopbackHTTPServer.Resource] {
        var routes: [String: LoopbackHTTPServer.Resource] = [:]
        for sample in samples {
            guard let file = sample.file else { continue }
            let body = try data(named: file)
            routes[sample.path] = LoopbackHTTPServer.Resource(body: body, contentType: sample.contentType, drip: sample.drip)
        }
        return routes
    }

    /// Bytes of a bundled sample.
    static func data(named file: String) throws -> Data {
        for folder in candidateFolders() {
            if let data = try? Data(contentsOf: folder.appendingPathComponent(file)) { return data }
        }
        throw LoadError.notFound(file)
    }

    /// Where the samples may be: SwiftPM's resource bundle beside the executable (`swift run`, `swift build`
    /// products), or the source tree this file was compiled from. Looked up by hand because the generated
    /// `Bundle.module` accessor traps when the bundle was moved away.
    private static func candidateFolders() -> [URL] {
        let bundleName = "OperationDownloader_ImagedlCore.resources"
        var folders: [URL] = []
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        for base in [Bundle.main.bundleURL, executable.deletingLastPathComponent()] {
            folders.append(base.appendingPathComponent(bundleName).appendingPathComponent("DemoImages"))
            folders.append(base.appendingPathComponent(bundleName).appendingPathComponent("Contents/Resources/DemoImages"))
        }
        folders.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Resources/DemoImages"))
        return folders
    }
}
