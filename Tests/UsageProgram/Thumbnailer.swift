// The complete command-line program of Docs/Usage.md ("A complete program"), built as an executable of its own
// (`swift build` makes .build/debug/UsageThumbnailer) and run by UsageProgramTests. The region between the
// snippet lines appears verbatim in the doc (UsageDocSnippetTests checks it).
// snippet: command-line-program
import Decoding
import Foundation
import OperationDownloader
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `thumbnailer FOLDER URL...`: each image as a PNG thumbnail of at most 256 pixels in FOLDER, four downloads at
/// a time, progress on standard error. Ctrl-C cancels what is left. Exit status: 0 when every thumbnail was
/// written, 1 when one failed, 2 for a usage error, 130 when interrupted.
@main
struct Thumbnailer {
    static let concurrentDownloads = 4

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2 else {
            report("usage: thumbnailer FOLDER URL...")
            exit(2)
        }
        let folder = URL(fileURLWithPath: arguments[0], isDirectory: true)
        let urls = arguments.dropFirst().compactMap { URL(string: $0) }
        var configuration = ImageDownloaderConfiguration()
        // A lost connection, a 503, a timeout: tried again, and a cut body resumed where the server allows.
        configuration.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 3)
        configuration.minimumProgressInterval = 0.25  // a progress line per quarter at most
        let downloader = ImageDownloader(configuration: configuration)

        let work = Task { await makeThumbnails(of: urls, into: folder, with: downloader) }
        // Ctrl-C cancels the task, and with it every download (each caller gets CancellationError). The signal is
        // ignored first: its default action would end the process at once.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { work.cancel() }
        interrupt.resume()

        let failures = await work.value
        if work.isCancelled {
            report("interrupted")
            exit(130)
        }
        exit(failures == 0 ? 0 : 1)
    }

    /// A task group that keeps `concurrentDownloads` thumbnails in flight: one more starts as one ends.
    /// Returns how many failed.
    static func makeThumbnails(of urls: [URL], into folder: URL, with downloader: ImageDownloader) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            var pending = urls.makeIterator()
            for _ in 0..<concurrentDownloads {
                guard let url = pending.next() else { break }
                group.addTask { await makeThumbnail(of: url, into: folder, with: downloader) }
            }
            var failures = 0
            for await written in group {
                if !written { failures += 1 }
                // Nothing new starts once the task is cancelled (Ctrl-C).
                if let url = pending.next() {
                    _ = group.addTaskUnlessCancelled { await makeThumbnail(of: url, into: folder, with: downloader) }
                }
            }
            return failures
        }
    }

    /// One URL: download and decode to fit 256 pixels, write `<name>.png`, say what happened.
    static func makeThumbnail(of url: URL, into folder: URL, with downloader: ImageDownloader) async -> Bool {
        let name = url.deletingPathExtension().lastPathComponent
        let outcome = await downloader.imageResult(for: url, context: .thumbnail(maxPixelSize: 256)) { received, expected in
            if expected > 0 { report("\(name): \(received * 100 / expected)%") }
        }
        switch outcome {
        case .success(let result):
            guard let image = result.image else { return false }
            do {
                try image.encoded(as: .png).write(to: folder.appendingPathComponent(name + ".png"))
                report("\(name): \(image.width)x\(image.height) from \(result.source)")
                return true
            } catch {
                report("\(name): cannot write: \(error)")
                return false
            }
        case .failure(let failure) where failure.isCancellation:
            return false
        case .failure(let failure):
            report("\(name): \(failure)")  // "unacceptable HTTP status 404 (Not Found)", "... (after 3 attempts)"
            return false
        }
    }

    static func report(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
// end snippet
