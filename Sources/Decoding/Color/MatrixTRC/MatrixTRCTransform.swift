import CImageCodecs
import Foundation

/// The fast path of colour management: a matrix/TRC colour space (`MatrixTRCProfile`) to sRGB, RGBA8 in place,
/// without lcms2. Built once per profile (cached with the other transforms) and shared by every thread.
///
/// The tables reproduce lcms2's 8-bit matrix-shaper (cmsopt.c: `FillFirstShaper`, `SetMatShaper`,
/// `FillSecondShaper`, `MatShaperEval16`): the input curves sampled at the 256 byte values in 1.14 fixed
/// point, the matrix sRGB⁻¹ × colorants in 1.14, sums rounded and clipped, then sRGB's inverse curve at 16385
/// points rounded to bytes as lcms2 rounds them. Same arithmetic, same integers: for RGB profiles the pixels are
/// lcms2's own (see Docs/Decoding.md for the measured difference). The loops are C (cic_color_matrix.c), which
/// also precomputes a pair path from these tables when the profile allows one (`hasPairPath`).
final class MatrixTRCTransform: @unchecked Sendable {  // immutable after init; the C tables are only read
    /// What the pixels were converted from, for `ImageColorState.convertedToSRGB(from:)`.
    let description: String
    private let handle: OpaquePointer

    /// Images with at least this many pixels may be split over cores (`apply(to:count:)`).
    static let parallelThreshold = 1 << 20

    init(_ profile: MatrixTRCProfile, description: String) throws(ICCProfileError) {
        guard let sRGBFromPCS = ColorMatrix3.sRGBToD50.inverse else { throw .unusableMatrix }
        let matrix = sRGBFromPCS * profile.toPCS
        guard matrix.m.allSatisfy({ $0.isFinite && abs($0) < 64 }) else { throw .unusableMatrix }
        let fixed = matrix.m.map { Int64(($0 * 16384 + 0.5).rounded(.down)) }  // DOUBLE_TO_1FIXED14
        // terms[c][v][k]: what channel c at byte v adds to output k, exactly lcms2's products.
        var terms = [Int64](repeating: 0, count: 3 * 256 * 3)
        for c in 0..<3 {
            let columns = profile.isGray && c > 0 ? [Int64](repeating: 0, count: 3) : [fixed[c], fixed[3 + c], fixed[6 + c]]
            for v in 0..<256 {
                let shaped = Self.firstShaper(profile.curves[c].evaluate(Float(Double(v) / 255)))
                for k in 0..<3 { terms[(c * 256 + v) * 3 + k] = columns[k] * shaped }
            }
        }
        let (tables, bias, largestIndex) = try Self.fold(terms)
        let lookup = Self.sRGBOutputBytes
        let output = (0...largestIndex).map { lookup[min(16384, max(0, $0 - bias))] }
        guard let handle = tables.withUnsafeBufferPointer({ t in
            output.withUnsafeBufferPointer { cic_matrix_transform_create(t.baseAddress, $0.baseAddress, $0.count) }
        }) else { throw .unusableMatrix }
        self.handle = handle
        self.description = description
    }

    deinit { cic_matrix_transform_destroy(handle) }

    /// For the JPEG shim, which converts rows as libjpeg writes them.
    var cHandle: OpaquePointer { handle }

    /// Whether the C loop has its pair path for this profile: R' and G' do not depend on B (the blue primary is
    /// sRGB's and the white D65, as in Display P3 and Adobe RGB), so they come from one table indexed by R and G.
    var hasPairPath: Bool { cic_matrix_transform_has_pair_path(handle) != 0 }

    /// The general (term) path alone on one thread, for tests holding the pair path to it.
    func applyTermPath(to pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        cic_matrix_transform_apply_terms(handle, pixels, count)
    }

    /// The JPEG shim's loop for its rows, whose alpha is always 255 (`cic_matrix_transform_apply_opaque`), on
    /// one thread, for tests holding it to the term path.
    func applyOpaque(to pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        cic_matrix_transform_apply_opaque(handle, pixels, count)
    }

    /// Converts `count` RGBA8 pixels at `pixels` in place, over several cores when the image is large and no
    /// other decode is running in the process (`DecodeActivity`): a caller that is already parallel keeps its
    /// one thread per image.
    func apply(to pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard count >= Self.parallelThreshold, cores > 1, DecodeActivity.shared.isAlone else {
            cic_matrix_transform_apply(handle, pixels, count)
            return
        }
        let bands = min(cores, 8)
        let perBand = (count + bands - 1) / bands
        let base = UInt(bitPattern: pixels)  // Sendable across the worker closures; each band is disjoint
        DispatchQueue.concurrentPerform(iterations: bands) { band in
            let start = band * perBand, end = min(count, start + perBand)
            guard start < end, let p = UnsafeMutablePointer<UInt8>(bitPattern: base) else { return }
            cic_matrix_transform_apply(handle, p + start * 4, end - start)
        }
    }

    /// Converts every pixel of `pixels` (RGBA8) in place.
    func apply(to pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            apply(to: base, count: buffer.count / 4)
        }
    }

    // MARK: - Tables

    /// lcms2's FillFirstShaper: the curve's value in 1.14, or 0x7fffffff beyond what it can hold.
    private static func firstShaper(_ y: Float) -> Int64 {
        guard y < 131072 else { return 0x7FFF_FFFF }  // NaN too, as lcms2's comparison
        return Int64((Double(y) * 16384 + 0.5).rounded(.down))
    }

    /// Moves every term to non-negative values without changing any sum's `>> 14` other than by a common
    /// `bias`: channels 1 and 2 are lifted by their minimum, channel 0 takes the rounding (+0x2000), minus those
    /// lifts, plus `bias` × 16384. Throws when the sums would not fit 32 bits (a matrix no display profile has).
    private static func fold(_ terms: [Int64]) throws(ICCProfileError) -> (tables: [UInt32], bias: Int, largestIndex: Int) {
        func extreme(_ c: Int, _ k: Int, _ pick: (Int64, Int64) -> Int64) -> Int64 {
            (1..<256).reduce(terms[(c * 256) * 3 + k]) { pick($0, terms[(c * 256 + $1) * 3 + k]) }
        }
        var lift = [[Int64]](repeating: [0, 0, 0], count: 3)
        var bias: Int64 = 0
        for k in 0..<3 {
            lift[1][k] = -extreme(1, k, min)
            lift[2][k] = -extreme(2, k, min)
            let needed = lift[1][k] + lift[2][k] - 0x2000 - extreme(0, k, min)
            bias = max(bias, (needed + 16383) >> 14)
        }
        for k in 0..<3 { lift[0][k] = 0x2000 + bias * 16384 - lift[1][k] - lift[2][k] }
        var largest: Int64 = 0
        for k in 0..<3 {
            let top = (0..<3).reduce(Int64(0)) { $0 + extreme($1, k, max) + lift[$1][k] }
            largest = max(largest, top)
        }
        guard largest < Int64(UInt32.max), bias < 1 << 17, largest >> 14 < 1 << 18 else { throw .unusableMatrix }
        var tables = [UInt32](repeating: 0, count: terms.count)
        for c in 0..<3 {
            for v in 0..<256 {
                for k in 0..<3 {
                    let i = (c * 256 + v) * 3 + k
                    tables[i] = UInt32(terms[i] + lift[c][k])  // in 0...largest by construction
                }
            }
        }
        return (tables, Int(bias), Int(largest >> 14))
    }

    /// lcms2's FillSecondShaper for 8-bit output with sRGB's inverse curve (its parametric type -4): linear
    /// 0...1 in 16385 steps to the byte, through its 16-bit rounding.
    static let sRGBOutputBytes: [UInt8] = (0...16384).map { i in
        let r = Double(Float(Double(i) / 16384))
        // Parameters as cmsCreate_sRGBProfile: g, a, b, c, d.
        let (g, a, b, c, d) = (2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
        let e = a * d + b
        let threshold = e < 0 ? 0 : pow(e, g)
        var value = Double(Float(r >= threshold ? (pow(r, 1 / g) - b) / a : r / c))
        value = min(1, max(0, value))
        let word = UInt32(ICCToneCurve.saturateWord(value * 65535))
        return UInt8((word * 65281 + 8_388_608) >> 24)  // FROM_16_TO_8
    }
}
