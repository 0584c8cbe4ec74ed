import Foundation

/// What one invocation of `imagedl` asks for, as parsed from its arguments.
public enum Command: Equatable, Sendable {
    /// `imagedl URL... [options]`.
    case download(DownloadOptions)
    /// `imagedl --demo [options]`: the same download path against a loopback server of bundled samples.
    case demo(DownloadOptions)
    /// `imagedl decode FILE... [--json] [--rgba OUT [--frame N]]`.
    case decode(DecodeOptions)
    /// `imagedl thumbnail FILE|URL... --size WxH --output DIR [...]`.
    case thumbnail(ThumbnailOptions)
    /// `--help`: the manual page.
    case help
    /// `--version`.
    case version
}

/// Options of the download command (also used by `--demo`, which supplies its own URLs).
public struct DownloadOptions: Equatable, Sendable {
    /// The URLs as typed; each is validated when parsed.
    public var urls: [URL] = []
    /// At most this many downloads at once (`--concurrency`, default 6 as in SDWebImage).
    public var concurrency = 6
    /// Start the newest queued download first (`--lifo`).
    public var lifo = false
    /// Decode while bytes arrive and show partial images (`--progressive`).
    public var progressive = false
    /// Where to write results (`--output`); nil writes nothing.
    public var outputDirectory: String?
    /// Write decoded PNGs instead of the original bytes (`--png`, needs `--output`).
    public var writePNG = false
    /// Fit decoded images inside this many pixels (`--thumbnail WxH`).
    public var thumbnail: PixelSize?
    /// One JSON object per URL on stdout instead of progress bars and a table (`--json`).
    public var json = false
    /// Draw images in the terminal with 24-bit colour half-blocks (`--preview`).
    public var preview = false
    /// The idle timeout in seconds (`--timeout`, default 15): a download fails when no byte arrived for this
    /// long (`downloadTimeout`); a slow but steady one is never cut off.
    public var timeout: Double = 15
    /// The cap on one download's whole transfer in seconds (`--max-time`, curl's `-m`;
    /// `maximumDownloadDuration`); nil: none.
    public var maxTime: Double?
    /// Extra request headers (`--header 'K: V'`, repeatable), in the order given.
    public var headers: [HTTPHeader] = []
    /// HTTP Basic credentials (`--user`, `--password`).
    public var user: String?
    public var password: String?
    /// Folder of the on-disk HTTP cache (`--http-cache DIR`): responses are stored there and fresh ones are
    /// served from it without a request. nil: no HTTP cache.
    public var httpCacheDirectory: String?
    /// The shared HTTP cache on Redis (`--http-cache redis://…`, `redis-sentinel://…`, `redis-cluster://…`, or from
    /// `--http-cache-url-file` or `OD_REDIS_URL`); several hosts are percent-encoded in its host. With a folder too,
    /// the two are tiers, the first given nearest.
    public var httpCacheRedisURL: URL?
    /// Redis was given before the folder (`--http-cache redis://… --http-cache DIR`): its tier is the nearer one.
    public var httpCacheRedisIsNearest = false
    /// The folder's capacity in bytes (`--http-cache-size`); nil: the default (150 MB).
    public var httpCacheSize: Int?
    /// Attempts after the first for a failure worth retrying (`--retry N`, default 0): the configuration's
    /// `retryPolicy` gets `maximumAttempts = N + 1` with the default backoff.
    public var retry = 0
    /// A file of URLs, one a line (`--input FILE`; "-" is stdin), read lazily as downloads finish, after any URLs
    /// given as operands. Blank lines and lines starting with "#" are skipped.
    public var inputFile: String?
    /// `--transport curl|urlsession`; nil: curl where libcurl loads, else URLSession.
    public var transport: TransportName?
    /// `--insecure`: accept any certificate (`.allowInvalidSSLCertificates` on every request). Dangerous.
    public var insecure = false
    /// `--cacert FILE`: certificate authorities to trust instead of the system store (curl transport).
    public var caFile: String?
    /// `--proxy URL`: every request through this proxy (curl transport; default: the environment).
    public var proxy: URL?
    /// `--allow-incomplete`: an image whose data ends early is kept (its decoded part, `"incomplete": true` in
    /// `--json`) instead of failing as truncated.
    public var allowIncomplete = false
    /// `--metrics FILE`: the Prometheus text exposition of the run's metrics, written when it ends (`-`: stderr).
    public var metricsFile: String?
    /// `--verbose`: the library's debug messages (retries, waits) on stderr, beside its warnings.
    public var verbose = false

    public init() {}
}

/// Options of `imagedl decode`.
public struct DecodeOptions: Equatable, Sendable {
    /// Files (or folders, walked recursively in name order) to inspect.
    public var paths: [String] = []
    /// One JSON object per file on stdout.
    public var json = false
    /// Where to write raw RGBA8: a file for one input, a folder for several.
    public var rgbaOutput: String?
    /// Keep the pixels in the file's own colour space (`--keep-color-profile`); by default they are sRGB.
    public var keepColorProfile = false
    /// `--frame N`: dump frame N (0-based) of an animation, composited, instead of the first.
    public var frame: Int?
    /// `--allow-incomplete`: `--rgba` writes the decoded part of a file whose data ends early instead of failing.
    public var allowIncomplete = false

    public init() {}
}

/// A width × height in pixels, as given to `--thumbnail WxH`.
public struct PixelSize: Equatable, Sendable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// One `--header 'Name: value'`.
public struct HTTPHeader: Equatable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
