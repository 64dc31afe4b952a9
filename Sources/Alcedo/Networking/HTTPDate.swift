#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTP-dates (RFC 9110 §5.6.7): parses the three formats servers send and writes the
/// preferred one, in UTC, without `DateFormatter` (no locale, no shared mutable state).
public enum HTTPDate {
    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun",
                                     "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), an RFC 850 date
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) or an asctime date (`Sun Nov  6 08:49:37 1994`);
    /// `nil` for anything else. Two-digit years more than 50 years ahead of `now` are read
    /// as the previous century, as RFC 9110 asks.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
        let zone = tokens.last?.uppercased()
        if tokens.count == 6 || tokens.count == 5, zone == "GMT" || zone == "UTC" {
            // IMF-fixdate: day-name, DD Mon YYYY HH:MM:SS GMT (some servers leave out the day name).
            let t = tokens.suffix(5).map { $0 }
            return components(day: t[0], month: t[1], year: t[2], time: t[3], now: now)
        }
        if tokens.count == 4, zone == "GMT" {
            // RFC 850: day-name, DD-Mon-YY HH:MM:SS GMT
            let parts = tokens[1].split(separator: "-").map(String.init)
            guard parts.count == 3 else { return nil }
            return components(day: parts[0], month: parts[1], year: parts[2], time: tokens[2], now: now)
        }
        if tokens.count == 5 {
            // asctime: day-name Mon D HH:MM:SS YYYY
            return components(day: tokens[2], month: tokens[1], year: tokens[4], time: tokens[3], now: now)
        }
        return nil
    }

    /// Writes `date` as an IMF-fixdate, for example `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func string(from date: Date) -> String {
        let c = utcComponents(of: date)
        let weekday = dayNames[c.weekday]
        let monthName = monthNames[c.month - 1].prefix(1).uppercased() + monthNames[c.month - 1].dropFirst()
        return "\(weekday), \(twoDigits(c.day)) \(monthName) \(c.year) "
            + "\(twoDigits(c.hour)):\(twoDigits(c.minute)):\(twoDigits(c.second)) GMT"
    }

    /// The calendar parts of `date` in UTC (proleptic Gregorian), by arithmetic: no `Calendar`
    /// or `TimeZone`, whose identifiers need ICU's data, which the shipped binary does not link.
    /// `weekday` counts from Monday (0) to Sunday (6). Dates beyond ±10^15 seconds (and NaN)
    /// are clamped to that range.
    public static func utcComponents(of date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int) {
        let interval = date.timeIntervalSince1970
        let bounded = interval.isNaN ? 0 : min(max(interval, -1e15), 1e15)
        let seconds = Int(bounded.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(fromDays: days)
        // 1970-01-01 was a Thursday (index 3 in a Monday-first list).
        return (year, month, day, secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60, ((days % 7) + 7 + 3) % 7)
    }

    /// `n` with a leading zero below 10.
    static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static func components(day: String, month: String, year: String, time: String, now: Date) -> Date? {
        guard let dayNumber = Int(day), (1...31).contains(dayNumber),
              let monthIndex = monthNames.firstIndex(of: month.lowercased()),
              var yearNumber = Int(year), yearNumber >= 0 else { return nil }
        if year.count == 2 {
            let currentYear = civilDate(fromDays: Int(now.timeIntervalSince1970) / 86_400).year
            yearNumber += currentYear / 100 * 100
            if yearNumber > currentYear + 50 { yearNumber -= 100 }
        } else if year.count != 4 {
            return nil
        }
        let clock = time.split(separator: ":").map { Int($0) }
        guard clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2],
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let days = daysFromCivil(year: yearNumber, month: monthIndex + 1, day: dayNumber)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01.
    private static func civilDate(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
