import CCurl

/// One libcurl easy handle and its error buffer. Used on the curl thread only (libcurl handles are not
/// thread-safe); a plain value so that passing it around costs nothing.
struct CurlEasyHandle {
    let handle: OpaquePointer
    /// CURLOPT_ERRORBUFFER: libcurl's message for the last failure (CURL_ERROR_SIZE bytes).
    let errorBuffer: UnsafeMutablePointer<CChar>
    static let errorBufferSize = 256

    // Typed setters and getters over the C wrappers. libcurl's option and info numbers come from ccurl.h.

    @discardableResult
    func set(_ option: Int, _ value: Int) -> Int32 {
        ccurl_easy_setopt_long(handle, Int32(option), value)
    }

    @discardableResult
    func set(_ option: Int, offset value: Int64) -> Int32 {
        ccurl_easy_setopt_off(handle, Int32(option), value)
    }

    /// A string option (libcurl copies it).
    @discardableResult
    func set(_ option: Int, _ value: String) -> Int32 {
        value.withCString { ccurl_easy_setopt_pointer(handle, Int32(option), $0) }
    }

    /// A pointer option: a list, a user pointer, or NULL to restore the default.
    @discardableResult
    func set(_ option: Int, pointer value: UnsafeRawPointer?) -> Int32 {
        ccurl_easy_setopt_pointer(handle, Int32(option), value)
    }

    func long(_ info: Int) -> Int? {
        var value = 0
        return ccurl_easy_getinfo_long(handle, Int32(info), &value) == 0 ? value : nil
    }

    func offset(_ info: Int) -> Int64? {
        var value: Int64 = 0
        return ccurl_easy_getinfo_off(handle, Int32(info), &value) == 0 ? value : nil
    }

    func string(_ info: Int) -> String? {
        var value: UnsafePointer<CChar>?
        guard ccurl_easy_getinfo_string(handle, Int32(info), &value) == 0, let value else { return nil }
        return String(cString: value)
    }

    /// The error buffer's text ("" when libcurl wrote none).
    var errorMessage: String { String(cString: errorBuffer) }
}

/// Easy handles kept for reuse: `curl_easy_reset` clears a handle's options but keeps its buffers, and the
/// connections live in the multi handle's cache either way, so reuse saves the set-up of each transfer.
/// Curl thread only.
struct CurlEasyPool {
    private var idle: [CurlEasyHandle] = []
    /// Handles kept at most; more are cleaned up when returned.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// An idle handle, or a new one (nil only when libcurl cannot allocate one).
    mutating func take() -> CurlEasyHandle? {
        if let handle = idle.popLast() { return handle }
        guard let handle = ccurl_easy_init() else { return nil }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: CurlEasyHandle.errorBufferSize)
        buffer.initialize(repeating: 0, count: CurlEasyHandle.errorBufferSize)
        return CurlEasyHandle(handle: handle, errorBuffer: buffer)
    }

    /// Takes back a handle that is in no multi handle any more.
    mutating func give(_ easy: CurlEasyHandle) {
        guard idle.count < capacity else {
            Self.destroy(easy)
            return
        }
        ccurl_easy_reset(easy.handle)
        idle.append(easy)
    }

    /// Cleans up every idle handle (when the transport ends).
    mutating func drain() {
        for easy in idle { Self.destroy(easy) }
        idle.removeAll()
    }

    private static func destroy(_ easy: CurlEasyHandle) {
        ccurl_easy_cleanup(easy.handle)
        easy.errorBuffer.deallocate()
    }
}
