/// Compares the keys of JSON answers with the properties their schemas declare, object by
/// object and down every nested object and array: a key the daemon sent that its schema lacks
/// is `undocumented`; the properties of every schema reached are remembered with the keys seen
/// for it, so `neverSent` lists what a schema declares and no answer carried.
struct SchemaFieldAudit {
    let index: OpenAPISchemaIndex
    /// "Schema.key (at path)" for each key sent that the schema does not declare, once, at
    /// the first answer that sent it.
    var undocumented: [String] { firstUndocumented.map { "\($0.key) (at \($0.value))" }.sorted() }
    private var firstUndocumented: [String: String] = [:]
    private var declared: [String: Set<String>] = [:]
    private var seen: [String: Set<String>] = [:]

    init(_ index: OpenAPISchemaIndex) {
        self.index = index
    }

    /// Every schema reached, with the properties it declares that no value checked carried.
    var neverSent: [String: [String]] {
        declared.reduce(into: [:]) { result, entry in
            let missing = entry.value.subtracting(seen[entry.key] ?? []).sorted()
            if !missing.isEmpty { result[entry.key] = missing }
        }
    }

    /// The schemas reached so far.
    var reached: Set<String> { Set(declared.keys) }

    mutating func check(_ value: Any, against schema: OpenAPISchemaIndex.Schema, at path: String) {
        if let object = value as? [String: Any] {
            if let alternative = index.alternative(of: schema, for: object) {
                return check(value, against: alternative, at: path)
            }
            guard let properties = index.properties(of: schema) else { return }  // a map, e.g. Headers
            let names = Set(properties.map(\.key))
            declared[schema.name, default: []].formUnion(names)
            seen[schema.name, default: []].formUnion(object.keys)
            for key in object.keys.sorted() {
                guard let property = properties.first(where: { $0.key == key }) else {
                    if firstUndocumented["\(schema.name).\(key)"] == nil { firstUndocumented["\(schema.name).\(key)"] = path }
                    continue
                }
                let child = index.resolve(property.value, fallback: "\(schema.name).\(key)")
                check(object[key]!, against: child, at: "\(path).\(key)")
            }
        } else if let array = value as? [Any] {
            let items = schema.node["items"] ?? (schema.node["oneOf"]?.items.compactMap { $0["items"] }.first)
            guard let items else { return }
            let element = index.resolve(items, fallback: "\(schema.name)[]")
            for (position, item) in array.enumerated() {
                check(item, against: element, at: "\(path)[\(position)]")
            }
        }
    }
}
