import Foundation

/// HTTP dates (RFC 9110's IMF-fixdate), read and written.
package enum HTTPDate {
    /// The date in `text` (IMF-fixdate and the obsolete forms), or `nil`.
    package static func parse(_ text: String) -> Date? { HTTPCachePolicy.httpDate(text) }

    /// `date` as an IMF-fixdate: `Wed, 21 Oct 2015 07:28:00 GMT`.
    package static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return String(format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", days[parts.weekday! - 1], parts.day!, months[parts.month! - 1],
                      parts.year!, parts.hour!, parts.minute!, parts.second!)
    }
}
