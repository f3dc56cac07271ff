import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Freshness lifetime, age and storability (RFC 9111 sections 3 and 4.2), with a fixed clock.
@Suite struct CacheFreshnessTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
    static let t0Text = "Tue, 14 Nov 2023 22:13:20 GMT"

    static func response(_ headers: [String: String], status: Int = 200, requestTime: Date = t0, responseTime: Date = t0) -> CachedResponse {
        CachedResponse(statusCode: status, headers: headers, url: "http://h/x", varyingRequestHeaders: [:],
                       requestTime: requestTime, responseTime: responseTime)
    }

    @Test func maxAgeWinsOverExpires() {
        let r = Self.response(["Cache-Control": "max-age=60", "Date": Self.t0Text, "Expires": "Tue, 14 Nov 2023 23:13:20 GMT"])
        #expect(CacheFreshness.lifetime(of: r) == 60)
    }

    @Test func expiresMinusDate() {
        let r = Self.response(["Date": Self.t0Text, "Expires": "Tue, 14 Nov 2023 22:23:20 GMT"])
        #expect(CacheFreshness.lifetime(of: r) == 600)
        #expect(CacheFreshness.lifetime(of: Self.response(["Date": Self.t0Text, "Expires": "0"])) == 0)
    }

    @Test func heuristicIsATenthOfTheTimeSinceLastModifiedCappedAtADay() {
        let tenHours = Self.response(["Date": Self.t0Text, "Last-Modified": "Tue, 14 Nov 2023 12:13:20 GMT"])
        #expect(CacheFreshness.lifetime(of: tenHours) == 3_600)
        let years = Self.response(["Date": Self.t0Text, "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(CacheFreshness.lifetime(of: years) == 86_400)
        // Not heuristically cacheable without an explicit lifetime: 0.
        let created = Self.response(["Date": Self.t0Text, "Last-Modified": "Tue, 14 Nov 2023 12:13:20 GMT"], status: 201)
        #expect(CacheFreshness.lifetime(of: created) == 0)
    }

    @Test func currentAgeAddsAgeDelayAndResidentTime() {
        // Sent at t0, answered 2 s later with Age 10 and a Date 1 s before the answer arrived.
        let r = Self.response(["Age": "10", "Date": "Tue, 14 Nov 2023 22:13:21 GMT"], requestTime: Self.t0, responseTime: Self.t0 + 2)
        // apparent age 1, corrected age value 10 + 2 = 12, resident 30: 42.
        #expect(CacheFreshness.currentAge(of: r, now: Self.t0 + 32) == 42)
        // A Date far behind the arrival: the apparent age wins.
        let late = Self.response(["Date": "Tue, 14 Nov 2023 22:12:20 GMT"], responseTime: Self.t0)
        #expect(CacheFreshness.currentAge(of: late, now: Self.t0) == 60)
    }

    @Test func freshUntilItsAgeReachesItsLifetime() {
        let r = Self.response(["Cache-Control": "max-age=60", "Date": Self.t0Text])
        let plain = CacheControl()
        #expect(CacheDecision.isServable(r, request: plain, now: Self.t0 + 59))
        #expect(!CacheDecision.isServable(r, request: plain, now: Self.t0 + 61))
        // The request's own limits.
        #expect(!CacheDecision.isServable(r, request: CacheControl(parsing: "max-age=10"), now: Self.t0 + 20))
        #expect(!CacheDecision.isServable(r, request: CacheControl(parsing: "min-fresh=50"), now: Self.t0 + 20))
        #expect(CacheDecision.isServable(r, request: CacheControl(parsing: "max-stale=30"), now: Self.t0 + 80))
        #expect(!CacheDecision.isServable(r, request: CacheControl(parsing: "max-stale=10"), now: Self.t0 + 80))
        let strict = Self.response(["Cache-Control": "max-age=60, must-revalidate", "Date": Self.t0Text])
        #expect(!CacheDecision.isServable(strict, request: CacheControl(parsing: "max-stale"), now: Self.t0 + 80))
    }

    @Test func storability() {
        func storable(_ status: Int, _ headers: [String: String], request: String = "") -> Bool {
            CacheFreshness.isStorable(ResponseInfo(statusCode: status, headers: headers, url: "http://h/x"), request: CacheControl(parsing: request))
        }
        #expect(storable(200, [:]))
        #expect(storable(404, [:]))
        #expect(storable(200, ["Cache-Control": "private, max-age=5"]))
        #expect(!storable(200, ["Cache-Control": "no-store"]))
        #expect(!storable(200, [:], request: "no-store"))
        #expect(!storable(200, ["Vary": "Accept, *"]))
        #expect(!storable(201, [:]))
        #expect(storable(201, ["Cache-Control": "max-age=5"]))
        #expect(!storable(206, ["Cache-Control": "max-age=5"]))
        #expect(!storable(500, [:]))
    }
}
