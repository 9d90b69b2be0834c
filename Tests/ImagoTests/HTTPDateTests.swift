import Foundation
import Imago
import Testing

/// HTTP dates read and written by hand agree with Foundation's formatter,
/// over three centuries, leap days and the days before 1970 included.
@Suite struct HTTPDateTests {
    static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    @Test func fixdatesRoundTripAsFoundationWritesThem() {
        var generator = SystemRandomNumberGenerator()
        let samples: [TimeInterval] = [0, -1, 86_399, 86_400, 951_782_400 /* 2000-02-29 */, 1_445_412_480, 4_107_542_399, -2_208_988_800]
            + (0..<2000).map { _ in TimeInterval(Int64.random(in: -2_208_988_800...7_258_118_400, using: &generator)) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            let expected = Self.formatter.string(from: date)
            #expect(HTTPDate.format(date) == expected, "\(seconds)")
            #expect(HTTPDate.parse(expected) == date, "\(expected)")
        }
    }

    @Test func theObsoleteFormsStillParseAndNonsenseDoesNot() {
        let date = Date(timeIntervalSince1970: 784_111_777)   // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == date)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == date)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == date)
        for text in ["", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 36 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 0x Nov 1994 08:49:37 GMT", "yesterday"] {
            #expect(HTTPDate.fixdate(text) == nil, "\(text)")
        }
    }
}
