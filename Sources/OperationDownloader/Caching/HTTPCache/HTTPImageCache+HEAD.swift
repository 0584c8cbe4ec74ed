import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a 200 to HEAD tells the cache about its stored GET response (RFC 9111 §4.3.5): a HEAD response is the
/// GET response without its content.
extension HTTPImageCache {
    /// Applies `head`, a 200 to `request` (a HEAD), to the stored GET response it would have selected. A
    /// validator that differs from the stored one (ETag, or Last-Modified) means the representation changed: the
    /// stored response is removed. Otherwise, when the validators it carries match (or it carries none) and its
    /// Content-Length, if any, is the stored one, its fields update the stored ones as a 304's do (a later GET
    /// may be fresh without a request). A Content-Length that differs alone proves nothing (the stored body is
    /// kept decoded, the origin announces its coded length): the stored response is left as it is. The write
    /// is queued (the caller is on a network thread).
    func freshen(withHEAD head: HTTPURLResponse, for request: URLRequest, requestDate: Date, responseDate: Date) {
        var get = request
        get.httpMethod = "GET"
        guard head.statusCode == 200, let stored = storedResponse(for: get), stored.hasBody, !stored.isPartial else { return }
        let fields = HTTPHeaderFields(head)
        let validatorsMatch = ["ETag", "Last-Modified"].allSatisfy { name in
            guard let value = fields[name] else { return true }
            guard let storedValue = stored.headers[name] else { return false }
            return HTTPFreshness.notModifiedMatches(stored: HTTPHeaderFields([(name, storedValue)]),
                                                    notModified: HTTPHeaderFields([(name, value)]))
        }
        guard validatorsMatch else {
            layer.remove([stored.fileName], wait: false)
            return
        }
        if let length = fields["Content-Length"], length != stored.headers["Content-Length"] { return }
        _ = refreshed(with: head, for: get, stored: stored, requestDate: requestDate, responseDate: responseDate)
    }
}
