import Decoding
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `--output` files under names that never collide: each file is created exclusively (`O_EXCL`), so a
/// name taken by this run, by an earlier run or by another process at the same moment is never overwritten;
/// the next free "-2", "-3", … name is used instead.
///
/// Nothing is remembered per file (memory stays flat over millions of URLs): a small table of where each
/// name's numbering got to only saves probing, and is dropped when it grows.
struct OutputFileWriter {
    /// Why a file could not be written.
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    let folder: String
    private var nextNumber: [String: Int] = [:]

    /// Writes into `folder` (which must exist), as given (relative paths stay relative).
    init(folder: String) {
        self.folder = folder
    }

    /// Writes what `url` gave: the original bytes, or the decoded image as PNG (`--png`). Returns the path.
    mutating func save(_ image: DecodedImage, data: Data?, for url: URL, asPNG: Bool) -> Result<String, WriteError> {
        let stem = OutputNaming.stem(for: url)
        do {
            if asPNG {
                let bytes = try ImageCodersManager.shared.encode(image, format: .png)
                return .success(try write(bytes, stem: stem, extension: "png"))
            }
            guard let data else { return .failure(WriteError(description: "no data to write")) }
            return .success(try write(data, stem: stem, extension: image.format.fileExtension ?? "bin"))
        } catch let error as ImageDecodingError where error == .unsupportedFormat {
            return .failure(WriteError(description: "cannot write PNG: no PNG encoder in this build"))
        } catch let error as WriteError {
            return .failure(error)
        } catch {
            return .failure(WriteError(description: "cannot write output: \(error.localizedDescription)"))
        }
    }

    /// Writes `data` as a new file "stem.ext" (or "stem-2.ext", … when taken); returns its path. `stem` must
    /// be sanitized (`OutputNaming`).
    mutating func write(_ data: Data, stem: String, extension ext: String) throws(WriteError) -> String {
        let key = stem + "." + ext
        var number = nextNumber[key] ?? 1
        // Bounded: a million taken names means something else is wrong.
        for _ in 0..<1_000_000 {
            let path = self.path(OutputNaming.fileName(stem: stem, extension: ext, number: number))
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0 {
                let failure = errno
                guard failure == EEXIST else {
                    throw WriteError(description: "cannot create \(path): \(String(cString: strerror(failure)))")
                }
                number += 1
                continue
            }
            remember(key, next: number + 1)
            try Self.writeAll(data, to: fd, path: path)
            return path
        }
        throw WriteError(description: "cannot find a free name for \(key) in \(folder)")
    }

    private func path(_ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    private mutating func remember(_ key: String, next: Int) {
        if nextNumber.count >= 4096 { nextNumber.removeAll(keepingCapacity: true) }
        nextNumber[key] = next
    }

    /// Writes every byte and closes; on failure removes the partial file.
    private static func writeAll(_ data: Data, to fd: Int32, path: String) throws(WriteError) {
        let failure: Int32 = data.withUnsafeBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return 0 }
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                #else
                let n = Darwin.write(fd, base + offset, raw.count - offset)
                #endif
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return 0
        }
        let closed = close(fd) == 0 ? 0 : errno
        let problem = failure != 0 ? failure : closed
        guard problem == 0 else {
            unlink(path)
            throw WriteError(description: "cannot write \(path): \(String(cString: strerror(problem)))")
        }
    }
}
