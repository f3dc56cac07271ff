/// What a token may do. A tenant works on its own things only (its sessions, tasks, blobs, its
/// part of the URL cache, its own queue); an admin may also change and read what is daemon-wide
/// (PATCH /v1/limits, DELETE /v1/cache, GET /v1/stats, GET /metrics). Without tokens the single
/// anonymous user is an admin: a single-user machine keeps every operation.
public enum TokenRole: String, Sendable, Equatable, CaseIterable {
    case admin
    case tenant
}
