import Foundation
import Testing
@testable import TransferModel
@testable import TransferService

/// The body of POST /v1/tasks/{tid}/decisions/{did}: every answer URLSession's completion
/// handlers take, refused with its field when malformed, and carried to another node intact.
@Suite struct DecisionAnswerTests {
    private func decode(_ json: String) throws -> DecisionAnswer {
        try JSONCoding.decoder.decode(DecisionAnswer.self, from: Data(json.utf8))
    }

    @Test func everyAnswerDecodesToItsKind() throws {
        for kind in DecisionKind.allCases {
            for name in DecisionAnswer.names(of: kind) where name != "rewrite" && name != "useCredential" {
                let answer = try decode(#"{"answer": "\#(name)"}"#)
                #expect(answer.name == name && answer.kind == kind)
            }
        }
        let rewrite = try decode(#"{"answer": "rewrite", "request": {"url": "https://example.test/b", "method": "put", "headers": {"X-A": "1"}}}"#)
        #expect(rewrite == .rewrite(.init(url: "https://example.test/b", method: "PUT", headers: ["X-A": "1"])))
        let credential = try decode(#"{"answer": "useCredential", "credential": {"user": "u", "password": "p"}}"#)
        #expect(credential == .useCredential(user: "u", password: "p", persistence: .none))
        #expect(DecisionAnswer.defaultHandling(of: .challenge) == .performDefaultHandling)
    }

    @Test(arguments: [
        (#"{"answer": "sometimes"}"#, "answer"),
        (#"{"answer": "rewrite"}"#, "request"),
        (#"{"answer": "rewrite", "request": {"url": "ftp://example.test/f"}}"#, "request.url"),
        (#"{"answer": "rewrite", "request": {"url": "https://example.test/", "method": "G E T"}}"#, "request.method"),
        (#"{"answer": "follow", "request": {"url": "https://example.test/"}}"#, "request"),
        (#"{"answer": "useCredential", "credential": {"user": "a:b", "password": "p"}}"#, "credential.user"),
        (#"{"answer": "useCredential", "credential": {"user": "u", "password": "p", "persistence": "forever"}}"#, "credential.persistence"),
        (#"{"answer": "allow", "extra": 1}"#, "extra"),
    ])
    func malformedAnswersNameTheirField(json: String, field: String) {
        #expect(throws: (any Error).self) { try decode(json) }
        do {
            _ = try decode(json)
        } catch let error as InputError {
            #expect("\(error)".contains(field), "\(error)")
        } catch {
            // Unknown keys and type errors come from the decoder with their coding path.
            #expect("\(error)".contains(field.split(separator: ".").last.map(String.init) ?? field), "\(error)")
        }
    }

    @Test func aCommandPassedToAnotherNodeCarriesTheWholeAnswer() throws {
        for answer: DecisionAnswer in [
            .follow, .rewrite(.init(url: "http://127.0.0.1:1/x", method: nil, headers: nil)),
            .useCredential(user: "u", password: "secret", persistence: .forSession), .doNotStore,
        ] {
            let command = ClusterCommand.decide(decisionId: "00ff", answer)
            guard case .decide(let id, let decoded)? = ClusterCommand(encoded: command.encoded) else {
                Issue.record("\(command.encoded) did not decode")
                continue
            }
            #expect(id == "00ff" && decoded == answer)
        }
    }

    @Test func decisionListsAreSetsOfKnownNames() throws {
        let set = try JSONCoding.decoder.decode(DecisionSet.self, from: Data(#"["response", "redirect"]"#.utf8))
        #expect(set.kinds == [.redirect, .response])
        #expect(String(decoding: try JSONCoding.encoder.encode(set), as: UTF8.self) == #"["redirect","response"]"#)
        #expect(throws: (any Error).self) { try JSONCoding.decoder.decode(DecisionSet.self, from: Data(#"["redirect", "redirect"]"#.utf8)) }
        #expect(TransferService.newDecisionId().count == 32)
    }
}
