import Foundation
import TestRequirements

/// Certificates the TLS tests make with the openssl CLI, once per test process, in a temporary directory:
/// a CA, a server certificate it signed (for IP 127.0.0.1 only), a self-signed certificate, and the public-key
/// pins of both keys.
struct TestCertificates: Sendable {
    let directory: URL
    let caFile: String
    let serverCertificate: String
    let serverKey: String
    let selfSignedCertificate: String
    let selfSignedKey: String
    /// base64 SHA-256 of the server key's SubjectPublicKeyInfo (the CURLOPT_PINNEDPUBLICKEY form without "sha256//").
    let serverKeyPin: String
    let selfSignedKeyPin: String

    /// Made on first use; nil (with the reason in `failure`) when openssl failed.
    static let shared: Result<TestCertificates, TestCertificateFailure> = make()

    private static func make() -> Result<TestCertificates, TestCertificateFailure> {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("od-curl-tls-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return .failure(TestCertificateFailure(message: "cannot create \(directory.path): \(error)"))
        }
        // EC keys: quick to generate. The server certificate names IP 127.0.0.1 only (so "localhost" mismatches).
        let script = """
        set -e
        cd '\(directory.path)'
        key() { openssl req "$@" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes 2>/dev/null; }
        key -x509 -keyout ca.key -out ca.pem -days 2 -subj '/CN=OperationDownloader test CA' \\
            -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign'
        key -keyout server.key -out server.csr -subj '/CN=127.0.0.1'
        printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \\
            -extfile server.ext 2>/dev/null
        key -x509 -keyout self.key -out self.pem -days 2 -subj '/CN=127.0.0.1' -addext 'subjectAltName=IP:127.0.0.1'
        pin() { openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64; }
        pin server.pem > server.pin
        pin self.pem > self.pin
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try ChildProcesses.run(process)
        } catch {
            return .failure(TestCertificateFailure(message: "cannot run /bin/sh: \(error)"))
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(TestCertificateFailure(message: "openssl failed (status \(process.terminationStatus))"))
        }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func pin(_ name: String) -> String {
            ((try? String(contentsOfFile: path(name), encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return .success(TestCertificates(
            directory: directory, caFile: path("ca.pem"), serverCertificate: path("server.pem"), serverKey: path("server.key"),
            selfSignedCertificate: path("self.pem"), selfSignedKey: path("self.key"),
            serverKeyPin: pin("server.pin"), selfSignedKeyPin: pin("self.pin")))
    }
}

struct TestCertificateFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
