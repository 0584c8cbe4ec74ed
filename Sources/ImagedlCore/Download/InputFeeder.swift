import Foundation

/// Feeds `--input`'s URLs to the download command with a bounded amount of work in flight.
///
/// A thread of its own reads lines (it may block on a slow pipe without holding up any callback) and hands
/// each URL to `handler` on the command's queue, but only after taking one of `window` slots; the command
/// gives a slot back (`slotFreed`) when that URL has ended. So at most `window` URLs are read ahead of the
/// downloads that have finished, and memory stays flat however long the input is.
final class InputFeeder: @unchecked Sendable {  // `lock` guards `stopped`; `reader` is used by the reading thread only
    /// What the command is handed, in input order, on its queue.
    enum Item {
        /// A URL to download (it holds a slot).
        case url(URL)
        /// A line that is not an http(s) URL (it holds a slot; give it back after reporting).
        case invalid(String, line: Int)
        /// The input could not be read any further.
        case failed(String)
        /// Every line has been handed out.
        case end
    }

    private let operands: [URL]
    private let reader: URLLineReader?
    private let slots: DispatchSemaphore
    private let queue: DispatchQueue
    private let handler: @Sendable (Item) -> Void
    private let lock = NSLock()
    private var stopped = false

    /// `operands` (URLs from the command line) come first, then `reader`'s lines.
    init(operands: [URL], reader: URLLineReader?, window: Int, queue: DispatchQueue,
         handler: @escaping @Sendable (Item) -> Void) {
        self.operands = operands
        self.reader = reader
        slots = DispatchSemaphore(value: max(1, window))
        self.queue = queue
        self.handler = handler
    }

    /// Starts the reading thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "imagedl.input"
        thread.start()
    }

    /// A URL handed out earlier has ended: one more may be read.
    func slotFreed() {
        slots.signal()
    }

    /// Stops handing out items (Ctrl-C). A thread blocked reading a silent pipe stays blocked until the process
    /// ends, but hands nothing out.
    func stop() {
        lock.withLock { stopped = true }
        slots.signal()  // wakes a thread waiting for a slot
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run() {
        for url in operands {
            guard hand(.url(url)) else { return }
        }
        guard let reader else {
            send(.end)
            return
        }
        while true {
            slots.wait()
            if isStopped { return }
            let line: URLLineReader.Line?
            do {
                line = try reader.next()
            } catch {
                send(.failed(error.description))
                return
            }
            switch line {
            case .url(let url, _)?: send(.url(url))
            case .invalid(let text, let number)?: send(.invalid(text, line: number))
            case nil:
                send(.end)
                return
            }
        }
    }

    /// Takes a slot, then sends `item`; false once stopped.
    private func hand(_ item: Item) -> Bool {
        slots.wait()
        if isStopped { return false }
        send(item)
        return true
    }

    private func send(_ item: Item) {
        let handler = self.handler
        queue.async { handler(item) }
    }
}
