import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing
import TestImages
import TestRequirements

/// Security properties: TLS fails closed, credentials stay with their host, decompression bombs are refused
/// before their pixels are allocated, and only http(s) and data: URLs are ever requested.
@Suite struct SecurityTests {
    let server = FixtureServer.shared

    private static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    // MARK: - TLS

    /// A self-signed certificate is rejected: a typed network error, never an image. With
    /// `.allowInvalidSSLCertificates`, URLSession on Linux (no per-request trust override) fails saying the
    /// platform cannot do it; the curl transport skips verification for that request and gets the image.
    @Test(.requires(.openssl), arguments: TestTransports.all)
    func selfSignedServerIsRejected(_ transport: ImageDownloaderTransport) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("od-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                             "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try ChildProcesses.run(openssl)
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0, "openssl req failed")

        let launched = try FixtureServer.launch(extraArguments: ["--tls-cert", cert, "--tls-key", key]).get()
        defer {
            // Closing its stdin makes the server exit.
            try? launched.stdin.fileHandleForWriting.close()
            launched.process.waitUntilExit()
        }
        let (downloader, queue) = makeDownloader(transport) { $0.downloadTimeout = 10 }
        let url = try #require(URL(string: "https://127.0.0.1:\(launched.port)/images/tiny.png?tag=\(newTag())"))

        let plain = DownloadRecorder()
        downloader.downloadImage(url, progress: plain.progress, completed: plain.completed)
        await plain.waitForCompletion()
        let allowing = DownloadRecorder()
        downloader.downloadImage(url, options: .allowInvalidSSLCertificates, context: ImageDownloaderContext(cacheIdentifier: "allow"),
                                 completed: allowing.completed)
        await allowing.waitForCompletion()
        await drain(queue)

        #expect(plain.finals.count == 1)
        #expect(plain.final?.image == nil && plain.final?.data == nil)
        #expect(plain.downloaderError?.caseName.hasPrefix("network") == true, "got \(String(describing: plain.error))")
        #expect(plain.progressList.allSatisfy { $0.0 == 0 }, "no body byte may arrive over an untrusted connection")
        if transport == .curl {
            #expect(plain.downloaderError?.caseName == "network-1203", "unknown root: got \(String(describing: plain.error))")
            #expect(allowing.final?.image?.width == 1, "got \(String(describing: allowing.error))")
        } else {
            #expect(allowing.final?.image == nil)
            #if canImport(FoundationNetworking)
            #expect(allowing.downloaderError?.caseName == "unsupportedOnPlatform", "got \(String(describing: allowing.error))")
            #endif
        }

        // The downloader is unaffected.
        let next = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(newTag())"), completed: next.completed)
        await next.waitForCompletion()
        #expect(next.final?.image?.width == 1)
    }

    // MARK: - Credentials across redirects

    /// The configured credential answers a challenge from the original host only.
    @Test(arguments: TestTransports.all)
    func credentialIsNotSentToAnotherHostAfterRedirect(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) {
            $0.username = "user"
            $0.password = "secret"
        }
        let tag = newTag()
        let target = server.localhostURL("/basic-auth/user/secret/tiny.png?tag=\(tag)&final=1").absoluteString
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/redirect/0?tag=\(tag)&to=\(Self.encoded(target))"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "status401", "got \(String(describing: recorder.error))")
        let logged = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(logged.filter { $0.query["final"] == "1" }.allSatisfy { $0.headers["authorization"] == nil })

        // Same host, no redirect: the credential is used.
        let direct = try await downloader.image(for: server.url("/basic-auth/user/secret/tiny.png?tag=\(tag)&direct=1"))
        #expect(direct.image?.width == 1)
    }

    /// Same host after a redirect: Apple platforms and the curl transport answer the challenge; corelibs
    /// Foundation would restart the original request and loop until -1007, so with URLSession on Linux the
    /// downloader reports the 401 at once.
    @Test(arguments: TestTransports.all)
    func credentialAfterSameHostRedirect(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) {
            $0.username = "user"
            $0.password = "secret"
        }
        let tag = newTag()
        let sameHost = server.url("/basic-auth/user/secret/tiny.png?tag=\(tag)&same=1").absoluteString
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/redirect/1?tag=\(tag)&to=\(Self.encoded(sameHost))"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #if canImport(FoundationNetworking)
        if transport == .curl {
            #expect(recorder.final?.image?.width == 1, "got \(String(describing: recorder.error))")
            // Two redirects, the 401, the request with the credential.
            let logged = await server.awaitRequests(tag: tag, count: 4, finished: true)
            #expect(logged.count == 4, "\(logged.map(\.path))")
            #expect(logged.last?.headers["authorization"] != nil)
        } else {
            #expect(recorder.downloaderError?.caseName == "status401", "got \(String(describing: recorder.error))")
            let logged = await server.awaitRequests(tag: tag, count: 3, finished: true)
            #expect(logged.count == 3, "\(logged.map(\.path))")
        }
        #else
        #expect(recorder.final?.image?.width == 1)
        #endif
    }

    /// Credentials written into the URL (`http://user:password@host/`) stay with that host too.
    @Test(arguments: TestTransports.all)
    func urlUserInfoIsNotSentToAnotherHostAfterRedirect(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let target = server.localhostURL("/images/tiny.png?tag=\(tag)&final=1").absoluteString
        let start = server.url("/redirect/0?tag=\(tag)&to=\(Self.encoded(target))").absoluteString
            .replacingOccurrences(of: "http://127.0.0.1", with: "http://user:secret@127.0.0.1")
        _ = try? await downloader.image(for: try #require(URL(string: start)))
        let logged = await server.awaitRequests(tag: tag, count: 2, finished: true)
        let final = logged.filter { $0.query["final"] == "1" }
        #expect(final.count == 1)
        #expect(final.allSatisfy { $0.headers["authorization"] == nil }, "sent: \(final.map { $0.headers["authorization"] ?? "-" })")
    }

    /// An Authorization header from the request itself or from a request modifier is dropped on a
    /// cross-host redirect (the downloader's own header is covered by ModifierAndRedirectTests).
    @Test(arguments: TestTransports.all)
    func requestAndModifierAuthorizationAreDroppedAcrossHosts(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let tag = newTag()
        let target = server.localhostURL("/images/tiny.png?tag=\(tag)&final=1").absoluteString
        var request = URLRequest(url: server.url("/redirect/1?tag=\(tag)&to=\(Self.encoded(target))"))
        request.setValue("Bearer request-token", forHTTPHeaderField: "Authorization")
        _ = try await downloader.image(for: try #require(request.url), context: ImageDownloaderContext(
            requestModifier: ImageDownloaderRequestModifierBlock { request in
                var request = request
                request.setValue("Bearer modifier-token", forHTTPHeaderField: "Authorization")
                return request
            }))
        let logged = await server.awaitRequests(tag: tag, count: 3, finished: true)
        #expect(logged.count == 3)
        #expect(logged.filter { $0.query["final"] == nil }.allSatisfy { $0.headers["authorization"] == "Bearer modifier-token" })
        #expect(logged.filter { $0.query["final"] == "1" }.allSatisfy { $0.headers["authorization"] == nil })
    }

    // MARK: - Schemes

    /// Only http, https and data: URLs are requested; everything else fails synchronously with `.invalidURL`.
    @Test func nonHTTPSchemesAreNeverRequested() async throws {
        let (downloader, _) = makeDownloader()
        let refused = [
            "file:///etc/passwd", "ftp://127.0.0.1/tiny.png", "gopher://127.0.0.1:70/", "javascript:alert(1)",
            "unix:///var/run/docker.sock", "custom-scheme://host/x.png", "http:///no-host.png", "//127.0.0.1/x.png",
            "ws://127.0.0.1:\(server.port)/images/tiny.png", "dict://127.0.0.1:11211/stat",
        ]
        for string in refused {
            let recorder = DownloadRecorder()
            let url = URL(string: string)
            let token = downloader.downloadImage(url, completed: recorder.completed)
            #expect(token == nil, "\(string)")
            #expect(recorder.finals.count == 1, "\(string): answered synchronously")
            #expect(recorder.downloaderError?.caseName == "invalidURL", "\(string): \(String(describing: recorder.error))")
            if let url {
                let viaRequest = DownloadRecorder()
                #expect(downloader.downloadImage(with: URLRequest(url: url), completed: viaRequest.completed) == nil)
                #expect(viaRequest.downloaderError?.caseName == "invalidURL")
            }
        }
    }

    /// data: URLs are allowed (SDWebImage decodes them too): decoded like any body, with the same limits.
    @Test func dataURLsAreDecodedWithTheSameLimits() async throws {
        let png = try FixtureServer.fixtureData("tiny.png")
        let (downloader, _) = makeDownloader()
        let url = try #require(URL(string: "data:image/png;base64," + png.base64EncodedString()))
        let result = try await downloader.image(for: url)
        #expect(result.image?.width == 1)

        let (limited, _) = makeDownloader { $0.maximumResponseSize = 16 }
        let recorder = DownloadRecorder()
        limited.downloadImage(url, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "responseTooLarge", "got \(String(describing: recorder.error))")
    }

    /// A redirect to a non-http(s) scheme is never followed. corelibs Foundation resolves a Location without
    /// a host (`file:///etc/hostname`, `data:...`) as a path on the redirecting server, which then answers 404;
    /// one with a host (`ftp://host/...`) reaches the downloader, which refuses it. The curl transport proposes
    /// every Location as it is, so the downloader refuses them all (-1002).
    @Test(arguments: [
        ("file:///etc/hostname", "status404"), ("data:image/png;base64,iVBORw0KGgo=", "status404"),
        ("ftp://127.0.0.1/tiny.png", "network\(URLError.Code.unsupportedURL.rawValue)"),
        ("gopher://127.0.0.1:70/x", "network\(URLError.Code.unsupportedURL.rawValue)"),
    ], TestTransports.all)
    func redirectToAnotherSchemeIsRefused(_ redirect: (String, String), _ transport: ImageDownloaderTransport) async throws {
        let (location, onURLSession) = redirect
        let expected = transport == .curl ? "network\(URLError.Code.unsupportedURL.rawValue)" : onURLSession
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/redirect/0?tag=\(tag)&to=\(Self.encoded(location))"), completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.finals.count == 1)
        #expect(recorder.final?.data == nil)
        #expect(recorder.downloaderError?.caseName == expected, "\(location): got \(String(describing: recorder.error))")
        let logged = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(logged.allSatisfy { $0.path.hasPrefix("/redirect/") || $0.status == 404 })
    }

    // MARK: - HTTP cache

    /// Hostile URLs cannot make the HTTP cache write outside its directory: every file it creates is
    /// `<64 hex digits>.odhc` directly inside the directory, and nothing appears beside it.
    @Test func httpCacheEntriesStayInsideTheirDirectory() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("od-cache-escape-\(UUID().uuidString)")
        let directory = root.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let cache = HTTPImageCache(directory: directory)
        let (downloader, _) = makeDownloader {
            $0.httpCache = cache
            $0.imageCache = nil
        }
        let tag = newTag()
        let hostile = [
            "p=../../escape", "p=..%2F..%2Fescape", "p=%2Fetc%2Fpasswd", "p=a%00b", "p=" + String(repeating: "x", count: 4000),
            "p=%2E%2E%2F%2E%2E%2Fescape.odhc", "p=C:%5Cwindows", "p=%0D%0Aheader",
        ]
        for (index, query) in hostile.enumerated() {
            let url = server.url("/images/tiny.png?cc=max-age%3D600&tag=\(tag)&i=\(index)&\(query)")
            let result = try await downloader.image(for: url, options: .useURLCache)
            #expect(result.image?.width == 1)
        }
        // The same URL again is served from the cache (the entries were written).
        let again = server.url("/images/tiny.png?cc=max-age%3D600&tag=\(tag)&i=0&\(hostile[0])")
        _ = try await downloader.image(for: again, options: .useURLCache)
        #expect(server.requests(tag: tag).count == hostile.count)

        let beside = try FileManager.default.contentsOfDirectory(atPath: root.path)
        #expect(beside == ["cache"], "files beside the cache directory: \(beside)")
        // Besides the entries: temporary files being renamed, and the usage count all processes share.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".tmp-") && $0 != ".odhc-usage" }
        #expect(names.count == hostile.count, "\(names)")
        let hex = Set("0123456789abcdef")
        for name in names {
            let stem = name.hasSuffix(".odhc") ? String(name.dropLast(5)) : name
            #expect(stem.count == 64 && stem.allSatisfy { hex.contains($0) }, "unexpected cache file \(name)")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory) && !isDirectory.boolValue)
        }
    }

    // MARK: - Decompression bombs

    /// A PNG whose header claims 30000 x 30000 (3.6 GB of RGBA) fails at the header, without the allocation.
    @Test func pixelBombIsRejectedBeforeAllocation() async throws {
        let bomb = SecurityFixtures.pngHeader(width: 30_000, height: 30_000)
        let (downloader, _) = makeDownloader()
        let url = try #require(URL(string: "data:image/png;base64," + bomb.base64EncodedString()))
        let recorder = DownloadRecorder()
        downloader.downloadImage(url, completed: recorder.completed)
        await recorder.waitForCompletion()
        // Bad image data, with the decoder's typed cause inside (issues 12 and 20).
        #expect(recorder.downloaderError?.caseName == "badImageData", "got \(String(describing: recorder.error))")
        if case .badImageData(.decoding(let cause))? = recorder.downloaderError {
            #expect(cause == .tooLarge(width: 30_000, height: 30_000), "\(cause)")
        } else {
            Issue.record("got \(String(describing: recorder.error))")
        }
    }

    /// `maximumPixelCount` is honoured for every download (here 160 x 120 > 10,000 pixels).
    @Test func configuredPixelLimitIsHonoured() async throws {
        let (downloader, _) = makeDownloader { $0.maximumPixelCount = 10_000 }
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/image.png?tag=\(newTag())"), options: .progressiveLoad, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.badImageDataReason?.decodingError == .tooLarge(width: 160, height: 120),
                "got \(String(describing: recorder.error))")
        #expect(recorder.partials.isEmpty)
    }
}

/// Hostile inputs built in code.
enum SecurityFixtures {
    /// A PNG signature, an IHDR chunk claiming `width` x `height` 8-bit gray, an empty IDAT and IEND.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        func chunk(_ type: String, _ body: [UInt8]) {
            let typeBytes = Array(type.utf8)
            data.append(contentsOf: bigEndian(UInt32(body.count)))
            data.append(contentsOf: typeBytes)
            data.append(contentsOf: body)
            data.append(contentsOf: bigEndian(crc32(typeBytes + body)))
        }
        chunk("IHDR", bigEndian(width) + bigEndian(height) + [8, 0, 0, 0, 0])
        chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
        chunk("IEND", [])
        return data
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

}

/// The process's resident set size, from /proc (0 where /proc is missing).
enum ProcessMemory {
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
