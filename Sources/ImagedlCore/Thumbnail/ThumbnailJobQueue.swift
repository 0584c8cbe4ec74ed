import Foundation

/// Inputs ready to be processed, handed to a fixed number of worker threads. Files are ready at once; a
/// URL becomes ready when its download ends. `next()` blocks until a job arrives or no more can come.
final class ThumbnailJobQueue: @unchecked Sendable {  // `condition` guards every stored property
    enum Job {
        /// A file to read (by the worker, so only the images in flight are in memory).
        case file(index: Int, path: String)
        /// The input's bytes, and the server's MIME type for a URL.
        case data(index: Int, Data, mimeType: String?)
        /// The input could not be read or downloaded.
        case failure(index: Int, String)
    }

    private let condition = NSCondition()
    private var jobs: [Job?] = []   // taken jobs are set to nil, so their bytes are freed
    private var head = 0
    private var expected: Int

    /// `expected`: how many jobs will be pushed in all.
    init(expected: Int) {
        self.expected = expected
    }

    func push(_ job: Job) {
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// The next job, or nil once all `expected` jobs have been taken.
    func next() -> Job? {
        condition.withLock {
            while head == jobs.count {
                if head >= expected { return nil }
                condition.wait()
            }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head >= expected { condition.broadcast() }   // wake idle workers so they can stop
            return job
        }
    }
}
