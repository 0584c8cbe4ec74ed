import Foundation

/// The chart in Docs/Benchmarks.md, drawn by the benchmark itself: one bar per goal figure, normalised so
/// that the goal sits on the same vertical line for every row (bar length = value ÷ goal; for "higher is
/// better" figures, goal ÷ value), green when met, red when not, with the min–median range as a thin line.
enum SVGChart {
    static func render(_ report: BenchmarkReport, title: String) -> String {
        let rows = Goal.all
        let width = 960.0
        let labelWidth = 420.0
        let plotWidth = width - labelWidth - 120
        let rowHeight = 34.0
        let top = 56.0
        let throughput = report.details.filter { Self.throughputKeys.contains($0.key) }
        let panelTop = top + rowHeight * Double(rows.count) + 60
        let height = panelTop + (throughput.isEmpty ? 0 : 40 + rowHeight * Double(throughput.count))
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
            let figure = report.figure(goal.key)
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
            svg += "<text x=\"\(labelWidth + plotWidth + 8)\" y=\"\(y + 21)\">\(escape("\(formatNumber(median)) (\(goal.comparison.symbol) \(formatNumber(goal.threshold)))"))</text>\n"
        }
        let goalX = x(1)
        let bottom = top + rowHeight * Double(rows.count)
        svg += "<line x1=\"\(goalX)\" y1=\"\(top)\" x2=\"\(goalX)\" y2=\"\(bottom)\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n"
        svg += "<text x=\"\(goalX - 14)\" y=\"\(bottom + 18)\" fill=\"#333\">goal</text>\n"
        svg += "<text x=\"\(labelWidth)\" y=\"\(bottom + 18)\" fill=\"#333\">0</text>\n"
        svg += "<text x=\"\(labelWidth + plotWidth - 16)\" y=\"\(bottom + 18)\" fill=\"#333\">2×</text>\n"
        svg += throughputPanel(throughput, top: panelTop, labelWidth: labelWidth, plotWidth: plotWidth, rowHeight: rowHeight)
        svg += "</svg>\n"
        return svg
    }

    /// The download clients' median requests per second, on one absolute scale.
    static let throughputKeys = ["downloader_req_per_s", "downloader_decoding_req_per_s", "urlsession_req_per_s", "curl_req_per_s"]

    private static func throughputPanel(
        _ figures: [Figure], top: Double, labelWidth: Double, plotWidth: Double, rowHeight: Double
    ) -> String {
        guard !figures.isEmpty else { return "" }
        let largest = figures.compactMap(\.samples.median).max() ?? 1
        var svg = "<text x=\"12\" y=\"\(top + 18)\" font-size=\"15\" font-weight=\"bold\">Download throughput, median requests per second (1000 × ~30 KB, 6 connections)</text>\n"
        for (i, figure) in figures.enumerated() {
            let y = top + 30 + rowHeight * Double(i)
            svg += "<text x=\"12\" y=\"\(y + 21)\">\(escape(figure.label))</text>\n"
            guard let median = figure.samples.median, largest > 0 else { continue }
            let w = max(1, plotWidth * median / largest)
            let colour = figure.key == "curl_req_per_s" ? "#777" : figure.key == "urlsession_req_per_s" ? "#1565c0" : "#ef6c00"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 8)\" width=\"\(w)\" height=\"18\" fill=\"\(colour)\" opacity=\"0.85\"/>\n"
            svg += "<text x=\"\(labelWidth + w + 8)\" y=\"\(y + 21)\">\(escape(formatNumber(median)))</text>\n"
        }
        return svg
    }

    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
