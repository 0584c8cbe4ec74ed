import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system access for the disk cache. Several processes may share a directory, so every write is a
/// complete file renamed into place (readers see the old or the new entry, never half of one), and every
/// read is validated by `HTTPCacheEntryFile`. Stateless: safe to call from any thread.
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
        case entry(HTTPCacheEntryFile, FileIdentity)
        case missing
        /// The file exists but is not a valid entry (it has been removed).
        case discarded(String)
    }

    let url: URL
    private var path: String { url.path }

    init(url: URL) {
        self.url = url
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

    /// Reads and validates the entry file `name`; files over `maximumSize` bytes are discarded unread.
    func read(_ name: String, maximumSize: Int) -> ReadResult {
        let filePath = entryPath(name)
        let fd = open(filePath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .missing }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        guard let identity = Self.identity(fd: fd) else { return .missing }
        guard identity.size <= maximumSize else {
            removeIfUnchanged(name, identity: identity)
            return .discarded("entry larger than the cache accepts")
        }
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            return .missing
        }
        do {
            let entry = try HTTPCacheEntryFile.decode(data)
            return .entry(entry, identity)
        } catch {
            removeIfUnchanged(name, identity: identity)
            return .discarded("\(error)")
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

    /// Writes `data` as entry `name` atomically (temporary file in the same directory, then rename).
    func write(_ data: Data, as name: String) throws -> FileIdentity {
        let temporary = path + "/" + Self.temporaryPrefix + UUID().uuidString
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
            var info = stat()
            guard stat(temporary, &info) == 0, Int(truncatingIfNeeded: info.st_size) == data.count else {
                throw CocoaError(.fileWriteUnknown)
            }
            guard rename(temporary, entryPath(name)) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: entryPath(name)])
            }
            return FileIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
                                size: data.count)
        } catch {
            _ = unlink(temporary)
            throw error
        }
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

    // MARK: stat helpers

    private static func identity(fd: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
                            size: Int(truncatingIfNeeded: info.st_size))
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
