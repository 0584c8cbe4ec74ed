import Foundation

/// HTTP-date parsing (RFC 9110 §5.6.7): IMF-fixdate, the obsolete RFC 850 form and asctime.
///
/// Hand-written instead of `DateFormatter` because formatters are locale-sensitive, costly to create
/// and not documented as thread-safe on every platform; cache lookups parse several dates per hit.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date `value` names, or nil when it is not a valid HTTP-date (callers treat that as "in the past"
    /// for Expires, as RFC 9111 §5.3 requires, and as absent otherwise).
    static func parse(_ value: String) -> Date? {
        // Bounded: a real HTTP-date is 29 characters; anything far longer is not one.
        guard value.utf8.count <= 64 else { return nil }
        let parts = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        switch parts.count {
        case 6:
            // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
            guard parts[0].hasSuffix(","), parts[5] == "GMT",
                  let day = Int(parts[1]), let month = monthIndex(parts[2]), let year = Int(parts[3]) else { return nil }
            return make(year: year, month: month, day: day, time: parts[4])
        case 4:
            // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
            guard parts[0].hasSuffix(","), parts[3] == "GMT" else { return nil }
            let dmy = parts[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard dmy.count == 3, let day = Int(dmy[0]), let month = monthIndex(dmy[1]), let yy = Int(dmy[2]) else { return nil }
            // Two-digit years: RFC 9110 says a year more than 50 years ahead is in the past century.
            let year = dmy[2].count == 2 ? (yy < 70 ? 2000 + yy : 1900 + yy) : yy
            return make(year: year, month: month, day: day, time: parts[2])
        case 5:
            // asctime: "Sun Nov  6 08:49:37 1994"
            guard let month = monthIndex(parts[1]), let day = Int(parts[2]), let year = Int(parts[4]) else { return nil }
            return make(year: year, month: month, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// `date` as an IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    static func format(_ date: Date) -> String {
        // Clamped to years 1...9999 so that no conversion below can overflow.
        let raw = min(max(date.timeIntervalSince1970.rounded(.down), -62_135_596_800), 253_402_300_799)
        let seconds = raw.isFinite ? Int64(raw) : 0
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(weekdays[weekday]), \(two(day)) \(monthNames[Int(month) - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    private static func monthIndex(_ name: String) -> Int? {
        guard let i = months.firstIndex(of: name.lowercased()) else { return nil }
        return i + 1
    }

    private static func make(year: Int, month: Int, day: Int, time: String) -> Date? {
        let hms = time.split(separator: ":", omittingEmptySubsequences: false)
        guard hms.count == 3, let h = Int(hms[0]), let m = Int(hms[1]), let s = Int(hms[2]),
              (0...23).contains(h), (0...59).contains(m), (0...60).contains(s),
              (1...12).contains(month), (1...31).contains(day), (1...9999).contains(year) else { return nil }
        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(h * 3600 + m * 60 + s)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
