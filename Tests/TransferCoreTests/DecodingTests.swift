import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Strict decoding of client input: unknown keys are errors with their dotted path, values out
/// of range are `InputError.invalidValue`, and absent keys take Apple's defaults.
@Suite struct DecodingTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONCoding.decoder.decode(T.self, from: Data(json.utf8))
    }

    /// The field of the `InputError.invalidValue` that decoding `json` throws, or a recorded issue.
    private func invalidField<T: Decodable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let error = #expect(throws: InputError.self, sourceLocation: sourceLocation) { try decode(T.self, json) }
        guard case .invalidValue(let field, let message)? = error else {
            Issue.record("expected invalidValue, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        #expect(!message.isEmpty, sourceLocation: sourceLocation)
        return field
    }

    private func notImplementedField<T: Decodable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let error = #expect(throws: InputError.self, sourceLocation: sourceLocation) { try decode(T.self, json) }
        guard case .notImplemented(let field, _)? = error else {
            Issue.record("expected notImplemented, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return field
    }

    /// The dotted path of the DecodingError (missing key or enum value not allowed).
    private func decodingErrorPath<T: Decodable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let error = #expect(throws: DecodingError.self, sourceLocation: sourceLocation) { try decode(T.self, json) }
        switch error {
        case .keyNotFound(let key, let context)?: return fieldPath(context.codingPath + [key])
        case .dataCorrupted(let context)?: return fieldPath(context.codingPath)
        case .typeMismatch(_, let context)?: return fieldPath(context.codingPath)
        default: return nil
        }
    }

    // MARK: SessionConfiguration

    @Test func sessionConfigurationDefaultsAreApples() throws {
        let configuration = try decode(SessionConfiguration.self, "{}")
        #expect(configuration == SessionConfiguration())
        #expect(configuration.timeoutIntervalForRequest == 60)
        #expect(configuration.timeoutIntervalForResource == 7 * 24 * 3600)
        #expect(configuration.httpMaximumConnectionsPerHost == 6)
        #expect(configuration.requestCachePolicy == .useProtocolCachePolicy)
        #expect(configuration.networkServiceType == .default)
        #expect(configuration.allowsCellularAccess && configuration.allowsExpensiveNetworkAccess && configuration.allowsConstrainedNetworkAccess)
        #expect(!configuration.isDiscretionary && configuration.sessionSendsLaunchEvents && !configuration.waitsForConnectivity)
        #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv12)
        #expect(configuration.tlsMaximumSupportedProtocolVersion == .TLSv13)
        #expect(configuration.tlsVerifiesServerCertificate)
        #expect(!configuration.httpShouldUsePipelining && configuration.httpShouldSetCookies)
        #expect(configuration.httpCookieAcceptPolicy == .onlyFromMainDocumentDomain)
        #expect(configuration.httpAdditionalHeaders.isEmpty)
        #expect(configuration.connectionProxyDictionary == nil)
    }

    @Test func sessionConfigurationTakesGivenValues() throws {
        let configuration = try decode(SessionConfiguration.self, """
            {"timeoutIntervalForRequest": 2.5, "timeoutIntervalForResource": 30, "httpMaximumConnectionsPerHost": 64,
             "networkServiceType": "background", "requestCachePolicy": "reloadIgnoringLocalCacheData",
             "httpAdditionalHeaders": {"X-Client": "tests"}, "allowsCellularAccess": false,
             "tlsMinimumSupportedProtocolVersion": "TLSv13", "connectionProxyDictionary": {"HTTPEnable": true, "HTTPProxy": "p", "HTTPPort": 1}}
            """)
        #expect(configuration.timeoutIntervalForRequest == 2.5)
        #expect(configuration.timeoutIntervalForResource == 30)
        #expect(configuration.httpMaximumConnectionsPerHost == 64)
        #expect(configuration.networkServiceType == .background)
        #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
        #expect(configuration.httpAdditionalHeaders == ["X-Client": "tests"])
        #expect(!configuration.allowsCellularAccess)
        #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv13)
        #expect(configuration.connectionProxyDictionary?.http.host == "p")
    }

    @Test func tlsVerificationOffIsKeptAndEncodedAndAllowedWithPins() throws {
        let pin = "sha256//" + String(repeating: "A", count: 43) + "="
        let configuration = try decode(SessionConfiguration.self, #"{"tlsVerifiesServerCertificate": false, "tlsPinnedPublicKeys": ["\#(pin)"]}"#)
        #expect(!configuration.tlsVerifiesServerCertificate)
        #expect(configuration.tlsPinnedPublicKeys == [pin])
        let encoded = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(configuration)) as? [String: Any]
        #expect(encoded?["tlsVerifiesServerCertificate"] as? Bool == false)
        #expect(try decode(SessionConfiguration.self, String(decoding: try JSONEncoder().encode(configuration), as: UTF8.self)) == configuration)
    }

    @Test func sessionConfigurationUnknownKey() {
        #expect(throws: InputError.unknownField("timeoutIntervalForRequst")) {
            try decode(SessionConfiguration.self, #"{"timeoutIntervalForRequst": 5}"#)
        }
    }

    @Test(arguments: [
        (#"{"timeoutIntervalForRequest": 0}"#, "timeoutIntervalForRequest"),
        (#"{"timeoutIntervalForRequest": -1}"#, "timeoutIntervalForRequest"),
        (#"{"timeoutIntervalForResource": 0}"#, "timeoutIntervalForResource"),
        (#"{"timeoutIntervalForResource": 1e12}"#, "timeoutIntervalForResource"),
        (#"{"httpMaximumConnectionsPerHost": 0}"#, "httpMaximumConnectionsPerHost"),
        (#"{"httpMaximumConnectionsPerHost": 65}"#, "httpMaximumConnectionsPerHost"),
        (#"{"maximumConcurrentTasks": 0}"#, "maximumConcurrentTasks"),
        (#"{"maximumConcurrentTasks": 10001}"#, "maximumConcurrentTasks"),
        (#"{"maximumSegmentsPerDownload": 0}"#, "maximumSegmentsPerDownload"),
        (#"{"maximumSegmentsPerDownload": 17}"#, "maximumSegmentsPerDownload"),
        (#"{"tlsMinimumSupportedProtocolVersion": "TLSv13", "tlsMaximumSupportedProtocolVersion": "TLSv12"}"#, "tlsMinimumSupportedProtocolVersion"),
        (#"{"httpAdditionalHeaders": {"Bad Name": "x"}}"#, "httpAdditionalHeaders"),
        (#"{"httpAdditionalHeaders": {"X-Inject": "a\r\nEvil: 1"}}"#, "httpAdditionalHeaders"),
    ])
    func sessionConfigurationInvalidValues(json: String, field: String) {
        #expect(invalidField(SessionConfiguration.self, json) == field)
    }

    @Test func sessionConfigurationEnumValueNotAllowed() throws {
        #expect(decodingErrorPath(SessionConfiguration.self, #"{"networkServiceType": "turbo"}"#) == "networkServiceType")
        #expect(decodingErrorPath(SessionConfiguration.self, #"{"httpVersion": "h3"}"#) == "httpVersion")
        #expect(try decode(SessionConfiguration.self, #"{"httpVersion": "h2-prior-knowledge"}"#).httpVersion == .h2PriorKnowledge)
        #expect(try decode(SessionConfiguration.self, "{}").httpVersion == .auto)
        // A fractional connection count is a type error at its field, not malformed JSON.
        #expect(decodingErrorPath(SessionConfiguration.self, #"{"httpMaximumConnectionsPerHost": 2.5}"#) == "httpMaximumConnectionsPerHost")
        #expect(try decode(SessionConfiguration.self, #"{"httpMaximumConnectionsPerHost": 3.0}"#).httpMaximumConnectionsPerHost == 3)
    }

    // MARK: SessionCreate

    @Test func sessionCreateDefaults() throws {
        let create = try decode(SessionCreate.self, "{}")
        #expect(create.kind == .default)
        #expect(create.identifier == nil && create.description == nil)
        #expect(create.configuration == SessionConfiguration())
    }

    @Test func sessionCreateBackground() throws {
        let create = try decode(SessionCreate.self, #"{"kind": "background", "identifier": "com.example.sync", "description": "d"}"#)
        #expect(create.kind == .background)
        #expect(create.identifier == "com.example.sync")
        #expect(create.description == "d")
    }

    @Test func sessionCreateUnknownKeysHaveTheirPath() {
        #expect(throws: InputError.unknownField("configurations")) {
            try decode(SessionCreate.self, #"{"configurations": {}}"#)
        }
        #expect(throws: InputError.unknownField("configuration.httpMaximumConnectionPerHost")) {
            try decode(SessionCreate.self, #"{"configuration": {"httpMaximumConnectionPerHost": 2}}"#)
        }
    }

    @Test func sessionCreateInvalidValues() {
        #expect(invalidField(SessionCreate.self, #"{"configuration": {"httpMaximumConnectionsPerHost": 100}}"#) == "configuration.httpMaximumConnectionsPerHost")
        #expect(invalidField(SessionCreate.self, #"{"identifier": "x"}"#) == "identifier")
        #expect(invalidField(SessionCreate.self, #"{"kind": "background", "identifier": ""}"#) == "identifier")
        let long = String(repeating: "d", count: 1001)
        #expect(invalidField(SessionCreate.self, #"{"description": "\#(long)"}"#) == "description")
        #expect(decodingErrorPath(SessionCreate.self, #"{"kind": "background"}"#) == "identifier")
        #expect(decodingErrorPath(SessionCreate.self, #"{"kind": "foreground"}"#) == "kind")
    }

    // MARK: TaskCreate

    @Test func taskCreateDefaults() throws {
        let create = try decode(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://example.com/"}}"#)
        #expect(create.kind == .data)
        #expect(create.priority == .default)
        #expect(create.priority.value == 0.5)
        #expect(create.state == .running)
        #expect(create.description == nil)
        let request = try #require(create.request)
        #expect(request.url == "http://example.com/")
        #expect(request.method == "GET")
        #expect(request.headers.isEmpty && request.body == nil && request.timeoutInterval == nil)
    }

    @Test func taskCreateSuspendedWithPriority() throws {
        let create = try decode(TaskCreate.self, #"{"kind": "data", "state": "suspended", "priority": "high", "request": {"url": "https://h/x"}}"#)
        #expect(create.state == .suspended)
        #expect(create.priority == .high)
    }

    @Test func taskCreateUnknownKeysHaveTheirPath() {
        #expect(throws: InputError.unknownField("requst")) {
            try decode(TaskCreate.self, #"{"kind": "data", "requst": {"url": "http://h/"}}"#)
        }
        #expect(throws: InputError.unknownField("request.timeout")) {
            try decode(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://h/", "timeout": 5}}"#)
        }
        #expect(throws: InputError.unknownField("request.body.txt")) {
            try decode(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://h/", "method": "POST", "body": {"txt": "x"}}}"#)
        }
    }

    @Test func taskCreateInvalidValues() {
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "state": "completed", "request": {"url": "http://h/"}}"#) == "state")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "state": "canceling", "request": {"url": "http://h/"}}"#) == "state")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "priority": 1.5, "request": {"url": "http://h/"}}"#) == "priority")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "priority": "urgent", "request": {"url": "http://h/"}}"#) == "priority")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://h/", "timeoutInterval": 0}}"#) == "request.timeoutInterval")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://h/", "method": "GE T"}}"#) == "request.method")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://h/", "body": {"base64": "abc"}}}"#) == "request.body.base64")
        let long = String(repeating: "d", count: 1001)
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "description": "\#(long)", "request": {"url": "http://h/"}}"#) == "description")
    }

    @Test func taskCreateNotImplementedKinds() {
        #expect(invalidField(TaskCreate.self, #"{"kind": "upload", "request": {"url": "http://h/"}}"#) == "request.body")
        #expect(invalidField(TaskCreate.self, #"{"kind": "stream", "host": "h", "port": 1, "request": {"url": "http://h/"}}"#) == "request")
        #expect(invalidField(TaskCreate.self, #"{"kind": "stream", "host": "h", "port": 65536}"#) == "port")
        #expect(invalidField(TaskCreate.self, #"{"kind": "stream", "host": "user@h", "port": 25}"#) == "host")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "host": "h", "request": {"url": "http://h/"}}"#) == "host")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "resumeData": "x", "request": {"url": "http://h/"}}"#) == "resumeData")
        #expect(invalidField(TaskCreate.self, #"{"kind": "download", "resumeData": "x", "request": {"url": "http://h/"}}"#) == "request")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "request": {"url": "http://h/", "body": {"stream": true}}}"#) == "request.body.stream")
    }

    @Test func streamTasksDecodeTheirEndpointIntoTheirRequest() throws {
        let create = try decode(TaskCreate.self, #"{"kind": "stream", "host": "::1", "port": 2525, "tls": true}"#)
        #expect(create.stream == StreamEndpoint(host: "::1", port: 2525, tls: true))
        #expect(create.request?.url == "tls://[::1]:2525")
        #expect(StreamEndpoint(url: "tls://[::1]:2525") == create.stream)
        #expect(StreamEndpoint(url: "tcp://127.0.0.1:7") == StreamEndpoint(host: "127.0.0.1", port: 7, tls: false))
        #expect(StreamEndpoint(url: "http://127.0.0.1:7") == nil)
    }

    @Test func downloadTasksDecodeWithADestination() throws {
        let create = try JSONDecoder().decode(TaskCreate.self, from: Data(#"{"kind": "download", "destination": "a/b.bin", "request": {"url": "http://h/f"}}"#.utf8))
        #expect(create.kind == .download)
        #expect(create.destination == "a/b.bin")
        #expect(invalidField(TaskCreate.self, #"{"kind": "data", "destination": "a.bin", "request": {"url": "http://h/"}}"#) == "destination")
    }

    @Test func taskCreateMissingFields() {
        #expect(decodingErrorPath(TaskCreate.self, #"{"request": {"url": "http://h/"}}"#) == "kind")
        #expect(decodingErrorPath(TaskCreate.self, #"{"kind": "data"}"#) == "request")
        #expect(decodingErrorPath(TaskCreate.self, #"{"kind": "data", "request": {}}"#) == "request.url")
        #expect(decodingErrorPath(TaskCreate.self, #"{"kind": "video", "request": {"url": "http://h/"}}"#) == "kind")
    }

    // MARK: RequestSpec

    @Test func requestSpecTakesEverything() throws {
        let spec = try decode(RequestSpec.self, """
            {"url": "http://h/p?q=1", "method": "PUT", "headers": {"X-A": "1", "Content-Type": "text/plain"},
             "body": {"text": "hello"}, "cachePolicy": "reloadIgnoringLocalAndRemoteCacheData",
             "timeoutInterval": 12.5, "networkServiceType": "responsiveData", "allowsCellularAccess": false,
             "httpShouldHandleCookies": true}
            """)
        #expect(spec.url == "http://h/p?q=1")
        #expect(spec.method == "PUT")
        #expect(spec.headers == ["X-A": "1", "Content-Type": "text/plain"])
        #expect(spec.body == .text("hello"))
        #expect(spec.cachePolicy == .reloadIgnoringLocalAndRemoteCacheData)
        #expect(spec.timeoutInterval == 12.5)
        #expect(spec.networkServiceType == .responsiveData)
    }

    @Test(arguments: ["not a url", "http://", "http:///path", "/relative/only", "http://h/a b", "http://h/\u{7f}"])
    func requestSpecMalformedURL(url: String) {
        let json = try! String(data: JSONSerialization.data(withJSONObject: ["url": url]), encoding: .utf8)!
        let error = #expect(throws: RequestURL.Malformed.self) { try decode(RequestSpec.self, json) }
        #expect(error?.field == "url")
    }

    @Test func requestSpecAcceptsAnUnsupportedSchemeForTheTaskToFail() throws {
        // URLSession creates the task and fails it with unsupportedURL; creation must not refuse it.
        let spec = try decode(RequestSpec.self, #"{"url": "gopher://h/file"}"#)
        #expect(spec.url == "gopher://h/file")
        #expect(!RequestURL.isSupported(spec.url))
        #expect(RequestURL.isSupported("HTTPS://h/"))
    }

    @Test func requestSpecRejectsHeaderInjection() {
        #expect(invalidField(RequestSpec.self, #"{"url": "http://h/", "headers": {"X-A": "1\r\nHost: evil"}}"#) == "headers")
        #expect(invalidField(RequestSpec.self, #"{"url": "http://h/", "headers": {"X:A": "1"}}"#) == "headers")
        #expect(invalidField(RequestSpec.self, #"{"url": "http://h/", "headers": {"": "1"}}"#) == "headers")
    }

    @Test func requestSpecUnknownKey() {
        #expect(throws: InputError.unknownField("httpBody")) {
            try decode(RequestSpec.self, #"{"url": "http://h/", "httpBody": "x"}"#)
        }
    }

    @Test func requestSpecBuildsTheSentRequestWithSessionHeaders() throws {
        var configuration = SessionConfiguration()
        configuration.httpAdditionalHeaders = ["X-Session": "s", "x-request": "from session"]
        configuration.timeoutIntervalForRequest = 7
        let spec = try decode(RequestSpec.self, #"{"url": "http://h/", "method": "POST", "headers": {"X-Request": "mine"}, "body": {"json": {"a": 1}}}"#)
        let info = RequestInfo(spec: spec, bodyLength: spec.body?.inlineData?.count, configuration: configuration)
        #expect(info.headers == ["X-Request": "mine", "X-Session": "s", "Content-Type": "application/json"])
        #expect(info.bodyLength == 7)  // {"a":1}
        #expect(info.timeoutInterval == 7)
        #expect(info.cachePolicy == .useProtocolCachePolicy)
    }

    // MARK: RequestBody

    @Test func requestBodyForms() throws {
        let text = try decode(RequestBody.self, #"{"text": "héllo"}"#)
        #expect(text == .text("héllo"))
        #expect(text.inlineData == Data("héllo".utf8))
        #expect(text.impliedContentType == nil)

        let base64 = try decode(RequestBody.self, #"{"base64": "AAEC/w=="}"#)
        #expect(base64.inlineData == Data([0, 1, 2, 255]))
        #expect(base64.impliedContentType == nil)

        let json = try decode(RequestBody.self, #"{"json": {"b": [1, 2.5, null, true], "a": "x"}}"#)
        #expect(json.impliedContentType == "application/json")
        #expect(String(decoding: json.inlineData ?? Data(), as: UTF8.self) == #"{"a":"x","b":[1,2.5,null,true]}"#)

        #expect(try decode(RequestBody.self, #"{"text": ""}"#).inlineData?.isEmpty == true)
        // Wrapped base64 (line breaks, spaces) is still base64.
        #expect(try decode(RequestBody.self, #"{"base64": "aGVs\nbG8g\r\n d29y bGQ="}"#).inlineData == Data("hello world".utf8))
    }

    @Test func requestBodyNeedsExactlyOneForm() {
        #expect(invalidField(RequestBody.self, "{}") == "")
        #expect(invalidField(RequestBody.self, #"{"text": "a", "base64": "YQ=="}"#) == "")
        #expect(invalidField(RequestSpec.self, #"{"url": "http://h/", "body": {}}"#) == "body")
    }

    @Test func requestBodyRejectsBadBase64AndUnknownForms() throws {
        #expect(invalidField(RequestBody.self, #"{"base64": "abc"}"#) == "base64")
        // Nothing but whitespace is ignored: garbage is no empty body.
        #expect(invalidField(RequestBody.self, #"{"base64": "@@@@"}"#) == "base64")
        #expect(invalidField(RequestBody.self, #"{"base64": "aGk=!"}"#) == "base64")
        #expect(throws: InputError.unknownField("xml")) { try decode(RequestBody.self, #"{"xml": "<a/>"}"#) }
        #expect(invalidField(RequestBody.self, #"{"form": []}"#) == "form")
        #expect(invalidField(RequestBody.self, #"{"form": [{"name": "a"}]}"#) == "form[0]")
        #expect(invalidField(RequestBody.self, #"{"form": [{"name": "a\"b", "value": "x"}]}"#) == "form[0].name")
        #expect(invalidField(RequestBody.self, #"{"form": [{"name": "a", "value": "x", "filename": "f.txt"}]}"#) == "form[0]")
        #expect(try decode(RequestBody.self, #"{"stream": true}"#) == .stream)
        #expect(invalidField(RequestBody.self, #"{"stream": false}"#) == "stream")
    }

    // MARK: TaskPriority

    @Test(arguments: [
        ("0", 0.0), ("1", 1.0), ("0.3", 0.3), (#""low""#, 0.25), (#""default""#, 0.5), (#""high""#, 0.75),
    ])
    func priorityValues(json: String, value: Double) throws {
        #expect(try decode(TaskPriority.self, json).value == value)
    }

    @Test(arguments: ["-0.01", "1.0001", "100", #""LOW""#, #""urgent""#, #""""#])
    func priorityInvalid(json: String) {
        #expect(invalidField(TaskPriority.self, json) == "")
    }

    @Test func priorityEncodesAsANumberAndOrders() throws {
        #expect(String(decoding: try JSONCoding.encoder.encode(TaskPriority.high), as: UTF8.self) == "0.75")
        #expect(TaskPriority.low < .default && TaskPriority.default < .high)
        #expect(TaskPriority(value: 0.5) == .default)
    }

    @Test func taskUpdateIsStrictAndDistinguishesNullFromAbsent() throws {
        let absent = try decode(TaskUpdate.self, #"{"priority": "low"}"#)
        #expect(absent.priority == .low)
        #expect(absent.description == nil)
        let cleared = try decode(TaskUpdate.self, #"{"description": null}"#)
        #expect(cleared.description == .some(nil))
        #expect(throws: InputError.unknownField("priorty")) { try decode(TaskUpdate.self, #"{"priorty": 1}"#) }
    }
}
