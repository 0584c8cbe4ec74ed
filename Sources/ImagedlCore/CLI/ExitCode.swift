/// The process exit status of `imagedl`, as documented in `--help`.
public enum ExitCode: Int32, Sendable {
    /// Every URL downloaded and decoded, or every file decoded.
    case success = 0
    /// At least one download, decode or output write failed (each failure was reported).
    case failure = 1
    /// The arguments could not be understood; nothing was attempted.
    case usage = 2
    /// Interrupted with Ctrl-C: downloads were cancelled (128 + SIGINT, the shell convention).
    case interrupted = 130
}
