import Decoding
import Foundation

// The machine-level requirements every test target shares. A target adds its own (`.libcurl` in
// OperationDownloaderTests, through the package's own loader) as `extension Requirement`.
extension Requirement {
    public static let libwebp = Requirement("libwebp", install: "apt-get install libwebp7 libwebpdemux2 libwebpmux3") {
        WebPCoder().unavailableReason
    }
    /// libwebp's encoder (WebPEncodeRGBA and friends), for the tests that write WebP.
    public static let webpEncoder = Requirement("libwebp encoder", install: "apt-get install libwebp7") {
        WebPCoder().encoderUnavailableReason
    }
    public static let libheif = Requirement("libheif", install: "apt-get install libheif1") {
        HEIFCoder().unavailableReason
    }
    /// libavif (soname 16 or 15) in a version whose structures the shim mirrors.
    public static let libavif = Requirement("libavif", install: "apt-get install libavif15") {
        AVIFCoder().unavailableReason
    }
    /// An AV1 encoder inside libavif, for the tests that write AVIF.
    public static let avifEncoder = Requirement("libavif's AV1 encoder", install: "apt-get install libavif15 (Debian's has aom, rav1e and SVT-AV1)") {
        AVIFCoder().encoderUnavailableReason
    }
    /// libavif's command-line tools, which make the AVIF test files and their references.
    public static let avifTools = Requirement("avifenc and avifdec", install: "apt-get install libavif-bin") {
        let missing = ["avifenc", "avifdec"].filter { Executables.find($0) == nil }
        return missing.isEmpty ? nil : "no \(missing.joined(separator: " or ")) on PATH"
    }
    public static let libtiff = Requirement("libtiff", install: "apt-get install libtiff6") {
        TIFFCoder().unavailableReason
    }
    public static let libjxl = Requirement("libjxl", install: "apt-get install libjxl0.7") {
        JXLCoder().unavailableReason
    }
    /// libjxl's command-line encoder and decoder, which make the JPEG XL test files and their references.
    public static let jxlTools = Requirement("cjxl and djxl", install: "apt-get install libjxl-tools") {
        ["cjxl", "djxl"].first { Executables.find($0) == nil }.map { "no \($0) on PATH" }
    }
    public static let lcms2 = Requirement("lcms2", install: "apt-get install liblcms2-2") {
        ColorManagement.unavailableReason
    }
    /// Debian's nginx binary, unpacked by `.ci/run` and found through `OD_NGINX`.
    public static let nginx = Requirement("nginx", install: "run .ci/run (it unpacks Debian's nginx and sets OD_NGINX)") {
        guard let path = ProcessInfo.processInfo.environment["OD_NGINX"] else { return "OD_NGINX is not set" }
        return FileManager.default.isExecutableFile(atPath: path) ? nil : "OD_NGINX=\(path) is not executable"
    }
    public static let openssl = Requirement("openssl", install: "apt-get install openssl") {
        Executables.find("openssl") == nil ? "no openssl on PATH" : nil
    }
    /// Prometheus' `promtool`, from `OD_PROMTOOL` or PATH (`.ci/run` unpacks Debian's prometheus package for it).
    public static let promtool = Requirement("promtool", install: "run .ci/run (it unpacks promtool from Debian's prometheus package and sets OD_PROMTOOL)") {
        promtoolPath == nil ? "no promtool (OD_PROMTOOL or PATH)" : nil
    }
    /// `redis-server`, from `OD_REDIS_SERVER` or PATH.
    public static let redisServer = Requirement("redis-server", install: "apt-get install redis-server") {
        redisServerPath == nil ? "no redis-server (OD_REDIS_SERVER or PATH)" : nil
    }
    /// A socket can bind ::1.
    public static let ipv6Loopback = Requirement("IPv6 loopback", install: "enable IPv6 on lo (sysctl net.ipv6.conf.lo.disable_ipv6=0)") {
        IPv6Loopback.bindError
    }
    /// The shared decoder corpus: `../shared/corpus` beside the package, or `$OPERATIONDOWNLOADER_CORPUS`.
    public static let corpus = Requirement("the decoder corpus", install: "check out ../shared beside the package, or set OPERATIONDOWNLOADER_CORPUS") {
        SharedCorpus.root == nil ? "no expected.json at \(SharedCorpus.candidate.path)" : nil
    }

    /// The promtool binary, or nil.
    public static var promtoolPath: String? {
        if let path = ProcessInfo.processInfo.environment["OD_PROMTOOL"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return Executables.find("promtool")
    }

    /// The redis-server binary to start, or nil.
    public static var redisServerPath: String? {
        if let path = ProcessInfo.processInfo.environment["OD_REDIS_SERVER"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return Executables.find("redis-server")
    }
}

/// Finds programs on PATH (and the sbin folders Debian keeps servers in).
public enum Executables {
    public static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"]
        return folders.lazy.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// Where the shared corpus is.
public enum SharedCorpus {
    static let candidate: URL = {
        if let env = ProcessInfo.processInfo.environment["OPERATIONDOWNLOADER_CORPUS"] { return URL(fileURLWithPath: env) }
        // Tests/TestRequirements/Requirements.swift → the package root → its parent → shared/corpus
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }()

    /// The corpus folder, or nil when it has no expected.json.
    public static let root: URL? = {
        FileManager.default.fileExists(atPath: candidate.appendingPathComponent("expected.json").path) ? candidate : nil
    }()
}

enum IPv6Loopback {
    /// nil when a TCP socket binds [::1]:0, else why not.
    static let bindError: String? = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return "socket(AF_INET6) failed: errno \(errno)" }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        return result == 0 ? nil : "bind([::1]:0) failed: errno \(errno)"
    }()
}
