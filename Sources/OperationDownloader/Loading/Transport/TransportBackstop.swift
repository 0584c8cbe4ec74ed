import Foundation

/// The transports' own timeouts, set behind the package's idle timeout (TransferTimeouts.swift enforces that one
/// on every transport): a backstop that fires only when the package's timer could not.
enum TransportBackstop {
    /// Seconds the transport's own timeout lags behind the package's, so the package's always fires first,
    /// even when a loaded process runs the package's timer late. (5 s was not enough: under TSan a process
    /// stalled long enough for corelibs' timer to win, see `timeout(idle:margin:)`.)
    static let margin: TimeInterval = 300

    /// libcurl's backstops lag by less: nothing traps when they fire first (the transfer ends with `.timedOut`,
    /// the same error), and the bare curl transport, which has no operation timer, relies on them.
    static let curlMargin: TimeInterval = 5

    /// The transport's own backstop for an idle timeout: whole seconds (URLSession on Linux truncates the
    /// request timeout, so 0.5 would fail at once), the idle timeout rounded up plus `margin`. Far from
    /// it: when corelibs' timer fires while a redirect callback waits on the busy delegate queue, corelibs ends
    /// the task quietly, and the completion handler the callback then calls traps ("Received callback for HTTP
    /// redirection, but we're not waiting for it"). The package's timer cancels the transfer the safe way first.
    static func timeout(idle seconds: TimeInterval?, margin: TimeInterval = margin) -> TimeInterval {
        max(1, DownloadDefaults.idleTimeout(seconds).rounded(.up)) + margin
    }
}
