import Foundation
import Testing
import TransferAPI

/// openapi.yaml and the router in step: every route registered with `router.add` is an
/// operation of the embedded document, and every operation of the document is a route.
@Suite struct OpenAPIRoutesTests {
    @Test func everyRouteIsInTheDocumentAndEveryOperationIsARoute() async throws {
        try await DaemonFixture.with { daemon in
            let handler = APIHandler(service: daemon.daemon.service, authenticator: Authenticator(tokens: []))
            let routes = Set(handler.registeredRoutes)
            let documented = OpenAPIOperations.parse(String(decoding: OpenAPIDocument.data, as: UTF8.self))
            #expect(routes.count == handler.registeredRoutes.count, "a route is registered twice")
            #expect(documented.count >= 40, "the path extractor found only \(documented.sorted())")
            #expect(routes.subtracting(documented).sorted() == [], "routes missing from openapi.yaml")
            #expect(documented.subtracting(routes).sorted() == [], "operations in openapi.yaml that no route serves")
        }
    }

    @Test func theExtractorReadsPathsAndMethodsOnly() {
        let yaml = """
            openapi: 3.1.0
            paths:
              /a:
                parameters:
                  - name: x
                get:
                  responses: {}
              '/b/{id}':
                delete:
                  summary: d
                post:
                  requestBody:
                    content:
                      get: {}
            components:
              schemas:
                put: {}
            """
        #expect(OpenAPIOperations.parse(yaml) == ["GET /a", "DELETE /b/{id}", "POST /b/{id}"])
    }
}

/// The operations of an OpenAPI document as "METHOD /path", read from its text: the keys two
/// spaces in under `paths:` and the HTTP methods four spaces in under each (the layout of our
/// openapi.yaml; no YAML library needed).
enum OpenAPIOperations {
    static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    static func parse(_ text: String) -> Set<String> {
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" "), !line.isEmpty {
                inPaths = line.hasPrefix("paths:")
                path = nil
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  "), !line.hasPrefix("   "), line.hasSuffix(":") {
                path = line.dropFirst(2).dropLast().trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "),
                      let colon = line.firstIndex(of: ":"), methods.contains(String(line[line.index(line.startIndex, offsetBy: 4)..<colon])) {
                operations.insert("\(line[line.index(line.startIndex, offsetBy: 4)..<colon].uppercased()) \(path)")
            }
        }
        return operations
    }
}
