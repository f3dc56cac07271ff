import Testing
@testable import TransferAPI

/// The router alone: parameters bound, 405 with the allowed methods, 404 for unknown paths.
@Suite struct RouterMatchingTests {
    private func router() -> Router {
        var router = Router()
        router.add("GET", "/v1/tasks/{tid}") { _ in .json(["route": "get"]) }
        router.add("PATCH", "/v1/tasks/{tid}") { _ in .json(["route": "patch"]) }
        router.add("POST", "/v1/tasks/{tid}/cancel") { _ in .json(["route": "cancel"]) }
        return router
    }

    @Test func bindsPathParameters() throws {
        guard case .found(_, let parameters, _) = router().match(method: "GET", path: "/v1/tasks/42") else {
            Issue.record("GET /v1/tasks/42 did not match")
            return
        }
        #expect(parameters == ["tid": "42"])
    }

    @Test func otherMethodOnAKnownPathIsMethodNotAllowed() {
        guard case .methodNotAllowed(let allowed) = router().match(method: "DELETE", path: "/v1/tasks/42") else {
            Issue.record("DELETE /v1/tasks/42 was not a 405")
            return
        }
        #expect(allowed.sorted() == ["GET", "PATCH"])
    }

    @Test(arguments: ["/v1/tasks", "/v1/tasks/42/cancel/now", "/v2/tasks/42", "/"])
    func unknownPathIsNotFound(path: String) {
        guard case .notFound = router().match(method: "GET", path: path) else {
            Issue.record("\(path) should not match")
            return
        }
    }

    @Test func headIsServedByGet() {
        guard case .found = router().match(method: "HEAD", path: "/v1/tasks/7") else {
            Issue.record("HEAD should use the GET route")
            return
        }
    }
}

/// The route pattern that metrics and the access log name a request by.
@Suite struct RouterResolutionTests {
    private func router() -> Router {
        var router = Router()
        router.add("GET", "/v1/tasks/{tid}") { _ in .json(["route": "get"]) }
        router.add("POST", "/v1/tasks/{tid}/cancel") { _ in .json(["route": "cancel"]) }
        return router
    }

    @Test func aMatchNamesItsPatternNotThePath() {
        #expect(router().resolve(method: "GET", path: "/v1/tasks/42").pattern == "/v1/tasks/{tid}")
        #expect(router().resolve(method: "POST", path: "/v1/tasks/7/cancel").pattern == "/v1/tasks/{tid}/cancel")
        #expect(router().resolve(method: "HEAD", path: "/v1/tasks/42").pattern == "/v1/tasks/{tid}")
    }

    @Test func aWrongMethodKeepsThePatternAndNoRouteHasNone() {
        #expect(router().resolve(method: "DELETE", path: "/v1/tasks/42").pattern == "/v1/tasks/{tid}")
        #expect(router().resolve(method: "GET", path: "/v1/nothing/42").pattern == nil)
    }
}
