/// A moment of the proleptic Gregorian calendar in UTC, to the second, and its count of seconds
/// since 1970: Howard Hinnant's `days_from_civil` and `civil_from_days`, so no calendar or
/// time-zone database is needed. The one place of calendar arithmetic: S3's `x-amz-date` is
/// written with it, `Retry-After`'s HTTP date read with it.
package struct UTCDateTime: Sendable, Hashable {
    /// The year; 0 is 1 BC, as in ISO 8601.
    package var year: Int
    /// 1 to 12.
    package var month: Int
    /// 1 to 31.
    package var day: Int
    /// 0 to 23.
    package var hour: Int
    /// 0 to 59.
    package var minute: Int
    /// 0 to 60 (60 for a leap second, counted as the first second of the next minute).
    package var second: Int

    /// The fields as given, or `nil` when one is outside its range above, or the year outside
    /// ±1,000,000. The day is not checked against its month's length: 31 February is 3 March
    /// (2 March in a leap year), as `Retry-After` has always read it.
    package init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        guard (-1_000_000...1_000_000).contains(year), (1...12).contains(month), (1...31).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// The moment `seconds` after 1970-01-01T00:00:00Z (before it when negative).
    package init(secondsSince1970 seconds: Int) {
        let days = Self.floorDivision(seconds, 86_400)
        let remainder = seconds % 86_400
        let secondOfDay = remainder < 0 ? remainder + 86_400 : remainder
        // civil_from_days
        let shifted = days + 719_468
        let era = Self.floorDivision(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60
    }

    /// The seconds since 1970-01-01T00:00:00Z (negative before it).
    package var secondsSince1970: Int {
        // days_from_civil
        let marchYear = month <= 2 ? year - 1 : year
        let era = Self.floorDivision(marchYear, 400)
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// `value / divisor` rounded towards minus infinity (`divisor` positive); never overflows.
    private static func floorDivision(_ value: Int, _ divisor: Int) -> Int {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
