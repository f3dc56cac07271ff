import Foundation
import HTTPServer
import Testing
import TestSupport
@testable import TransferAPI
@testable import TransferModel

/// The create-task bodies read straight from their bytes (`TaskCreate.read`,
/// `TaskBatchCreate.read`) against the decoder every other body goes through
/// (`APIRequest.decode`, i.e. the trailing-comma check and `JSONCoding.decoder`): the same
/// value for every body the old path took, the same error (status, code, message, field) for
/// every body it refused. The common shapes must really take the fast path, or the comparison
/// would prove nothing.
@Suite struct TaskCreateReaderTests {
    /// What a decode gave: the value's fields as text, or the error as the client sees it.
    enum Outcome: Equatable, CustomStringConvertible {
        case value([String: String])
        case error(APIError)

        var description: String {
            switch self {
            case .value(let fields): return fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            case .error(let error): return "\(error.status) \(error.code) \(error.field ?? "-"): \(error.message)"
            }
        }
    }

    // MARK: bodies

    static let url = "http://127.0.0.1:9/files/f00000"

    /// Bodies of the common shape: each must be read by the fast reader.
    static let common: [String] = [
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/files/f00000"},"state":"suspended"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/files/f00000"}}"#,
        " \n\t{ \"kind\" : \"download\" ,\r\n \"request\" : { \"url\" : \"https://example.test/a?b=c&d=%20\" } , \"destination\" : \"x/y.bin\" , \"conflict\" : \"rename\" } \n",
        #"{"request":{"url":"http://127.0.0.1:9/"},"kind":"download","conflict":"replace","destination":"a.bin"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":"low"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":"default"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":"high"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":0}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":1}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":1.0}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":0.3333333333333333}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":-0}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":null}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":"a\"b\\c\/d\n\t\b\f\r\u00e9\u4e2d\u0041"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":"héllo wörld ✓ 中文"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":""#.appending(String(repeating: "é", count: 1000)) + #""}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","method":"POST","headers":{"X-A":"1","Accept":"*/*","X-Empty":""},"body":{"text":"hello"}}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/up","method":"PUT","body":{"text":""}}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/up","method":"PUT","body":{"base64":"aGVs bG8=\n"}}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/up","body":{"blob":"b-1"}}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/up","body":{"file":"dir/a.txt"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","cachePolicy":"reloadIgnoringLocalCacheData","timeoutInterval":30,"networkServiceType":"background","allowsCellularAccess":false,"httpShouldHandleCookies":false,"mainDocumentURL":"http://127.0.0.1:9/main"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","timeoutInterval":2.5,"httpShouldHandleCookies":true}}"#,
        #"{"kind":"download","request":{"url":"ftp://127.0.0.1:9/a"},"state":"running","description":"d"}"#,
        #"{"kind":"data","request":{"url":"data:text/plain,hello"}}"#,
        #"{"kind":"data","request":{"url":"gopher://127.0.0.1:9/"}}"#,
    ]

    /// Bodies the fast reader must leave to the decoder: other fields, or ones it is unsure of.
    static let otherShapes: [String] = [
        #"{"kind":"download","request":{"url":"http://127.0.0.1:9/"},"checksum":"sha-256=2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"bandwidthLimit":{"downloadBytesPerSecond":1000}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"earliestBeginDate":"2026-01-01T00:00:00Z"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"responseDisposition":{"default":"allow"}}"#,
        #"{"kind":"stream","host":"127.0.0.1","port":9}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","body":{"json":{"a":[1,2.5,null,true,"x"]}}}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/","body":{"stream":true}}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/","method":"POST","body":{"text":"a"}},"resumable":"tus"}"#,
        #"{"k\u0069nd":"data","request":{"url":"http://127.0.0.1:9/"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":1e-1}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":5E-1}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":"\ud83d\ude00"}"#,
        #"{"kind":"data","kind":"download","request":{"url":"http://127.0.0.1:9/"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","headers":{"X-A":"1","X-A":"2"}}}"#,
        "\u{FEFF}" + #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}"#,
    ]

    /// Bodies the old path refuses; every error must come back as it was.
    static let bad: [String] = [
        "", "{}", "[]", "[1, 2]", #""a string""#, "null", "5", "not json at all", "{", #"{"kind": "#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"}} x"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/",}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","headers":{"A":"1",}}}"#,
        #"{"request":{"url":"http://127.0.0.1:9/"}}"#,
        #"{"kind":"data"}"#,
        #"{"kind":"data","request":{}}"#,
        #"{"kind":"data","request":null}"#,
        #"{"kind":"data","request":"http://127.0.0.1:9/"}"#,
        #"{"kind":"data","request":{"url":5}}"#,
        #"{"kind":"data","request":{"url":null}}"#,
        #"{"kind":5,"request":{"url":"http://127.0.0.1:9/"}}"#,
        #"{"kind":"fetch","request":{"url":"http://127.0.0.1:9/"}}"#,
        #"{"kind":null,"request":{"url":"http://127.0.0.1:9/"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priorty":1}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","bdy":{"text":"a"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"state":"completed"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"state":"paused"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"state":null}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"state":true}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":1.5}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":-0.1}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":"urgent"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":null}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":01}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"priority":.5}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":1}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":""#.appending(String(repeating: "a", count: 1001)) + #""}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"destination":"a.bin"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"conflict":"replace"}"#,
        #"{"kind":"download","request":{"url":"http://127.0.0.1:9/"},"destination":null}"#,
        #"{"kind":"download","request":{"url":"http://127.0.0.1:9/"},"destination":"a","conflict":"overwrite"}"#,
        #"{"kind":"data","request":{"url":"not a url"}}"#,
        #"{"kind":"data","request":{"url":"http://"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/a b"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","method":"G ET"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","method":""}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","method":7}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","headers":{"A":null}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","headers":["A"]}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","headers":{"X-A":"a\r\nB: c"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","headers":{"Bad Name":"a"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","timeoutInterval":0}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","timeoutInterval":"1"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","cachePolicy":"never"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","networkServiceType":"fast"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","httpShouldHandleCookies":"yes"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","mainDocumentURL":"nope"}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/","method":"PUT"}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","body":{}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","body":{"text":"a","file":"b"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","body":{"text":5}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","body":{"txt":"a"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/","body":"raw"}}"#,
        #"{"kind":"upload","request":{"url":"http://127.0.0.1:9/","body":{"base64":"@@@@"}}}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":"a\qb"}"#,
        #"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":"\u12"}"#,
        "{\"kind\":\"data\",\"request\":{\"url\":\"http://127.0.0.1:9/\"},\"description\":\"a\u{1}b\"}",
    ]

    /// Not UTF-8 inside a string, and outside one.
    static let notUTF8: [Data] = [
        Data(#"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":""#.utf8) + Data([0xC3, 0x28]) + Data(#""}"#.utf8),
        Data(#"{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"description":""#.utf8) + Data([0xFF]) + Data(#""}"#.utf8),
        Data([0xFF]) + Data(#"{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}"#.utf8),
    ]

    // MARK: tests

    @Test(arguments: common)
    func theCommonShapeIsReadFromTheBytesAsTheDecoderReadsIt(body: String) {
        let data = Data(body.utf8)
        #expect(TaskCreate.read(json: data) != nil, "the fast reader left a common body to the decoder")
        let reference = Self.reference(data)
        guard case .value = reference else {
            Issue.record("the decoder refused a common body: \(reference)")
            return
        }
        #expect(Self.fast(data) == reference)
    }

    @Test(arguments: otherShapes)
    func otherShapesAreLeftToTheDecoder(body: String) {
        let data = Data(body.utf8)
        #expect(TaskCreate.read(json: data) == nil)
        #expect(Self.fast(data) == Self.reference(data))
    }

    @Test(arguments: bad)
    func everyRefusalIsTheOldOne(body: String) {
        let data = Data(body.utf8)
        let reference = Self.reference(data)
        guard case .error = reference else {
            Issue.record("a bad body was taken: \(reference)")
            return
        }
        #expect(TaskCreate.read(json: data) == nil)
        #expect(Self.fast(data) == reference)
    }

    @Test func bytesThatAreNotUTF8AreRefusedAsBefore() {
        for data in Self.notUTF8 {
            #expect(TaskCreate.read(json: data) == nil)
            #expect(Self.fast(data) == Self.reference(data))
        }
    }

    @Test func aBodyThatIsNotDeclaredJSONIsRefusedAsBefore() {
        let body = Data(#"{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}"#.utf8)
        for contentType in ["text/plain", "application/jsonx", "application/json-patch+json", nil] {
            let request = Self.request(body, contentType: contentType)
            #expect(Self.outcome { try request.decodeTaskCreate() } == Self.outcome { try request.decode(TaskCreate.self) }, "\(contentType ?? "none")")
        }
        for contentType in ["Application/JSON", " application/json ; charset=utf-8", "application/json;charset=utf-8"] {
            let request = Self.request(body, contentType: contentType)
            #expect(Self.outcome { try request.decodeTaskCreate() } == Self.outcome { try request.decode(TaskCreate.self) }, "\(contentType)")
        }
    }

    /// Every common body with one byte deleted, inserted, doubled or swapped (a fixed seed):
    /// whatever the fast reader takes, the decoder takes as the same value; whatever it
    /// refuses is answered as before.
    @Test func mutatedBodiesGiveWhatTheDecoderGives() {
        var random = SeededGenerator(seed: 18)
        let alphabet = Array(#",:{}[]"\ x0n-.e"#.utf8) + [0x80, 0xC3, 0x01, 0x09]
        var taken = 0, total = 0
        for body in Self.common {
            let original = Array(body.utf8)
            for _ in 0..<150 {
                var bytes = original
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: at)
                case 2:
                    let end = min(bytes.count, at + 1 + Int(random.next() % 12))
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                default:
                    let other = Int(random.next() % UInt64(bytes.count))
                    bytes.swapAt(at, other)
                }
                let data = Data(bytes)
                let reference = Self.reference(data)
                if let read = TaskCreate.read(json: data) {
                    taken += 1
                    #expect(.value(Self.fields(read)) == reference, "\(String(decoding: bytes, as: UTF8.self))")
                }
                total += 1
                #expect(Self.fast(data) == reference, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        // Some mutations stay valid (a space, a digit in a URL): the comparison saw both sides.
        #expect(taken > 0 && taken < total)
    }

    // MARK: batches

    @Test func aBatchOfCommonSpecsIsReadFromTheBytes() throws {
        let body = Data(("{\"tasks\": [" + Self.common.joined(separator: ",\n") + "]}").utf8)
        let batch = try #require(TaskBatchCreate.read(json: body))
        #expect(batch.tasks.count == Self.common.count)
        #expect(Self.fastBatch(body) == Self.referenceBatch(body))
    }

    /// One spec of another shape is decoded alone; the others stay on the fast path.
    @Test func aSpecOfAnotherShapeIsDecodedAlone() throws {
        let specs = Self.common + Self.otherShapes.filter { !$0.hasPrefix("\u{FEFF}") }
        let body = Data(("{\"tasks\":[" + specs.joined(separator: ",") + "]}").utf8)
        #expect(TaskBatchCreate.read(json: body) != nil)
        let reference = Self.referenceBatch(body)
        #expect(!reference.contains { if case .error = $0 { true } else { false } }, "\(reference)")
        #expect(Self.fastBatch(body) == reference)
    }

    @Test(arguments: bad.filter { !$0.isEmpty })
    func aBadSpecInABatchIsRefusedAsBefore(spec: String) {
        let body = Data(("{\"tasks\":[" + Self.common[0] + "," + Self.common[1] + "," + spec + "]}").utf8)
        #expect(TaskBatchCreate.read(json: body) == nil)
        #expect(Self.fastBatch(body) == Self.referenceBatch(body))
    }

    @Test(arguments: [
        #"{"tasks":[]}"#, #"{}"#, #"{"tasks":null}"#, #"{"tasks":{}}"#, #"{"task":[]}"#, "[]",
        #"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}],"more":1}"#,
        #"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"}},]}"#,
        #"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}],}"#,
        #"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"},"bandwidthLimit":{"downloadBytesPerSecond":1,}}]}"#,
        #"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}]"#,
        #"{"tasks":[{"kind":"data","request":{"url":"http://127.0.0.1:9/"}}]} ]"#,
    ])
    func aBadBatchIsRefusedAsBefore(body: String) {
        let data = Data(body.utf8)
        #expect(TaskBatchCreate.read(json: data) == nil)
        #expect(Self.fastBatch(data) == Self.referenceBatch(data))
    }

    @Test func theBatchLimitIsTheDecoders() {
        let spec = Self.common[0]
        for count in [TaskBatchCreate.maxCount, TaskBatchCreate.maxCount + 1] {
            let body = Data(("{\"tasks\":[" + Array(repeating: spec, count: count).joined(separator: ",") + "]}").utf8)
            #expect((TaskBatchCreate.read(json: body) != nil) == (count <= TaskBatchCreate.maxCount))
            let fast = Self.fastBatch(body), reference = Self.referenceBatch(body)
            #expect(fast.count == reference.count && fast == reference, "\(count) specs")
        }
    }

    // MARK: helpers

    static func request(_ body: Data, contentType: String? = "application/json") -> APIRequest {
        let headers = HTTPHeaders(contentType.map { [("Content-Type", $0)] } ?? [])
        return APIRequest(http: HTTPRequest(head: HTTPRequestHead(id: 1, method: "POST", path: "/v1/sessions/shared/tasks", headers: headers), body: body))
    }

    static func outcome(_ decode: () throws -> TaskCreate) -> Outcome {
        do { return .value(fields(try decode())) } catch { return .error(APIError.from(error)) }
    }

    static func fast(_ body: Data) -> Outcome { outcome { try request(body).decodeTaskCreate() } }
    static func reference(_ body: Data) -> Outcome { outcome { try request(body).decode(TaskCreate.self) } }

    static func batchOutcomes(_ decode: () throws -> TaskBatchCreate) -> [Outcome] {
        do { return try decode().tasks.map { .value(fields($0)) } } catch { return [.error(APIError.from(error))] }
    }

    static func fastBatch(_ body: Data) -> [Outcome] { batchOutcomes { try request(body).decodeTaskBatch() } }
    static func referenceBatch(_ body: Data) -> [Outcome] { batchOutcomes { try request(body).decode(TaskBatchCreate.self) } }

    /// Every field of a create request, nested ones included, as text.
    static func fields(_ task: TaskCreate) -> [String: String] {
        func text(_ value: Any?) -> String { value.map { String(reflecting: $0) } ?? "nil" }
        var fields: [String: String] = [
            "kind": task.kind.rawValue, "priority": "\(task.priority.value)", "priority.sign": "\(task.priority.value.sign)",
            "description": text(task.description), "state": task.state.rawValue,
            "destination": text(task.destination), "conflict": text(task.conflict), "resumeData": text(task.resumeData),
            "resumable": text(task.resumable), "earliestBeginDate": text(task.earliestBeginDate),
            "bandwidthLimit": text(task.bandwidthLimit), "responseDisposition": text(task.responseDisposition),
            "stream": text(task.stream), "checksum": text(task.checksum),
        ]
        if let request = task.request {
            fields["request.url"] = request.url
            fields["request.method"] = request.method
            fields["request.headers"] = request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
            fields["request.body"] = text(request.body)
            fields["request.body.bytes"] = text(request.body?.inlineData.map { Array($0) })
            fields["request.cachePolicy"] = text(request.cachePolicy)
            fields["request.timeoutInterval"] = text(request.timeoutInterval)
            fields["request.networkServiceType"] = text(request.networkServiceType)
            fields["request.httpShouldHandleCookies"] = "\(request.httpShouldHandleCookies)"
            fields["request.mainDocumentURL"] = text(request.mainDocumentURL)
        }
        return fields
    }
}
