import HTTPServer
import Testing

@Suite struct HTTPHeadersTests {
    @Test func lookupIgnoresCaseAndReturnsTheFirstValue() {
        var headers = HTTPHeaders([("Content-Type", "text/plain"), ("X-A", "1")])
        headers.add(name: "x-a", value: "2")
        #expect(headers["content-type"] == "text/plain")
        #expect(headers["X-A"] == "1")
        #expect(headers.values(name: "X-a") == ["1", "2"])
        #expect(headers["missing"] == nil)
        #expect(headers.map(\.name) == ["Content-Type", "X-A", "x-a"])
    }

    @Test func replaceOrAddKeepsThePositionAndDropsDuplicates() {
        var headers = HTTPHeaders([("A", "1"), ("B", "2"), ("a", "3")])
        headers.replaceOrAdd(name: "A", value: "9")
        #expect(headers.map(\.name) == ["A", "B"])
        #expect(headers["a"] == "9")
        headers.replaceOrAdd(name: "C", value: "4")
        #expect(headers.map(\.value) == ["9", "2", "4"])
    }
}
