import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader

/// A downloader on a scripted transport and a manual clock, with a serial callback queue: the operation's
/// logic, driven event by event, with no network, no sleep and no polling.
struct ScriptedHarness {
    let downloader: ImageDownloader
    let transport: ScriptedTransport
    let clock: ManualClock
    let monitor: DeadlineMonitor
    let queue: DispatchQueue

    init(_ adjust: (inout ImageDownloaderConfiguration) -> Void = { _ in }) {
        let (monitor, clock) = makeManualMonitor()
        let queue = DispatchQueue(label: "scripted.callbacks")
        var configuration = ImageDownloaderConfiguration()
        configuration.callbackQueue = queue
        configuration.imageCache = nil
        adjust(&configuration)
        let transport = ScriptedTransport()
        self.downloader = ImageDownloader(configuration: configuration, deadlineMonitor: monitor, transport: transport)
        self.transport = transport
        self.clock = clock
        self.monitor = monitor
        self.queue = queue
    }

    /// A URL for scripted downloads (never fetched).
    static func url(_ name: String = "image.png") -> URL {
        URL(string: "http://scripted.test/\(name)") ?? URL(fileURLWithPath: "/")
    }

    /// Starts a download with a fresh recorder.
    @discardableResult
    func download(
        _ url: URL = ScriptedHarness.url(), options: ImageDownloaderOptions = [], context: ImageDownloaderContext? = nil
    ) -> (AsyncRecorder, ImageDownloadToken?) {
        let recorder = AsyncRecorder()
        let token = downloader.downloadImage(
            url, options: options, context: context, progress: recorder.progress, completed: recorder.completed)
        return (recorder, token)
    }

    /// Waits until every block sent to the callback queue so far has run.
    func drained() async { await drain(queue) }

    static func fixture(_ name: String) -> Data {
        (try? FixtureServer.fixtureData(name)) ?? Data()
    }
}
