import Foundation

/// HTTP-date parsing (RFC 9110 §5.6.7): exactly the three formats, nothing looser.
///
/// - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`
/// - obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` (two-digit year)
/// - asctime `Sun Nov  6 08:49:37 1994` (a one-digit day is preceded by a second space)
///
/// Single spaces where the grammar has SP, two-digit hours, minutes and seconds, "GMT": anything else (doubled
/// spaces, dashes in an IMF-fixdate, a four-digit RFC 850 year, "UTC", a one-digit hour) is not a date, which
/// for Expires means "already expired" (RFC 9111 §5.3). Names of days and months and "GMT" are compared
/// without regard to case (recipients are asked to be robust there); the day name is not checked against
/// the date. Hand-written instead of `DateFormatter`: locale-free, cheap, and safe from any thread.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date `value` names, or nil when it is not an HTTP-date. `now` places RFC 850 two-digit years: one
    /// that would be more than 50 years ahead is in the previous century (RFC 9110 §5.6.7).
    static func parse(_ value: String, now: Date = Date()) -> Date? {
        let bytes = Array(HTTPFieldList.trim(value[...]).utf8.prefix(48))
        switch bytes.count {
        case 29: return imfFixdate(bytes)
        case 24: return asctime(bytes)
        case 30...33: return rfc850(bytes, now: now)
        default: return nil
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func imfFixdate(_ b: [UInt8]) -> Date? {
        guard name(b[0..<3], in: shortDays) != nil, b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20,
              b[16] == 0x20, b[25] == 0x20, lowercased(b[26..<29]) == "gmt",
              let day = number(b[5..<7]), let month = name(b[8..<11], in: months), let year = number(b[12..<16]) else { return nil }
        return make(year: year, month: month + 1, day: day, time: b[17..<25])
    }

    /// `Sun Nov  6 08:49:37 1994`
    private static func asctime(_ b: [UInt8]) -> Date? {
        guard name(b[0..<3], in: shortDays) != nil, b[3] == 0x20, b[7] == 0x20, b[10] == 0x20, b[19] == 0x20,
              let month = name(b[4..<7], in: months), let year = number(b[20..<24]) else { return nil }
        let day: Int?
        if b[8] == 0x20 { day = number(b[9..<10]) } else { day = number(b[8..<10]) }
        guard let day else { return nil }
        return make(year: year, month: month + 1, day: day, time: b[11..<19])
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    private static func rfc850(_ b: [UInt8], now: Date) -> Date? {
        guard let comma = b.firstIndex(of: UInt8(ascii: ",")), name(b[0..<comma], in: longDays) != nil,
              b.count == comma + 24 else { return nil }
        let r = Array(b[(comma + 1)...])  // " 06-Nov-94 08:49:37 GMT"
        guard r[0] == 0x20, r[3] == UInt8(ascii: "-"), r[7] == UInt8(ascii: "-"), r[10] == 0x20, r[19] == 0x20,
              lowercased(r[20..<23]) == "gmt", let day = number(r[1..<3]), let month = name(r[4..<7], in: months),
              let yy = number(r[8..<10]) else { return nil }
        let nowDays = min(max((now.timeIntervalSince1970 / 86_400).rounded(.down), 0), 2_900_000)  // 1970...9909
        let currentYear = Int(civil(fromDays: Int64(nowDays.isFinite ? nowDays : 0)).year)
        var year = currentYear - currentYear % 100 + yy
        if year > currentYear + 50 { year -= 100 }
        return make(year: year, month: month + 1, day: day, time: r[11..<19])
    }

    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }

    private static func name(_ bytes: ArraySlice<UInt8>, in names: [String]) -> Int? {
        names.firstIndex(of: lowercased(bytes))
    }

    /// All digits (no sign, no space), else nil.
    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return bytes.isEmpty ? nil : value
    }

    private static func make(year: Int, month: Int, day: Int, time: ArraySlice<UInt8>) -> Date? {
        let t = Array(time)
        guard t.count == 8, t[2] == UInt8(ascii: ":"), t[5] == UInt8(ascii: ":"), let h = number(t[0..<2]),
              let m = number(t[3..<5]), let s = number(t[6..<8]), h <= 23, m <= 59, s <= 60,
              (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + Int64(h * 3600 + m * 60 + s)))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
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
        // Four digits always (the grammar's 4DIGIT): year 500 is "0500".
        let fourDigitYear = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekdays[weekday]), \(two(day)) \(monthNames[Int(month) - 1]) \(fourDigitYear) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
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
