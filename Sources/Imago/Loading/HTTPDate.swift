import Foundation

/// HTTP dates (RFC 9110's IMF-fixdate), read and written.
///
/// IMF-fixdate, the only form servers send today, is read and written by
/// hand: a `DateFormatter` or a `Calendar` costs tens of microseconds a
/// call, and the image server reads and writes one for every answer. The
/// two obsolete forms fall back to `HTTPCachePolicy`'s formatters.
package enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date in `text` (IMF-fixdate and the obsolete forms), or `nil`.
    package static func parse(_ text: String) -> Date? {
        fixdate(text) ?? HTTPCachePolicy.formattedDate(text)
    }

    /// `date` as an IMF-fixdate: `Wed, 21 Oct 2015 07:28:00 GMT`.
    package static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let (dayNumber, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (day, second) = secondOfDay < 0 ? (dayNumber - 1, secondOfDay + 86_400) : (dayNumber, secondOfDay)
        let (year, month, dayOfMonth) = civil(fromDays: day)
        let weekday = Int(((day % 7) + 11) % 7)   // 1970-01-01 was a Thursday
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(days[weekday]), \(two(dayOfMonth)) \(months[Int(month) - 1]) \(yearText) "
            + "\(two(second / 3600)):\(two(second % 3600 / 60)):\(two(second % 60)) GMT"
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, strictly; `nil` for anything else.
    package static func fixdate(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 32, bytes[7] == 32, bytes[11] == 32, bytes[16] == 32,
              bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 32,
              bytes[26...28].elementsEqual("GMT".utf8) else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        let monthName = String(decoding: bytes[8..<11], as: UTF8.self)
        guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
              let second = number(23..<25), let month = months.firstIndex(of: monthName),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let dayNumber = days(fromCivil: year, month: Int64(month + 1), day: day)
        return Date(timeIntervalSince1970: TimeInterval(dayNumber * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day number since 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
