import Foundation

/// One decode's claim on the decode memory budget: made when a coder reads the header
/// (`ImageDecodingOptions.checkDimensions`), before any pixel memory exists, and released when the decode
/// returns. `ImageCodersManager` opens a scope around every decode it runs.
///
/// What is reserved is an estimate of the buffers a decode holds at its peak: the canvas the coder fills
/// (for JPEG the DCT-scaled one, libjpeg's shrink-on-load), the working canvases of an animation, and the
/// exact-size output and filter buffer when the image is scaled. The first claim of a scope is the only one
/// (a coder that delegates, ICO to PNG, or tries two paths, does not reserve twice), so a decode never waits
/// while it holds a reservation.
final class DecodeBudgetScope: @unchecked Sendable {  // `lock` guards `reservation` and `mayWait`
    let budget: ImageDecodingBudget
    let format: ImageFormat
    let cancellation: ImageDecodingCancellation?
    private let lock = NSLock()
    private var reservation: ImageDecodingBudget.Reservation?
    private var waits = true

    init(budget: ImageDecodingBudget, format: ImageFormat, cancellation: ImageDecodingCancellation?) {
        self.budget = budget
        self.format = format
        self.cancellation = cancellation
    }

    /// Whether a claim may wait for room. Incremental decoders wait only on their final append: a partial
    /// decode that would wait fails instead (`.decodingBudgetBusy`), and the caller decodes once at the end.
    var mayWait: Bool {
        get { lock.withLock { waits } }
        set { lock.withLock { waits = newValue } }
    }

    /// Bytes held now.
    var reservedBytes: Int { lock.withLock { reservation?.bytes ?? 0 } }

    /// Reserves what decoding a `width`×`height` canvas with `options` needs, once per scope.
    func claim(width: Int, height: Int, workingCanvases: Int, options: ImageDecodingOptions) throws {
        if lock.withLock({ reservation != nil }) { return }
        let estimate = Self.estimate(format: format, width: width, height: height,
                                     workingCanvases: workingCanvases, options: options)
        let limit = budget.limitBytes
        if estimate.bytes > limit {
            throw ImageDecodingError.exceedsDecodingBudget(
                width: width, height: height, bytes: estimate.bytes, budgetBytes: limit)
        }
        let granted: ImageDecodingBudget.Reservation
        if mayWait {
            granted = try budget.reserve(estimate.bytes, cancellation: cancellation, waited: options.budgetWaited.call)
        } else if let now = budget.reserveIfAvailable(estimate.bytes) {
            granted = now
        } else {
            throw ImageDecodingError.decodingBudgetBusy(bytes: estimate.bytes, budgetBytes: limit)
        }
        lock.withLock { reservation = granted }
        // Only a decode that goes ahead makes room (the memory cache evicts for it); a refused one leaves all.
        options.willAllocateImage.call?(estimate.imageBytes)
    }

    func release() {
        let held = lock.withLock { () -> ImageDecodingBudget.Reservation? in
            defer { reservation = nil }
            return reservation
        }
        held?.release()
    }

    deinit { release() }

    /// The peak bytes of one decode, approximately, and the bytes of the image it returns.
    static func estimate(format: ImageFormat, width: Int, height: Int, workingCanvases: Int,
                         options: ImageDecodingOptions) -> (bytes: Int, imageBytes: Int, decodedWidth: Int, decodedHeight: Int) {
        var decodedWidth = width, decodedHeight = height
        if format == .jpeg {
            let d = JPEGDecompressor.scaleDenominator(width: width, height: height, options: options)
            decodedWidth = (width + d - 1) / d
            decodedHeight = (height + d - 1) / d
        }
        let canvas = Self.bytes(decodedWidth, decodedHeight, 4)
        var total = canvas.multipliedReportingOverflow(by: max(1, workingCanvases)).overflow
            ? Int.max : canvas * max(1, workingCanvases)
        var image = canvas
        if let target = ImageScaler.targetSize(width: width, height: height, options: ImageScaler.finishing(options)) {
            // The output, and the area filter's row-filtered float buffer (target width × source height).
            image = Self.bytes(target.width, target.height, 4)
            total = Self.add(total, image)
            total = Self.add(total, Self.bytes(target.width, decodedHeight, 16))
        }
        return (total, image, decodedWidth, decodedHeight)
    }

    private static func bytes(_ w: Int, _ h: Int, _ perPixel: Int) -> Int {
        let (pixels, o1) = w.multipliedReportingOverflow(by: h)
        let (total, o2) = pixels.multipliedReportingOverflow(by: perPixel)
        return o1 || o2 ? Int.max : total
    }

    private static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}

/// `ImageDecodingOptions.willAllocateImage`: a callback that, like the budget scope, takes no part in the
/// options' equality.
package struct DecodeAllocationHook: Sendable, Equatable {
    package var call: (@Sendable (_ imageBytes: Int) -> Void)?

    package init(_ call: (@Sendable (_ imageBytes: Int) -> Void)? = nil) {
        self.call = call
    }

    package static func == (a: DecodeAllocationHook, b: DecodeAllocationHook) -> Bool { true }
}

/// `ImageDecodingOptions.budgetWaited`: told how long (nanoseconds) a decode waited for the decode memory
/// budget, when it had to wait; like the allocation hook, no part of the options' equality.
package struct DecodeBudgetWaitHook: Sendable, Equatable {
    package var call: (@Sendable (_ nanoseconds: UInt64) -> Void)?

    package init(_ call: (@Sendable (_ nanoseconds: UInt64) -> Void)? = nil) {
        self.call = call
    }

    package static func == (a: DecodeBudgetWaitHook, b: DecodeBudgetWaitHook) -> Bool { true }
}

/// Carries a decode's budget scope inside `ImageDecodingOptions` without taking part in its equality: two
/// decodes with the same settings are equal whatever their budget claims.
struct DecodeBudgetScopeSlot: Sendable, Equatable {
    var scope: DecodeBudgetScope?

    static func == (a: DecodeBudgetScopeSlot, b: DecodeBudgetScopeSlot) -> Bool { true }
}
