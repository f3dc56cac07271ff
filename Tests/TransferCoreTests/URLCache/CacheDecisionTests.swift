import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Every URLRequest.CachePolicy against a fresh, a stale and a missing stored response.
@Suite struct CacheDecisionTests {
    static let t0 = CacheFreshnessTests.t0
    static let fresh = CacheFreshnessTests.response(["Cache-Control": "max-age=600", "Date": CacheFreshnessTests.t0Text, "ETag": "\"v1\""])
    static let stale = CacheFreshnessTests.response(["Cache-Control": "max-age=0", "ETag": "\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
    static let staleWithoutValidators = CacheFreshnessTests.response(["Cache-Control": "max-age=0"])
    static let noCache = CacheFreshnessTests.response(["Cache-Control": "no-cache, max-age=600", "ETag": "\"v1\""])

    static func decide(_ policy: CachePolicy, _ stored: CachedResponse?, request: String = "") -> CacheDecision {
        CacheDecision.decide(policy: policy, request: CacheControl(parsing: request), stored: stored, now: t0 + 1)
    }

    static let validators = ["If-None-Match": "\"v1\"", "If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]

    @Test func useProtocolCachePolicy() {
        #expect(Self.decide(.useProtocolCachePolicy, Self.fresh) == .serve)
        #expect(Self.decide(.useProtocolCachePolicy, Self.stale) == .revalidate(Self.validators))
        #expect(Self.decide(.useProtocolCachePolicy, Self.staleWithoutValidators) == .load([:]))
        #expect(Self.decide(.useProtocolCachePolicy, Self.noCache) == .revalidate(["If-None-Match": "\"v1\""]))
        #expect(Self.decide(.useProtocolCachePolicy, nil) == .load([:]))
        #expect(Self.decide(.useProtocolCachePolicy, Self.fresh, request: "no-cache") == .revalidate(["If-None-Match": "\"v1\""]))
        #expect(Self.decide(.useProtocolCachePolicy, nil, request: "only-if-cached") == .fail)
        #expect(Self.decide(.useProtocolCachePolicy, Self.stale, request: "only-if-cached") == .fail)
    }

    @Test func reloadPolicies() {
        #expect(Self.decide(.reloadIgnoringLocalCacheData, Self.fresh) == .load([:]))
        #expect(Self.decide(.reloadIgnoringLocalAndRemoteCacheData, Self.fresh) == .load(["Cache-Control": "no-cache", "Pragma": "no-cache"]))
        #expect(Self.decide(.reloadRevalidatingCacheData, Self.fresh) == .revalidate(["If-None-Match": "\"v1\""]))
        #expect(Self.decide(.reloadRevalidatingCacheData, Self.staleWithoutValidators) == .load([:]))
        #expect(Self.decide(.reloadRevalidatingCacheData, nil) == .load([:]))
    }

    @Test func returnCacheDataPoliciesServeAnyAge() {
        let mustRevalidate = CacheFreshnessTests.response(["Cache-Control": "max-age=0, must-revalidate"])
        for stored in [Self.fresh, Self.stale, Self.noCache, mustRevalidate] {
            #expect(Self.decide(.returnCacheDataElseLoad, stored) == .serve)
            #expect(Self.decide(.returnCacheDataDontLoad, stored) == .serve)
        }
        #expect(Self.decide(.returnCacheDataElseLoad, nil) == .load([:]))
        #expect(Self.decide(.returnCacheDataDontLoad, nil) == .fail)
    }

    @Test func aNotModifiedUpdatesTheStoredHeadButNotItsContentFields() {
        let stored = CacheFreshnessTests.response(["Content-Type": "application/json", "Content-Length": "12", "ETag": "\"v1\"", "Cache-Control": "max-age=0"])
        let merged = stored.updated(byNotModified: ["cache-control": "max-age=60", "Content-Type": "text/html", "Content-Length": "0", "X-New": "1"],
                                    requestTime: Self.t0 + 5, responseTime: Self.t0 + 6)
        #expect(merged.header("Cache-Control") == "max-age=60")
        #expect(merged.headers.keys.filter { $0.lowercased() == "cache-control" }.count == 1)
        #expect(merged.header("Content-Type") == "application/json")
        #expect(merged.header("Content-Length") == "12")
        #expect(merged.header("X-New") == "1")
        #expect(merged.responseTime == Self.t0 + 6)
    }

    @Test func varySelectsByTheNamedRequestHeaders() {
        var stored = CacheFreshnessTests.response(["Vary": "Accept-Language, accept"])
        stored.varyingRequestHeaders = CachedResponse.values(of: CachedResponse.varyNames(stored.headers), in: ["accept-language": "de", "X": "y"])
        #expect(stored.matches(requestHeaders: ["Accept-Language": "de"]))
        #expect(!stored.matches(requestHeaders: ["Accept-Language": "fr"]))
        #expect(!stored.matches(requestHeaders: ["Accept-Language": "de", "Accept": "text/html"]))
        #expect(!CacheFreshnessTests.response(["Vary": "*"]).matches(requestHeaders: [:]))
    }
}
