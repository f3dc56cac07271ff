internal import FoundationEssentials

/// The cookie-date algorithm of RFC 6265 5.1.1: the lenient reading of Expires that browsers
/// share ("Wed, 09 Jun 2021 10:18:14 GMT", "Wednesday, 09-Jun-21 10:18:14 GMT", "Jun 9 2021
/// 10:18:14", ...). Pure arithmetic in UTC, no calendar or locale.
enum CookieDate {
    static func parse(_ text: String) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?, month: Int?, year: Int?
        for token in tokens(text) {
            if time == nil, let found = self.time(token) { time = found; continue }
            if day == nil, let found = digits(token, 1...2) { day = found; continue }
            if month == nil, let found = self.month(token) { month = found; continue }
            if year == nil, let found = digits(token, 2...4) { year = found; continue }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        guard day <= daysIn(month: month, year: year) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Splits at the delimiters %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E.
    private static func tokens(_ text: String) -> [Substring.UTF8View] {
        text.utf8.split { byte in
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
                || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
        }.map { Substring($0).utf8 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    /// A token that starts with `count` digits (and then has no digit): their value.
    private static func digits(_ token: Substring.UTF8View, _ count: ClosedRange<Int>) -> Int? {
        let leading = token.prefix { isDigit($0) }
        guard count.contains(leading.count), token.dropFirst(leading.count).first.map({ !isDigit($0) }) ?? true else { return nil }
        return leading.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    /// hms-time: 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT, then anything but a digit.
    private static func time(_ token: Substring.UTF8View) -> (Int, Int, Int)? {
        let parts = token.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var values: [Int] = []
        for (index, part) in parts.enumerated() {
            let leading = part.prefix { isDigit($0) }
            guard (1...2).contains(leading.count) else { return nil }
            if index < 2, leading.count != part.count { return nil }
            if index == 2, part.dropFirst(leading.count).first.map(isDigit) == true { return nil }
            values.append(leading.reduce(0) { $0 * 10 + Int($1 - 48) })
        }
        return (values[0], values[1], values[2])
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func month(_ token: Substring.UTF8View) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
