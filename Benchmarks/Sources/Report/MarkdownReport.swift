import Foundation

/// The human-readable tables: goals (met / not met), then every figure by section with min and median.
enum MarkdownReport {
    static func render(_ report: BenchmarkReport, quick: Bool) -> String {
        var lines: [String] = []
        if quick {
            lines.append("_`--quick` run: small counts and 3 rounds; the figures only show the benchmark works._")
            lines.append("")
        }
        lines.append("| goal | target | median | min | result |")
        lines.append("| --- | --- | --- | --- | --- |")
        for goal in Goal.all {
            let figure = report.figure(goal.key)
            let median = figure?.samples.median
            let met = goal.isMet(median)
            var result = met.map { $0 ? "met" : "**not met**" } ?? "not measured"
            if let margin = goal.enforcement?.margin, met != nil { result += " (CI: fails beyond +\(Int((margin * 100).rounded())) %)" }
            lines.append("| \(goal.label) (`\(goal.key)`) | \(goal.comparison.symbol) \(formatNumber(goal.threshold)) | \(formatNumber(median)) | \(formatNumber(figure?.samples.min)) | \(result) |")
        }
        lines.append("")
        lines.append("| section | measurement | key | min | median | unit | runs |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- |")
        var sections: [String] = []
        for figure in report.headlines + report.details where !sections.contains(figure.section) {
            sections.append(figure.section)
        }
        for section in sections {
            let figures = report.headlines.filter { $0.section == section } + report.details.filter { $0.section == section }
            for figure in figures {
                let key = report.headlines.contains { $0.key == figure.key } ? "**`\(figure.key)`**" : "`\(figure.key)`"
                lines.append("| \(section) | \(figure.label) | \(key) | \(formatNumber(figure.samples.min)) | \(formatNumber(figure.samples.median)) | \(figure.unit) | \(figure.samples.count) |")
            }
        }
        if !report.skipped.isEmpty {
            lines.append("")
            lines.append("Not measured:")
            lines.append("")
            for (key, reason) in report.skipped { lines.append("- `\(key)`: \(reason)") }
        }
        if !report.notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            lines.append("")
            for (section, text) in report.notes { lines.append("- \(section): \(text)") }
        }
        if !report.errors.isEmpty {
            lines.append("")
            lines.append("Errors:")
            lines.append("")
            for text in report.errors { lines.append("- \(text)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
