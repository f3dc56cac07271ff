import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Cache-Control parsing (RFC 9111 section 5.2) as the cache reads requests and responses.
@Suite struct CacheControlTests {
    @Test func readsTheDirectivesAndTheirArguments() {
        let control = CacheControl(parsing: "Public, MAX-AGE=\"60\", no-cache=\"Set-Cookie, X-A\", must-revalidate, private, x-ext=1")
        #expect(control.maxAge == 60)
        #expect(control.isPublic && control.isPrivate && control.noCache && control.mustRevalidate)
        #expect(!control.noStore && !control.invalidMaxAge)
    }

    @Test func requestDirectives() {
        let control = CacheControl(parsing: "max-stale, min-fresh=5, only-if-cached, no-store")
        #expect(control.maxStale == CacheControl.anyStaleness)
        #expect(control.minFresh == 5)
        #expect(control.onlyIfCached && control.noStore)
        #expect(CacheControl(parsing: "max-stale=30").maxStale == 30)
    }

    @Test(arguments: ["max-age=abc", "max-age=-1", "max-age=", "max-age"])
    func anInvalidMaxAgeMakesTheResponseStale(_ value: String) {
        let control = CacheControl(parsing: value)
        #expect(control.maxAge == nil)
        #expect(control.invalidMaxAge)
    }

    @Test func hugeDeltaSecondsAreClamped() {
        #expect(CacheControl(parsing: "max-age=99999999999999999999999").maxAge == Int(Int32.max))
    }

    @Test func aRequestPragmaNoCacheCountsOnlyWithoutCacheControl() {
        #expect(CacheControl(headers: ["pragma": "no-cache"], isRequest: true).noCache)
        #expect(!CacheControl(headers: ["Pragma": "no-cache", "Cache-Control": "max-age=5"], isRequest: true).noCache)
        #expect(!CacheControl(headers: ["Pragma": "no-cache"], isRequest: false).noCache)
    }
}
