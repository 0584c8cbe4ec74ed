import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// TLS through the curl transport against fixture servers with certificates the tests make: verified with
/// the CA configured, refused (fails closed) without it or for a self-signed or misnamed server, accepted for
/// one request with `allowsInvalidCertificates`, and refused on a public-key pin mismatch.
@Suite(.requires(.libcurl, .openssl))
struct CurlTLSTests {
    /// The CA-signed server and the self-signed one, started once for the suite.
    static let servers: Result<(signed: LaunchedFixtureServer, selfSigned: LaunchedFixtureServer), any Error> = Result {
        let certificates = try TestCertificates.shared.get()
        let signed = try LaunchedFixtureServer(
            arguments: ["--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey], scheme: "https")
        let selfSigned = try LaunchedFixtureServer(
            arguments: ["--tls-cert", certificates.selfSignedCertificate, "--tls-key", certificates.selfSignedKey], scheme: "https")
        return (signed, selfSigned)
    }

    private func setup() throws -> (TestCertificates, LaunchedFixtureServer, LaunchedFixtureServer) {
        let certificates = try TestCertificates.shared.get()
        let servers = try Self.servers.get()
        return (certificates, servers.signed, servers.selfSigned)
    }

    @Test func verifiedWithTheConfiguredCA() async throws {
        let (certificates, signed, _) = try setup()
        let harness = CurlHarness { $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile) }
        defer { harness.invalidate() }
        let client = await harness.run(signed.url("/images/tiny.png?tag=\(newTag())"))
        #expect(client.error == nil, "\(String(describing: client.error))")
        #expect(client.body == (try FixtureServer.fixtureData("tiny.png")))
        #expect(client.metrics?.secureConnectionDuration != nil)
        #expect(client.metrics?.httpVersion == "1.1")
    }

    /// The system store does not know the test CA: refused before any request is sent.
    @Test func unknownCAFailsClosed() async throws {
        let (_, signed, _) = try setup()
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = await harness.run(signed.url("/images/tiny.png?tag=\(tag)"))
        #expect(client.urlError?.code == .serverCertificateHasUnknownRoot, "\(String(describing: client.error))")
        #expect(client.events == [.complete(.serverCertificateHasUnknownRoot)], "no response, no body")
        #expect(client.urlError?.localizedDescription.contains("ImageDownloaderConfiguration.tls") == true)
    }

    @Test func selfSignedServerFailsClosedEvenWithACA() async throws {
        let (certificates, _, selfSigned) = try setup()
        let harness = CurlHarness { $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile) }
        defer { harness.invalidate() }
        let client = await harness.run(selfSigned.url("/images/tiny.png?tag=\(newTag())"))
        #expect(client.urlError?.code == .serverCertificateHasUnknownRoot, "\(String(describing: client.error))")
        #expect(client.receivedBytes == 0)
    }

    @Test func hostNameMismatchFailsClosed() async throws {
        let (certificates, signed, _) = try setup()
        let harness = CurlHarness { $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile) }
        defer { harness.invalidate() }
        let url = try #require(URL(string: "https://localhost:\(signed.launched.port)/images/tiny.png?tag=\(newTag())"))
        let client = await harness.run(url)
        #expect(client.urlError?.code == .serverCertificateUntrusted, "\(String(describing: client.error))")
    }

    /// `.allowInvalidSSLCertificates` is per request: the next request on the same transport (same host)
    /// is verified again and refused (libcurl does not reuse the unverified connection for it).
    @Test func allowingInvalidCertificatesIsForThatTransferOnly() async throws {
        let (_, _, selfSigned) = try setup()
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let allowed = await harness.run(selfSigned.url("/images/tiny.png?tag=\(tag)")) { $0.allowsInvalidCertificates = true }
        #expect(allowed.error == nil, "\(String(describing: allowed.error))")
        #expect(allowed.body == (try FixtureServer.fixtureData("tiny.png")))
        let verified = await harness.run(selfSigned.url("/images/tiny.png?tag=\(tag)&again=1"))
        #expect(verified.urlError?.code == .serverCertificateHasUnknownRoot, "\(String(describing: verified.error))")
        let again = await harness.run(selfSigned.url("/images/tiny.png?tag=\(tag)&third=1")) { $0.allowsInvalidCertificates = true }
        #expect(again.error == nil)
    }

    @Test func publicKeyPins() async throws {
        let (certificates, signed, selfSigned) = try setup()
        let matching = CurlHarness {
            $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile, pinnedPublicKeyHashes: ["sha256//" + certificates.serverKeyPin])
        }
        defer { matching.invalidate() }
        let pinned = await matching.run(signed.url("/images/tiny.png?tag=\(newTag())"))
        #expect(pinned.error == nil, "\(String(describing: pinned.error))")

        let mismatching = CurlHarness {
            $0.tls = ImageDownloaderTLSConfiguration(caFile: certificates.caFile, pinnedPublicKeyHashes: [certificates.selfSignedKeyPin])
        }
        defer { mismatching.invalidate() }
        let refused = await mismatching.run(signed.url("/images/tiny.png?tag=\(newTag())"))
        #expect(refused.urlError?.code == .serverCertificateUntrusted, "\(String(describing: refused.error))")
        #expect(refused.receivedBytes == 0)
        // A pin holds even when certificate verification is off for the request.
        let stillRefused = await matching.run(selfSigned.url("/images/tiny.png?tag=\(newTag())")) { $0.allowsInvalidCertificates = true }
        #expect(stillRefused.urlError?.code == .serverCertificateUntrusted, "\(String(describing: stillRefused.error))")
    }

    @Test func unreadableCAFileFailsClearly() async throws {
        let (_, signed, _) = try setup()
        let harness = CurlHarness { $0.tls = ImageDownloaderTLSConfiguration(caFile: "/nonexistent/ca.pem") }
        defer { harness.invalidate() }
        let client = await harness.run(signed.url("/images/tiny.png?tag=\(newTag())"))
        #expect(client.urlError != nil)
        #expect(client.receivedBytes == 0)
        #expect(client.urlError?.code == .secureConnectionFailed || client.urlError?.code == .serverCertificateHasUnknownRoot,
                "\(String(describing: client.error))")
    }

    @Test func pinFormat() {
        #expect(ImageDownloaderTLSConfiguration().curlPinnedPublicKey == nil)
        #expect(ImageDownloaderTLSConfiguration(pinnedPublicKeyHashes: ["abc=", " sha256//def= ", ""]).curlPinnedPublicKey
                == "sha256//abc=;sha256//def=")
    }
}
