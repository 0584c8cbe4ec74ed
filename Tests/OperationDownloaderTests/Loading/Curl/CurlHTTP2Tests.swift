import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// HTTP/2 over TLS against Debian's nginx (`OD_NGINX`, set by .ci/run after unpacking the package): many
/// transfers to one host share ONE connection.
@Suite(.requires(.libcurl, .openssl, .nginx))
struct CurlHTTP2Tests {
    @Test func manyTransfersMultiplexOverOneConnection() async throws {
        let certificates = try TestCertificates.shared.get()
        let binary = try #require(NginxServer.binary)
        let body = Data((0..<30_000).map { UInt8($0 % 251) })
        let files = Dictionary(uniqueKeysWithValues: (0..<8).map { ("image-\($0).jpg", body) })
        let nginx = try NginxServer(binary: binary, certificate: certificates.serverCertificate, key: certificates.serverKey, files: files)
        defer { nginx.stop() }

        let harness = CurlHarness {
            $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile)
            $0.maximumConnectionsPerHost = 6
        }
        defer { harness.invalidate() }
        let count = 40
        let clients = (0..<count).map { _ in RecordingTransferClient() }
        for (index, client) in clients.enumerated() {
            harness.start(nginx.url("/image-\(index % 8).jpg?n=\(index)"), client: client) { $0.priority = index.isMultiple(of: 2) ? 0.75 : 0.25 }
        }
        for client in clients { await client.waitForCompletion() }
        #expect(clients.allSatisfy { $0.error == nil && $0.body == body }, "\(clients.compactMap(\.error).first.map { "\($0)" } ?? "")")
        #expect(clients.allSatisfy { $0.metrics?.httpVersion == "2" })
        #expect(clients.allSatisfy { $0.lastResponse?.statusCode == 200 })
        #expect(clients.filter { $0.metrics?.connectionReused == false }.count == 1, "one connection was opened")

        let lines = nginx.logLines
        #expect(lines.count == count)
        #expect(Set(lines.map { $0.first ?? "" }).count == 1, "every request on one connection: \(Set(lines.map { $0.first ?? "" }))")
        #expect(lines.allSatisfy { $0.count > 1 && $0[1] == "HTTP/2.0" })
    }
}
