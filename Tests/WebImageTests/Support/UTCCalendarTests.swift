import Foundation
import Testing
@testable import WebImage

/// The civil-calendar arithmetic of S3's `x-amz-date` and `Retry-After`'s HTTP date, pinned on
/// known instants: leap days (2000, a multiple of 400), century years that are not leap years
/// (1900, 2100), the day before 1970 and a date before 1970's era.
@Suite("UTC calendar arithmetic")
struct UTCCalendarTests {
    /// Seconds since 1970, as S3 and as HTTP (IMF-fixdate) write them.
    static let instants: [(seconds: Int, amzDate: String, httpDate: String)] = [
        (0, "19700101T000000Z", "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-1, "19691231T235959Z", "Wed, 31 Dec 1969 23:59:59 GMT"),
        (951_782_400, "20000229T000000Z", "Tue, 29 Feb 2000 00:00:00 GMT"),
        (4_107_587_696, "21000301T123456Z", "Mon, 01 Mar 2100 12:34:56 GMT"),
        (-2_203_891_201, "19000228T235959Z", "Wed, 28 Feb 1900 23:59:59 GMT"),
        (1_735_689_599, "20241231T235959Z", "Tue, 31 Dec 2024 23:59:59 GMT"),
        (-11_670_912_000, "16000301T000000Z", "Wed, 01 Mar 1600 00:00:00 GMT"),
    ]

    @Test func s3TimestampsAreTheCivilDateInUTC() {
        for instant in Self.instants {
            #expect(S3RequestSigner.timestamp(Date(timeIntervalSince1970: Double(instant.seconds))) == instant.amzDate)
        }
        // A fraction of a second is dropped towards the past.
        #expect(S3RequestSigner.timestamp(Date(timeIntervalSince1970: 1.75)) == "19700101T000001Z")
        #expect(S3RequestSigner.timestamp(Date(timeIntervalSince1970: -0.5)) == "19691231T235959Z")
    }

    @Test func retryAfterDatesAreReadAsTheCivilDateInUTC() {
        for instant in Self.instants {
            let now = Date(timeIntervalSince1970: Double(instant.seconds - 7))
            #expect(HTTPRetryPolicy.retryAfter(instant.httpDate, now: now) == .seconds(7), "\(instant.httpDate)")
        }
        // The day is not checked against its month's length: 31 February 2001 is 3 March.
        #expect(HTTPRetryPolicy.retryAfter("Sat, 31 Feb 2001 00:00:00 GMT", now: Date(timeIntervalSince1970: 983_577_600 - 7)) == .seconds(7))
        for bad in ["Tue, 29 Feb 2000 24:00:00 GMT", "Tue, 00 Feb 2000 00:00:00 GMT", "Tue, 32 Feb 2000 00:00:00 GMT",
                    "Tue, 29 Fev 2000 00:00:00 GMT", "Tue, 29 Feb 200 00:00:00 GMT", "Tue, 29 Feb 2000 00:60:00 GMT"] {
            #expect(HTTPRetryPolicy.retryAfter(bad) == nil, "\(bad)")
        }
    }

    @Test func civilDatesRoundTripThroughTheSecondCount() throws {
        for seconds in [0, -1, 86_399, 86_400, 951_782_399, 951_868_800, -62_135_596_800, 253_402_300_799] {
            let moment = UTCDateTime(secondsSince1970: seconds)
            #expect(moment.secondsSince1970 == seconds, "\(moment)")
        }
        #expect(UTCDateTime(secondsSince1970: -62_135_596_800) == UTCDateTime(year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        #expect(UTCDateTime(secondsSince1970: 951_868_799) == UTCDateTime(year: 2000, month: 2, day: 29, hour: 23, minute: 59, second: 59))
        // The extremes are reached without a trap.
        #expect(UTCDateTime(secondsSince1970: .min).second >= 0 && UTCDateTime(secondsSince1970: .max).second < 60)
        #expect(UTCDateTime(year: 2000, month: 13, day: 1, hour: 0, minute: 0, second: 0) == nil)
        #expect(UTCDateTime(year: 2000, month: 1, day: 1, hour: 0, minute: 0, second: 61) == nil)
        #expect(UTCDateTime(year: .max, month: 1, day: 1, hour: 0, minute: 0, second: 0) == nil)
        #expect(try #require(UTCDateTime(year: 2001, month: 2, day: 31, hour: 0, minute: 0, second: 0)).secondsSince1970 == 983_577_600)
    }
}
