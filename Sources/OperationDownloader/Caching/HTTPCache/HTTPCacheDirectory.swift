import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system access for the disk cache. Several processes may share a directory, so every write is a
/// complete file renamed into place (readers see the old or the new entry, never half of one); what is read
/// is validated above (`HTTPCacheLayer`, by `HTTPCacheEntryFile`). Stateless: safe to call from any thread.
struct HTTPCacheDirectory: Sendable {
    static let entryExtension = ".odhc"
    static let temporaryPrefix = ".tmp-"
    /// Temporary files older than this belong to a writer that died; younger ones may be another process's
    /// write in progress.
    static let abandonedTemporaryAge: TimeInterval = 3600
    /// Disk usage is counted in whole blocks of this size, so that many small entries are not under-counted.
    static let blockSize = 4096

    /// Which file a read or write touched: a replaced entry (rename) has a new identity, a touched one not.
    struct FileIdentity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
        let size: Int
    }

    /// One entry file as seen by a directory scan.
    struct ScannedFile: Sendable {
        let name: String
        let diskCost: Int
        let modified: TimeInterval
    }

    enum ReadResult {
        /// The file's bytes (not validated: that is the reader's part) and which file they came from.
        case bytes(Data, FileIdentity)
        case missing
    }

    let url: URL
    /// `url.path`, made once: every read, `stat` and write builds a path from it.
    private let path: String

    init(url: URL) {
        self.url = url
        self.path = url.path
    }

    func entryPath(_ name: String) -> String { path + "/" + name }

    static func diskCost(ofFileSize size: Int) -> Int {
        let blocks = size / blockSize + (size % blockSize == 0 ? 0 : 1)
        return max(1, blocks) * blockSize
    }

    static func isEntryName(_ name: String) -> Bool {
        guard name.hasSuffix(entryExtension) else { return false }
        let stem = name.utf8.dropLast(entryExtension.utf8.count)
        return stem.count == 64 && stem.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    // MARK: Reading

    /// Reads the file `name`; files over `maximumSize` bytes are not read.
    func read(_ name: String, maximumSize: Int) -> ReadResult {
        let filePath = entryPath(name)
        let fd = open(filePath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .missing }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        guard let identity = Self.identity(fd: fd) else { return .missing }
        // Not removed: a cache with a larger capacity sharing the directory may have written it legitimately;
        // trimming removes it in time.
        guard identity.size <= maximumSize else { return .missing }
        do {
            return .bytes(try handle.readToEnd() ?? Data(), identity)
        } catch {
            return .missing
        }
    }

    /// The identity of the file `name` now, or nil when it is gone.
    func identity(of name: String) -> FileIdentity? {
        var info = stat()
        guard stat(entryPath(name), &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
                            size: Int(truncatingIfNeeded: info.st_size))
    }

    /// Marks `name` as just used, for least-recently-used trimming (its modification time is set to now).
    func touch(_ name: String) {
        _ = utimensat(AT_FDCWD, entryPath(name), nil, 0)
    }

    // MARK: Writing

    /// Creates the directory if needed.
    func create() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `data` to a new temporary file in the directory; `commit` renames it into place as an entry, so
    /// readers see the old entry or the new one, never half of one.
    ///
    /// No fsync (Foundation's `Data.write` does one, which costs milliseconds per entry): after a crash an
    /// entry may be empty or short, and the format's lengths and checksums make that a discarded miss.
    func writeTemporary(_ data: Data) throws -> (path: String, identity: FileIdentity) {
        let temporary = path + "/" + Self.temporaryPrefix + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.posixError(errno, temporary) }
        var identity: FileIdentity?
        var failure: Int32 = 0
        data.withUnsafeBytes { raw in
            var offset = 0
            // Bounded: every pass writes at least one byte or ends the loop (EINTR retries are rare).
            var interruptions = 0
            while offset < raw.count, let base = raw.baseAddress {
                let written = Self.systemWrite(fd, base + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR, interruptions < 100 {
                    interruptions += 1
                } else {
                    failure = written < 0 ? errno : ENOSPC
                    return
                }
            }
            identity = Self.identity(fd: fd)
        }
        if close(fd) != 0, failure == 0 { failure = errno }
        guard failure == 0, let identity, identity.size == data.count else {
            _ = unlink(temporary)
            throw Self.posixError(failure == 0 ? EIO : failure, temporary)
        }
        return (temporary, identity)
    }

    /// Renames the temporary file `temporary` into place as entry `name` (removed if that fails).
    func commit(_ temporary: String, as name: String) throws {
        guard rename(temporary, entryPath(name)) == 0 else {
            let renameError = errno
            _ = unlink(temporary)
            throw Self.posixError(renameError, entryPath(name))
        }
    }

    /// Removes a temporary file that will not be committed.
    func discard(_ temporary: String) {
        _ = unlink(temporary)
    }

    private static func posixError(_ code: Int32, _ path: String) -> any Error {
        let message = String(cString: strerror(code))
        return CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: message])
    }

    /// Removes `name` unless another writer has replaced it since it was read as `identity`.
    func removeIfUnchanged(_ name: String, identity: FileIdentity) {
        guard self.identity(of: name) == identity else { return }
        _ = unlink(entryPath(name))
    }

    func remove(_ name: String) {
        _ = unlink(entryPath(name))
    }

    // MARK: Scanning

    /// Every entry file, and removes abandoned temporary files on the way. Files with other names
    /// (the directory may have been shared by mistake) are neither counted nor touched.
    func scan(now: Date = Date()) -> [ScannedFile] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var files: [ScannedFile] = []
        files.reserveCapacity(names.count)
        for name in names {
            var info = stat()
            let isEntry = Self.isEntryName(name)
            let isTemporary = name.hasPrefix(Self.temporaryPrefix)
            guard isEntry || isTemporary, stat(entryPath(name), &info) == 0,
                  (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let modified = Self.modificationTime(info)
            if isTemporary {
                if now.timeIntervalSince1970 - modified > Self.abandonedTemporaryAge { remove(name) }
                continue
            }
            files.append(ScannedFile(name: name, diskCost: Self.diskCost(ofFileSize: Int(truncatingIfNeeded: info.st_size)),
                                     modified: modified))
        }
        return files
    }

    /// Removes every entry and temporary file (only names this cache writes).
    func removeAllEntries() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where Self.isEntryName(name) || name.hasPrefix(Self.temporaryPrefix) {
            remove(name)
        }
    }

    // MARK: system call helpers

    private static func identity(fd: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
                            size: Int(truncatingIfNeeded: info.st_size))
    }

    /// `write(2)`, named apart from this type's `write(_:as:)`.
    private static func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.write(fd, buffer, count)
        #elseif canImport(Musl)
        return Musl.write(fd, buffer, count)
        #else
        return Darwin.write(fd, buffer, count)
        #endif
    }

    private static func modificationTime(_ info: stat) -> TimeInterval {
        #if canImport(Darwin)
        let spec = info.st_mtimespec
        #else
        let spec = info.st_mtim
        #endif
        return TimeInterval(spec.tv_sec) + TimeInterval(spec.tv_nsec) / 1_000_000_000
    }
}
