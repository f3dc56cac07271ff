/// The body of `POST /v1/sessions/{sid}/tasks:batch`: `{"tasks": [TaskCreate, ...]}`, created
/// all or nothing, in order.
public struct TaskBatchCreate: Decodable, Sendable {
    public var tasks: [TaskCreate]

    /// The most tasks one batch takes.
    public static let maxCount = 10_000

    public init(tasks: [TaskCreate]) { self.tasks = tasks }

    enum CodingKeys: String, CodingKey, CaseIterable { case tasks }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var list = try c.nestedUnkeyedContainer(forKey: .tasks)
        // The count is known before any spec is decoded, so an oversized batch costs nothing.
        let count = list.count ?? 0
        guard count <= Self.maxCount else {
            throw InputError.tooLarge(field: decoder.path(CodingKeys.tasks), message: "has \(count) tasks; a batch takes at most \(Self.maxCount)")
        }
        guard count > 0 else {
            throw InputError.invalidValue(field: decoder.path(CodingKeys.tasks), message: "must hold at least one task")
        }
        var tasks: [TaskCreate] = []
        tasks.reserveCapacity(count)
        while !list.isAtEnd { tasks.append(try list.decode(TaskCreate.self)) }
        self.tasks = tasks
    }
}
