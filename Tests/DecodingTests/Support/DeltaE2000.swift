import Foundation

/// CIEDE2000 colour difference between sRGB pixels (Sharma, Wu and Dalal's formulation), through CIELAB
/// with a D65 white: the measure issue 17's acceptance uses (mean ≤ 1, 99th percentile ≤ 3).
enum DeltaE2000 {
    struct Summary {
        let mean: Double
        let p99: Double
        let max: Double
    }

    /// ΔE2000 of every pixel pair of two RGBA8 buffers (alpha ignored).
    static func summary(_ a: [UInt8], _ b: [UInt8]) -> Summary {
        guard a.count == b.count, a.count % 4 == 0 else {
            // Buffers of different sizes cannot be compared: an infinite difference fails any bound a test sets.
            return Summary(mean: .infinity, p99: .infinity, max: .infinity)
        }
        var values: [Double] = []
        values.reserveCapacity(a.count / 4)
        for i in stride(from: 0, to: a.count, by: 4) {
            values.append(difference(lab(a[i], a[i + 1], a[i + 2]), lab(b[i], b[i + 1], b[i + 2])))
        }
        values.sort()
        let mean = values.reduce(0, +) / Double(max(values.count, 1))
        let p99 = values.isEmpty ? 0 : values[min(values.count - 1, Int((Double(values.count) * 0.99).rounded(.down)))]
        return Summary(mean: mean, p99: p99, max: values.last ?? 0)
    }

    static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (l: Double, a: Double, b: Double) {
        func linear(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (lr, lg, lb) = (linear(r), linear(g), linear(b))
        let x = (0.4124564 * lr + 0.3575761 * lg + 0.1804375 * lb) / 0.95047
        let y = 0.2126729 * lr + 0.7151522 * lg + 0.0721750 * lb
        let z = (0.0193339 * lr + 0.1191920 * lg + 0.9503041 * lb) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }

    static func difference(_ p: (l: Double, a: Double, b: Double), _ q: (l: Double, a: Double, b: Double)) -> Double {
        let c1 = (p.a * p.a + p.b * p.b).squareRoot(), c2 = (q.a * q.a + q.b * q.b).squareRoot()
        let cMean = (c1 + c2) / 2
        let c7 = pow(cMean, 7)
        let g = 0.5 * (1 - (c7 / (c7 + pow(25, 7))).squareRoot())
        let a1 = (1 + g) * p.a, a2 = (1 + g) * q.a
        let c1p = (a1 * a1 + p.b * p.b).squareRoot(), c2p = (a2 * a2 + q.b * q.b).squareRoot()
        func hue(_ b: Double, _ a: Double) -> Double {
            if a == 0 && b == 0 { return 0 }
            let h = atan2(b, a) * 180 / .pi
            return h < 0 ? h + 360 : h
        }
        let h1 = hue(p.b, a1), h2 = hue(q.b, a2)
        let dL = q.l - p.l, dC = c2p - c1p
        var dh = 0.0
        if c1p * c2p != 0 {
            dh = h2 - h1
            if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 }
        }
        let dH = 2 * (c1p * c2p).squareRoot() * sin(dh * .pi / 360)
        let lMean = (p.l + q.l) / 2, cpMean = (c1p + c2p) / 2
        var hMean = h1 + h2
        if c1p * c2p != 0 {
            if abs(h1 - h2) <= 180 { hMean = (h1 + h2) / 2 } else { hMean = h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2 }
        }
        let t = 1 - 0.17 * cos((hMean - 30) * .pi / 180) + 0.24 * cos(2 * hMean * .pi / 180)
            + 0.32 * cos((3 * hMean + 6) * .pi / 180) - 0.20 * cos((4 * hMean - 63) * .pi / 180)
        let dTheta = 30 * exp(-pow((hMean - 275) / 25, 2))
        let cp7 = pow(cpMean, 7)
        let rc = 2 * (cp7 / (cp7 + pow(25, 7))).squareRoot()
        let sl = 1 + 0.015 * pow(lMean - 50, 2) / (20 + pow(lMean - 50, 2)).squareRoot()
        let sc = 1 + 0.045 * cpMean, sh = 1 + 0.015 * cpMean * t
        let rt = -sin(2 * dTheta * .pi / 180) * rc
        let (tl, tc, th) = (dL / sl, dC / sc, dH / sh)
        return (tl * tl + tc * tc + th * th + rt * tc * th).squareRoot()
    }
}
