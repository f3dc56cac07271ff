internal import FoundationEssentials
internal import JSONModel
public import TransferModel
internal import TransferStore

/// A command on a task that another node of the cluster runs (docs/cluster.md, step 4): the
/// node a client asked writes it for the task's holder (`ClusterCoordinator.sendCommand`), the
/// holder carries it out through the same methods as its own clients' commands and answers
/// with the task after it, or the error its own client would get. The routes give every
/// command on a task as one of these (`TransferService.command`).
public enum ClusterCommand: Sendable {
    case suspend
    case resume
    case cancel(produceResumeData: Bool)
    case update(TaskUpdate)
    /// An answer to the decision the task waits for (issue 21). In a cluster its row carries a
    /// useCredential's password to the node running the task; the row goes once it is answered.
    case decide(decisionId: String, DecisionAnswer)

    /// The command row's text: a JSON object with `command` and its fields.
    var encoded: String {
        var fields: [String: JSONValue]
        switch self {
        case .suspend: fields = ["command": .string("suspend")]
        case .resume: fields = ["command": .string("resume")]
        case .cancel(let resumeData): fields = ["command": .string("cancel"), "produceResumeData": .bool(resumeData)]
        case .update(let update):
            fields = ["command": .string("update"), "update": JSONValue(encoding: update)]
        case .decide(let decisionId, let answer):
            fields = ["command": .string("decide"), "decisionId": .string(decisionId), "answer": answer.jsonValue]
        }
        return Self.text(fields)
    }

    /// A JSON object as text (a JSONValue always encodes).
    private static func text(_ fields: [String: JSONValue]) -> String {
        String(decoding: (try? JSONCoding.encoder.encode(JSONValue.object(fields))) ?? Data("{}".utf8), as: UTF8.self)
    }

    init?(encoded: String) {
        guard let value = try? JSONCoding.decoder.decode(JSONValue.self, from: Data(encoded.utf8)),
              case .string(let name)? = value["command"] else { return nil }
        switch name {
        case "suspend": self = .suspend
        case "resume": self = .resume
        case "cancel":
            guard case .bool(let resumeData)? = value["produceResumeData"] else { return nil }
            self = .cancel(produceResumeData: resumeData)
        case "update":
            guard let update = value["update"], let data = try? JSONCoding.encoder.encode(update),
                  let decoded = try? JSONCoding.decoder.decode(TaskUpdate.self, from: data) else { return nil }
            self = .update(decoded)
        case "decide":
            guard case .string(let decisionId)? = value["decisionId"], let answer = value["answer"],
                  let data = try? JSONCoding.encoder.encode(answer),
                  let decoded = try? JSONCoding.decoder.decode(DecisionAnswer.self, from: data) else { return nil }
            self = .decide(decisionId: decisionId, decoded)
        default: return nil
        }
    }

    // MARK: answers

    /// The holder's answer: the task after the command (its stored form), or the error.
    static func answer(_ result: Result<TransferTask, any Error>) -> String {
        let fields: [String: JSONValue]
        switch result {
        case .success(let task):
            fields = ["task": .string(Store.record(task).json)]
        case .failure(let error as InputError):
            // An answer the holder refused for its input (a decision's answer of another kind).
            if case .invalidValue(let field, let message) = error {
                fields = ["error": .string("invalid"), "field": .string(field), "message": .string(message)]
            } else {
                fields = ["error": .string("unavailable"), "message": .string("\(error)")]
            }
        case .failure(let error):
            switch error as? ServiceError {
            case .notFound(let message)?: fields = ["error": .string("notFound"), "message": .string(message)]
            case .conflict(let code, let message)?:
                fields = ["error": .string("conflict"), "code": .string(code), "message": .string(message)]
            case .shuttingDown?: fields = ["error": .string("shuttingDown")]
            case .storage(let message)?: fields = ["error": .string("storage"), "message": .string(message)]
            default: fields = ["error": .string("unavailable"), "message": .string("\(error)")]
            }
        }
        return text(fields)
    }

    /// The task an answer carries, or the error it says (as the holder's own client got it).
    static func result(of answer: String, holder: String) throws -> TransferTask {
        guard let value = try? JSONCoding.decoder.decode(JSONValue.self, from: Data(answer.utf8)) else {
            throw StoreReadFailure(reason: "node \(holder) answered a command with something unreadable")
        }
        if case .string(let record)? = value["task"] { return try StoredRows.task(from: Data(record.utf8)) }
        let message: String
        if case .string(let text)? = value["message"] { message = text } else { message = "" }
        switch value["error"] {
        case .string("notFound")?: throw ServiceError.notFound(message)
        case .string("conflict")?:
            guard case .string(let code)? = value["code"] else { break }
            throw ServiceError.conflict(code: code, message: message)
        case .string("shuttingDown")?: throw ServiceError.shuttingDown
        case .string("storage")?: throw ServiceError.storage(message)
        case .string("invalid")?:
            guard case .string(let field)? = value["field"] else { break }
            throw InputError.invalidValue(field: field, message: message)
        default: break
        }
        throw StoreReadFailure(reason: "node \(holder) could not carry the command out: \(message)")
    }
}
