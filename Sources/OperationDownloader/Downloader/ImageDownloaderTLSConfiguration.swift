import Foundation

/// How the curl transport verifies servers (`ImageDownloaderConfiguration.tls`).
///
/// By default certificates are verified against the system's trust store and a failure ends the download
/// with a TLS `URLError` (`.serverCertificateHasUnknownRoot`, `.serverCertificateUntrusted`, ...): it fails
/// closed. `.allowInvalidSSLCertificates` turns verification off for one request only.
///
/// Only the curl transport reads this value: `URLSession` on Linux has no way to use a custom CA or pinned
/// keys (Docs/Linux.md), and ignores it.
public struct ImageDownloaderTLSConfiguration: Sendable, Equatable {
    /// A PEM file of certificate authorities to trust *instead of* the system store (as libcurl's
    /// `CURLOPT_CAINFO` with no CA directory). To trust a private CA as well as the public ones, concatenate
    /// the system bundle (`/etc/ssl/certs/ca-certificates.crt` on Debian) and yours into one file.
    /// nil (the default) trusts the system store.
    public var caFile: String?

    /// Public-key pins: base64 SHA-256 digests of a server's DER SubjectPublicKeyInfo (`curl --pinnedpubkey`
    /// format; a leading "sha256//" is accepted). When not empty, a server whose key matches none of them is
    /// refused with `.serverCertificateUntrusted`, even when its certificate chain is valid. Make a pin with
    /// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
    public var pinnedPublicKeyHashes: [String]

    /// Verification against the system store, no pins.
    public init(caFile: String? = nil, pinnedPublicKeyHashes: [String] = []) {
        self.caFile = caFile
        self.pinnedPublicKeyHashes = pinnedPublicKeyHashes
    }

    /// The system store, no pins (the default).
    public static let systemDefault = ImageDownloaderTLSConfiguration()

    /// The pins in libcurl's `CURLOPT_PINNEDPUBLICKEY` form ("sha256//a;sha256//b"), or nil without pins.
    var curlPinnedPublicKey: String? {
        let pins = pinnedPublicKeyHashes
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .map { $0.hasPrefix("sha256//") ? $0 : "sha256//" + $0 }
        return pins.isEmpty ? nil : pins.joined(separator: ";")
    }
}
