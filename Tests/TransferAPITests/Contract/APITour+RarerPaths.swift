import Foundation
import Testing
import TestSupport

extension APITour {
    /// What a plain transfer never sends: proxies, a disposition that turns a task into a
    /// download, a delayed start, waiting for connectivity, a retry, a client-streamed body, a
    /// tus upload that resumes, and a background session reattached.
    mutating func visitRarerPaths(session sid: String, background bsid: String, attachment: String) async throws {
        // Every proxy key (no task runs through them): the passwords are never answered.
        let proxy: [String: Any] = [
            "HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": 3128, "HTTPProxyUsername": "u", "HTTPProxyPassword": "p",
            "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": 3128, "HTTPSProxyUsername": "u", "HTTPSProxyPassword": "p",
            "SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": 1080, "SOCKSProxyUsername": "u", "SOCKSProxyPassword": "p",
            "ExceptionsList": ["*.internal"], "ExcludeSimpleHostnames": 1,
        ]
        try await call("POST", "/v1/sessions", json: ["configuration": ["connectionProxyDictionary": proxy]], status: 201)

        _ = try await task(in: sid, ["kind": "data", "request": ["url": origin.url("/file")],
                                     "responseDisposition": ["rules": [["when": ["minLength": 1000], "then": "becomeDownload"]]]])
        _ = try await task(in: sid, ["kind": "data", "request": ["url": origin.url("/text")],
                                     "earliestBeginDate": Date().addingTimeInterval(1).ISO8601Format()])

        // Port 1 refuses: a session that waits for connectivity waits; a background one retries a 503.
        let patient = try #require(try await call("POST", "/v1/sessions", json: ["configuration": ["waitsForConnectivity": true]], status: 201).string("id"))
        let waiting = try await task(in: patient, ["kind": "data", "request": ["url": "http://127.0.0.1:1/"]], until: "waiting")
        try await call("POST", "/v1/tasks/{tid}/cancel", "/v1/tasks/\(waiting)/cancel", status: 200)
        try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(patient)/events?after=0", status: 200)
        let retrying = try await task(in: bsid, ["kind": "download", "request": ["url": origin.url("/unavailable")]], until: "retrying")
        try await call("POST", "/v1/tasks/{tid}/cancel", "/v1/tasks/\(retrying)/cancel", status: 200)

        // A body the client streams: the transfer asks for it, then gets two chunks and the end.
        let streamed = try #require(try await call("POST", "/v1/sessions/{sid}/tasks", "/v1/sessions/\(sid)/tasks", json: [
            "kind": "upload", "request": ["url": origin.url("/sink"), "method": "PUT", "body": ["stream": true]],
        ], status: 201).int("id"))
        try await call("POST", "/v1/tasks/{tid}/body-chunks", "/v1/tasks/\(streamed)/body-chunks", body: Data("part one, ".utf8), status: 200)
        try await call("POST", "/v1/tasks/{tid}/body-chunks", "/v1/tasks/\(streamed)/body-chunks", body: Data("part two".utf8), status: 200)
        try await call("POST", "/v1/tasks/{tid}/body-end", "/v1/tasks/\(streamed)/body-end", status: 200)
        try await follow(streamed, until: "completed")

        // A tus upload of a file: its first PATCH is refused, so it asks the offset and resumes.
        _ = try await task(in: sid, ["kind": "upload", "resumable": "tus",
                                     "request": ["url": tus.creationURL, "method": "POST", "body": ["file": "report.txt"]]])

        // The background session let go and reattached: its feed replays, then didFinishEvents.
        _ = try await daemon.request("DELETE", "/v1/sessions/\(bsid)/attachment?attachment=\(attachment)")
        try await call("POST", "/v1/sessions", json: ["kind": "background", "identifier": "tour"], status: 200)
        try await call("GET", "/v1/sessions/{sid}/events", "/v1/sessions/\(bsid)/events?after=0&limit=1000", status: 200)
    }
}
