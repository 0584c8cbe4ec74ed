import Foundation

/// The chart in Docs/Benchmarks.md, drawn by the benchmark itself: one bar per goal figure, normalised so
/// that the goal sits on the same vertical line for every row (bar length = value ÷ goal; for "higher is
/// better" figures, goal ÷ value), green when met, red when not, with the min–median range as a thin line.
enum SVGChart {
    static func render(_ report: BenchmarkReport, title: String) -> String {
        let rows = Goal.all
        let width = 900.0
        let labelWidth = 380.0
        let plotWidth = width - labelWidth - 120
        let rowHeight = 34.0
        let top = 56.0
        let height = top + rowHeight * Double(rows.count) + 50
        let maxScale = 2.0  // bars are clipped at twice the goal
        func x(_ normalised: Double) -> Double { labelWidth + plotWidth * min(normalised, maxScale) / maxScale }

        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="13">
        <rect width="100%" height="100%" fill="white"/>
        <text x="12" y="24" font-size="16" font-weight="bold">\(escape(title))</text>
        <text x="12" y="44" fill="#555">bar = value relative to its goal (goal line at 1×; shorter is better); thin line = min to median</text>

        """
        for (i, goal) in rows.enumerated() {
            let y = top + rowHeight * Double(i)
            let figure = report.headlines.first { $0.key == goal.key }
            svg += "<text x=\"12\" y=\"\(y + 21)\">\(escape(goal.label))</text>\n"
            guard let median = figure?.samples.median, let minimum = figure?.samples.min else {
                svg += "<text x=\"\(labelWidth)\" y=\"\(y + 21)\" fill=\"#888\">not measured</text>\n"
                continue
            }
            let normalise: (Double) -> Double = { value in
                switch goal.comparison {
                case .atLeast: return value > 0 ? goal.threshold / value : maxScale
                case .atMost, .below: return goal.threshold > 0 ? value / goal.threshold : (value > 0 ? maxScale : 0)
                }
            }
            let met = goal.isMet(median) ?? false
            let colour = met ? "#2e7d32" : "#c62828"
            let barEnd = x(normalise(median))
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 8)\" width=\"\(max(1, barEnd - labelWidth))\" height=\"18\" fill=\"\(colour)\" opacity=\"0.85\"/>\n"
            let a = x(normalise(minimum))
            svg += "<line x1=\"\(min(a, barEnd))\" y1=\"\(y + 17)\" x2=\"\(max(a, barEnd))\" y2=\"\(y + 17)\" stroke=\"black\" stroke-width=\"2\"/>\n"
            svg += "<text x=\"\(labelWidth + plotWidth + 8)\" y=\"\(y + 21)\">\(escape(formatNumber(median))) (\(goal.comparison.symbol) \(escape(formatNumber(goal.threshold))))</text>\n"
        }
        let goalX = x(1)
        let bottom = top + rowHeight * Double(rows.count)
        svg += "<line x1=\"\(goalX)\" y1=\"\(top)\" x2=\"\(goalX)\" y2=\"\(bottom)\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n"
        svg += "<text x=\"\(goalX - 14)\" y=\"\(bottom + 18)\" fill=\"#333\">goal</text>\n"
        svg += "<text x=\"\(labelWidth)\" y=\"\(bottom + 18)\" fill=\"#333\">0</text>\n"
        svg += "<text x=\"\(labelWidth + plotWidth - 16)\" y=\"\(bottom + 18)\" fill=\"#333\">2×</text>\n"
        svg += "</svg>\n"
        return svg
    }

    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
