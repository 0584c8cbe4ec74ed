import CCurl
import Foundation

/// One libcurl multi handle and the one thread that drives it (`curl_multi_perform` + `curl_multi_poll`).
///
/// libcurl handles are not thread-safe, so every libcurl call happens on this thread: other threads post
/// commands (start, cancel, resume reading, priority, shutdown) to the inbox and wake the poll with
/// `curl_multi_wakeup`. The thread starts with the first command and ends after `shutdown`.
final class CurlMultiDriver: @unchecked Sendable {  // `inbox` is Locked (NSLock: ThreadSanitizer sees it, not Mutex's futex); every other var is curl-thread only
    enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case resumeReading(CurlTransfer)
        case priority(CurlTransfer)
        case shutdown(cancellingTransfers: Bool)
    }

    private struct Inbox {
        var commands: [Command] = []
        var threadStarted = false
        var curlThread: pthread_t?
        /// `shutdown` was posted: no transfer starts any more.
        var shuttingDown = false
        /// The thread ended (or never had to start): nothing is accepted.
        var ended = false
    }

    let settings: CurlTransportSettings
    /// The loaded libcurl's version and features.
    let library: CurlLibraryInfo
    private let multi: OpaquePointer
    private let inbox = Locked(Inbox())

    // Curl thread only.
    private var pool: CurlEasyPool
    /// Transfers whose easy handle is in the multi handle, by handle.
    private var inMulti: [OpaquePointer: CurlTransfer] = [:]
    /// Transfers holding a slot (`settings.maximumActiveTransfers`): in the multi or between two requests.
    private var slotsInUse = 0
    /// Started transfers waiting for a slot, best priority first (FIFO among equals).
    private var waiting: [CurlTransfer] = []
    /// Set by `shutdown`: end once no transfer is left.
    private var draining = false
    private var spareCommands: [Command] = []

    /// nil when libcurl cannot make a multi handle.
    init?(settings: CurlTransportSettings, library: CurlLibraryInfo) {
        guard let multi = ccurl_multi_init() else { return nil }
        self.multi = multi
        self.settings = settings
        self.library = library
        pool = CurlEasyPool(capacity: max(8, settings.maximumConnectionsPerHost * 2))
        // Per-host connections capped (libcurl queues transfers beyond it); HTTP/2 multiplexed onto one
        // connection per host; the idle-connection cache sized for a few hosts' worth of connections.
        ccurl_multi_setopt_long(multi, Int32(CCURLMOPT_MAX_HOST_CONNECTIONS), settings.maximumConnectionsPerHost)
        ccurl_multi_setopt_long(multi, Int32(CCURLMOPT_MAXCONNECTS), max(16, settings.maximumConnectionsPerHost * 4))
        ccurl_multi_setopt_long(multi, Int32(CCURLMOPT_PIPELINING), CCURLPIPE_MULTIPLEX)
    }

    /// Queues a command for the curl thread. False when it was refused: a start after `shutdown`, or any
    /// command once the thread ended.
    @discardableResult
    func post(_ command: Command) -> Bool {
        enum Decision { case refused, queued, queuedAndWake, startThread, endUnstarted }
        let decision = inbox.withLock { inbox -> Decision in
            if inbox.ended { return .refused }
            switch command {
            case .start: if inbox.shuttingDown { return .refused }
            case .shutdown:
                if inbox.shuttingDown { return .refused }
                inbox.shuttingDown = true
                if !inbox.threadStarted {
                    // Never used: nothing to drive, nothing to wait for.
                    inbox.ended = true
                    return .endUnstarted
                }
            default: break
            }
            let wasEmpty = inbox.commands.isEmpty
            inbox.commands.append(command)
            if !inbox.threadStarted {
                inbox.threadStarted = true
                return .startThread
            }
            // The curl thread looks at the inbox before it polls; other threads wake the poll, once per batch.
            let onCurlThread = inbox.curlThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return wasEmpty && !onCurlThread ? .queuedAndWake : .queued
        }
        switch decision {
        case .refused:
            return false
        case .queued:
            return true
        case .queuedAndWake:
            ccurl_multi_wakeup(multi)
            return true
        case .startThread:
            Thread { self.run() }.start()
            return true
        case .endUnstarted:
            // No thread ever used the handles: clean up here.
            pool.drain()
            ccurl_multi_cleanup(multi)
            return true
        }
    }

    // MARK: - The curl thread

    private func run() {
        ccurl_name_current_thread("od-curl")  // (Thread.name set before start is dropped by corelibs)
        inbox.withLock { $0.curlThread = pthread_self() }
        var running: Int32 = 0
        var descriptors: Int32 = 0
        while true {
            handlePendingCommands()
            if draining && slotsInUse == 0 && waiting.isEmpty && inMulti.isEmpty {
                // Accept nothing more; commands posted meanwhile (cancels of finished transfers) still run.
                let late = inbox.withLock { inbox -> [Command] in
                    inbox.ended = true
                    defer { inbox.commands = [] }
                    return inbox.commands
                }
                for command in late { handle(command) }
                break
            }
            ccurl_multi_perform(multi, &running)
            collectFinishedRequests()
            if inbox.withLock({ !$0.commands.isEmpty }) { continue }
            ccurl_multi_poll(multi, 5_000, &descriptors)
        }
        finish()
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer):
            schedule(transfer)
        case .cancel(let transfer):
            if let index = waiting.firstIndex(where: { $0 === transfer }) { waiting.remove(at: index) }
            transfer.curlCancel(self)
        case .resumeReading(let transfer):
            transfer.curlResumeReading()
        case .priority(let transfer):
            if let index = waiting.firstIndex(where: { $0 === transfer }) {
                waiting.remove(at: index)
                enqueue(transfer)
            }
            transfer.curlUpdatePriority()
        case .shutdown(let cancellingTransfers):
            draining = true
            if cancellingTransfers {
                let everyone = Array(inMulti.values) + waiting
                waiting.removeAll()
                for transfer in everyone {
                    transfer.cancelForShutdown()
                    transfer.curlCancel(self)
                }
            }
        }
    }

    private func schedule(_ transfer: CurlTransfer) {
        if let limit = settings.maximumActiveTransfers, slotsInUse >= limit {
            enqueue(transfer)
            return
        }
        slotsInUse += 1
        transfer.curlStart(self)
    }

    private func enqueue(_ transfer: CurlTransfer) {
        let priority = transfer.currentPriority
        let index = waiting.firstIndex { $0.currentPriority < priority } ?? waiting.endIndex
        waiting.insert(transfer, at: index)
    }

    private func collectFinishedRequests() {
        // Commands posted before these requests ended go first: a transfer started meanwhile must be
        // waiting (in priority order) before a freed slot is handed out. And BEFORE the messages are read:
        // a cancel removes its handle from the multi handle (which drops the handle's pending message) and
        // the pool may hand that handle to a transfer started by the next command; a message read earlier
        // would then end that new transfer with the old request's result.
        handlePendingCommands()
        var easy: OpaquePointer?
        var result: Int32 = 0
        var finished: [(OpaquePointer, Int)] = []
        while ccurl_multi_next_done(multi, &easy, &result) == 1 {
            if let easy { finished.append((easy, Int(result))) }
        }
        for (handle, result) in finished {
            guard let transfer = inMulti.removeValue(forKey: handle) else { continue }  // cancelled meanwhile
            ccurl_multi_remove_handle(multi, handle)
            transfer.curlRequestDidEnd(result: result, driver: self)
        }
    }

    private func handlePendingCommands() {
        var commands = spareCommands
        inbox.withLock { swap(&$0.commands, &commands) }
        for command in commands { handle(command) }
        commands.removeAll(keepingCapacity: true)
        spareCommands = commands
    }

    /// After the loop: every easy handle cleaned up, then the multi handle.
    private func finish() {
        for (handle, transfer) in inMulti {
            ccurl_multi_remove_handle(multi, handle)
            transfer.cancelForShutdown()
            transfer.curlCancel(self)
        }
        inMulti.removeAll()
        pool.drain()
        ccurl_multi_cleanup(multi)
    }

    // MARK: - For transfers (curl thread)

    /// An easy handle for a new request (nil when libcurl cannot allocate one).
    func takeHandle() -> CurlEasyHandle? { pool.take() }

    /// Returns a handle that is no longer in the multi handle.
    func giveBack(_ easy: CurlEasyHandle) { pool.give(easy) }

    /// Starts `easy`'s request. False when libcurl refuses the handle.
    func add(_ easy: CurlEasyHandle, for transfer: CurlTransfer) -> Bool {
        guard ccurl_multi_add_handle(multi, easy.handle) == 0 else { return false }
        inMulti[easy.handle] = transfer
        return true
    }

    /// Stops `easy`'s request at once (libcurl closes its connection if the response was not complete).
    func remove(_ easy: CurlEasyHandle) {
        guard inMulti.removeValue(forKey: easy.handle) != nil else { return }
        ccurl_multi_remove_handle(multi, easy.handle)
    }

    /// `easy`'s transfer is paused (CURL_WRITEFUNC_PAUSE) and its reader caught up: deliver again.
    func unpause(_ easy: CurlEasyHandle) {
        ccurl_easy_pause(easy.handle, Int32(CCURLPAUSE_CONT))
    }

    /// A transfer that held a slot ended (completed or cancelled): the best waiting one starts.
    func releaseSlot() {
        slotsInUse -= 1
        while !waiting.isEmpty, settings.maximumActiveTransfers.map({ slotsInUse < $0 }) ?? true {
            let next = waiting.removeFirst()
            slotsInUse += 1
            next.curlStart(self)
        }
    }
}
