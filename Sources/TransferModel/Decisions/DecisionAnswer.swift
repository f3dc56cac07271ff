public import FoundationEssentials
public import JSONModel

/// A client's answer to a decision, as URLSession's completion handlers take it: the body of
/// `POST /v1/tasks/{tid}/decisions/{decisionId}`, `{"answer": NAME, ...}`. Checked whole before
/// anything changes; a name that is not one of the decision's kind is refused by the service
/// (`kind`), so a wrong answer changes nothing.
public enum DecisionAnswer: Sendable, Equatable {
    // redirect
    case follow
    /// The task completes with the 3xx as its response (and its body).
    case refuse
    /// The redirect goes to this request instead (an http or https URL; its method and headers).
    case rewrite(RewrittenRequest)
    // challenge
    case useCredential(user: String, password: String, persistence: CredentialPersistence)
    /// useCredential for a server-trust challenge: the server is trusted if it presents this
    /// key ("sha256//BASE64" of its SubjectPublicKeyInfo), which the client took from the
    /// chain the event showed. libcurl checks it on the new connection (CURLOPT_PINNEDPUBLICKEY).
    case trustServer(pinnedPublicKey: String)
    case performDefaultHandling
    case cancelAuthenticationChallenge
    case rejectProtectionSpace
    // response
    case allow
    case cancel
    case becomeDownload
    case becomeStream
    // cache
    case store
    case storeInMemoryOnly
    case doNotStore

    /// The request a `rewrite` sends in place of the redirect's.
    public struct RewrittenRequest: Sendable, Equatable {
        public var url: String
        /// nil: the method the redirect proposed.
        public var method: String?
        /// Replaces the task's own header fields for the next request (nil: keeps them).
        public var headers: [String: String]?
    }

    /// The kind of decision this answers.
    public var kind: DecisionKind {
        switch self {
        case .follow, .refuse, .rewrite: .redirect
        case .useCredential, .trustServer, .performDefaultHandling, .cancelAuthenticationChallenge, .rejectProtectionSpace: .challenge
        case .allow, .cancel, .becomeDownload, .becomeStream: .response
        case .store, .storeInMemoryOnly, .doNotStore: .cache
        }
    }

    /// Its name, as the client wrote it and as events report it.
    public var name: String {
        switch self {
        case .follow: "follow"
        case .refuse: "refuse"
        case .rewrite: "rewrite"
        case .useCredential, .trustServer: "useCredential"
        case .performDefaultHandling: "performDefaultHandling"
        case .cancelAuthenticationChallenge: "cancelAuthenticationChallenge"
        case .rejectProtectionSpace: "rejectProtectionSpace"
        case .allow: "allow"
        case .cancel: "cancel"
        case .becomeDownload: "becomeDownload"
        case .becomeStream: "becomeStream"
        case .store: "store"
        case .storeInMemoryOnly: "storeInMemoryOnly"
        case .doNotStore: "doNotStore"
        }
    }

    /// What URLSession does when the delegate does not implement the callback: the answer a
    /// decision left unanswered past its timeout takes.
    public static func defaultHandling(of kind: DecisionKind) -> DecisionAnswer {
        switch kind {
        case .redirect: .follow
        case .challenge: .performDefaultHandling
        case .response: .allow
        case .cache: .store
        }
    }

    /// The answers of each kind, by name (the error message lists them).
    public static func names(of kind: DecisionKind) -> [String] {
        switch kind {
        case .redirect: ["follow", "refuse", "rewrite"]
        case .challenge: ["useCredential", "performDefaultHandling", "cancelAuthenticationChallenge", "rejectProtectionSpace"]
        case .response: ["allow", "cancel", "becomeDownload", "becomeStream"]
        case .cache: ["store", "storeInMemoryOnly", "doNotStore"]
        }
    }
}

extension DecisionAnswer: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case answer, request, credential }
    enum RequestKeys: String, CodingKey, CaseIterable { case url, method, headers }
    enum CredentialKeys: String, CodingKey, CaseIterable { case user, password, persistence, pinnedPublicKey }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .answer)
        let simple: [String: DecisionAnswer] = [
            "follow": .follow, "refuse": .refuse, "performDefaultHandling": .performDefaultHandling,
            "cancelAuthenticationChallenge": .cancelAuthenticationChallenge, "rejectProtectionSpace": .rejectProtectionSpace,
            "allow": .allow, "cancel": .cancel, "becomeDownload": .becomeDownload, "becomeStream": .becomeStream,
            "store": .store, "storeInMemoryOnly": .storeInMemoryOnly, "doNotStore": .doNotStore,
        ]
        switch name {
        case "rewrite":
            guard c.contains(.request) else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.request), message: "is required: rewrite sends this request instead of the redirect's")
            }
            self = try Self.decodeRequest(try c.superDecoder(forKey: .request))
        case "useCredential":
            guard c.contains(.credential) else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.credential), message: "is required: useCredential answers with this user and password")
            }
            self = try Self.decodeCredential(try c.superDecoder(forKey: .credential))
        default:
            guard let answer = simple[name] else {
                throw InputError.invalidValue(field: decoder.path(CodingKeys.answer), message: "must be one of \(DecisionKind.allCases.flatMap(Self.names(of:)).joined(separator: ", "))")
            }
            self = answer
        }
        if c.contains(.request), name != "rewrite" {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.request), message: "is for the rewrite answer only")
        }
        if c.contains(.credential), name != "useCredential" {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.credential), message: "is for the useCredential answer only")
        }
    }

    private static func decodeRequest(_ decoder: any Decoder) throws -> DecisionAnswer {
        try decoder.rejectUnknownKeys(RequestKeys.self)
        let r = try decoder.container(keyedBy: RequestKeys.self)
        let url = try r.decode(String.self, forKey: .url)
        try RequestURL.check(url, field: decoder.path(RequestKeys.url))
        // A redirect is an HTTP hop: libcurl follows only these two schemes, and so may a rewrite.
        let scheme = URL(string: url)?.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw InputError.invalidValue(field: decoder.path(RequestKeys.url), message: "must be an http or https URL")
        }
        let method = try r.decodeOmittable(String.self, forKey: .method)
        if let method, !Validate.isToken(method) {
            throw InputError.invalidValue(field: decoder.path(RequestKeys.method), message: "\"\(method.prefix(40))\" is not a valid HTTP method")
        }
        let headers = try r.decodeOmittable([String: String].self, forKey: .headers)
        for name in (headers ?? [:]).keys.sorted() {
            try Validate.header(name: name, value: headers?[name] ?? "", decoder.path(RequestKeys.headers))
        }
        return .rewrite(RewrittenRequest(url: url, method: method?.uppercased(), headers: headers))
    }

    private static func decodeCredential(_ decoder: any Decoder) throws -> DecisionAnswer {
        try decoder.rejectUnknownKeys(CredentialKeys.self)
        let k = try decoder.container(keyedBy: CredentialKeys.self)
        if k.contains(.pinnedPublicKey) {
            // A server-trust answer: the key alone.
            for key in [CredentialKeys.user, .password, .persistence] where k.contains(key) {
                throw InputError.invalidValue(field: decoder.path(key), message: "is not for a pinnedPublicKey answer (a server-trust challenge)")
            }
            let pin = try k.decode(String.self, forKey: .pinnedPublicKey)
            try TLSTrustInput.checkPins([pin], field: decoder.path(CredentialKeys.pinnedPublicKey))
            return .trustServer(pinnedPublicKey: pin)
        }
        let user = try k.decode(String.self, forKey: .user)
        let password = try k.decode(String.self, forKey: .password)
        // The same rules as a stored credential's (`CredentialPut`), never echoing a value.
        try CredentialPut.check(user, decoder.path(CredentialKeys.user))
        try CredentialPut.check(password, decoder.path(CredentialKeys.password))
        guard !user.isEmpty, !user.contains(":") else {
            throw InputError.invalidValue(field: decoder.path(CredentialKeys.user), message: "must not be empty or contain a colon")
        }
        var persistence = CredentialPersistence.none
        if let name = try k.decodeOmittable(String.self, forKey: .persistence) {
            guard let value = CredentialPersistence(rawValue: name) else {
                throw InputError.invalidValue(field: decoder.path(CredentialKeys.persistence), message: "must be one of none, forSession, permanent")
            }
            persistence = value
        }
        return .useCredential(user: user, password: password, persistence: persistence)
    }
}

extension DecisionAnswer {
    /// The answer as JSON, as a client would post it (a command passed to another node carries
    /// it so; the password goes only there, never into an event or a log).
    package var jsonValue: JSONValue {
        var fields: [String: JSONValue] = ["answer": .string(name)]
        switch self {
        case .rewrite(let request):
            var r: [String: JSONValue] = ["url": .string(request.url)]
            if let method = request.method { r["method"] = .string(method) }
            if let headers = request.headers { r["headers"] = .object(headers.mapValues { .string($0) }) }
            fields["request"] = .object(r)
        case .useCredential(let user, let password, let persistence):
            fields["credential"] = .object(["user": .string(user), "password": .string(password), "persistence": .string(persistence.rawValue)])
        case .trustServer(let pin):
            fields["credential"] = .object(["pinnedPublicKey": .string(pin)])
        default:
            break
        }
        return .object(fields)
    }
}
