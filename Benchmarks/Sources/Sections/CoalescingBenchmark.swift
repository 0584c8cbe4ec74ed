import Foundation
import OperationDownloader

/// Coalescing: 100 callers ask for one URL at the same moment (from many threads); nginx's access log says
/// how many requests reached the server. Each round uses a fresh downloader and a fresh query string, so
/// nothing is served from a cache.
struct CoalescingBenchmark {
    let context: RunContext
    static let section = "Coalescing"
    static let callers = 100

    func run() throws {
        var requests = Samples()
        for _ in 0..<context.rounds {
            let token = UUID().uuidString
            guard let url = context.url("large-baseline.jpg?coalesce=\(token)") else {
                throw BenchmarkError.failed("bad base URL")
            }
            let downloader = ImageDownloader()
            let counter = CompletionCounter(expected: Self.callers)
            DispatchQueue.concurrentPerform(iterations: Self.callers) { _ in
                downloader.downloadImage(url, options: [.avoidDecodeImage], completed: { _, data, error, finished in
                    guard finished else { return }
                    counter.complete(error: error.map { String(describing: $0) } ?? (data == nil ? "no data" : nil))
                })
            }
            guard counter.wait(timeout: 120) else { throw BenchmarkError.failed("coalescing: callers not answered") }
            downloader.invalidate(cancelPendingOperations: false)
            let outcome = counter.outcome
            if outcome.failures > 0 {
                context.report.error("coalescing: \(outcome.failures) callers failed: \(outcome.firstError ?? "?")")
            }
            requests.add(Double(try serverRequests(containing: token)))
        }
        context.report.headline(
            "coalesced_requests", section: Self.section, label: "\(Self.callers) concurrent callers of one URL → requests at nginx",
            unit: "requests", requests)
        if let max = requests.max {
            context.report.note(Self.section, "most requests in one round: \(Int(max)) (of \(requests.count) rounds)")
        }
    }

    /// Access-log lines naming `token`. nginx logs a request when it completes, which can trail the client's
    /// completion slightly: poll until the count is non-zero, then once more after a pause for stragglers.
    private func serverRequests(containing token: String) throws -> Int {
        func count() -> Int {
            let text = (try? String(contentsOf: context.accessLog, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.contains(token) }.count
        }
        for _ in 0..<100 {
            if count() > 0 { break }
            usleep(20_000)
        }
        usleep(200_000)
        return count()
    }
}
