/// openapi.yaml's schemas and responses, read for the field contract test: the properties an
/// object schema declares (through `$ref` and `allOf`), the alternative a `oneOf` value takes,
/// and the schema of an operation's JSON answer.
struct OpenAPISchemaIndex {
    let document: YAMLSubset

    init(_ text: String) {
        document = YAMLSubset.parse(text)
    }

    /// A schema and the name it is reached by (`Task`, or `Task.response` for an inline one).
    struct Schema {
        let name: String
        let node: YAMLSubset
    }

    func schema(named name: String) -> Schema? {
        document["components"]?["schemas"]?[name].map { Schema(name: name, node: $0) }
    }

    /// `#/components/schemas/X` followed; any other node as it is, named `fallback`.
    func resolve(_ node: YAMLSubset, fallback: String) -> Schema {
        if let ref = node["$ref"]?.text, let name = ref.split(separator: "/").last, ref.hasPrefix("#/components/schemas/") {
            return schema(named: String(name)).map { resolve($0.node, fallback: $0.name) } ?? Schema(name: String(name), node: node)
        }
        // `allOf: [$ref]`, perhaps with a `required` list beside it, is that schema.
        if let members = node["allOf"]?.items, node["properties"] == nil,
           members.filter({ $0["$ref"] != nil }).count == 1, members.allSatisfy({ $0["$ref"] != nil || $0["properties"] == nil }),
           let reference = members.first(where: { $0["$ref"] != nil }) {
            return resolve(reference, fallback: fallback)
        }
        return Schema(name: fallback, node: node)
    }

    /// The properties of an object schema, `allOf` members merged; nil when it declares none
    /// (a map such as `Headers`, or a scalar).
    func properties(of schema: Schema) -> [(key: String, value: YAMLSubset)]? {
        var merged: [(key: String, value: YAMLSubset)] = []
        var declared = false
        if let own = schema.node["properties"] {
            declared = true
            merged += own.entries
        }
        for member in schema.node["allOf"]?.items ?? [] {
            if let more = properties(of: resolve(member, fallback: schema.name)) {
                declared = true
                for entry in more where !merged.contains(where: { $0.key == entry.key }) { merged.append(entry) }
            }
        }
        return declared ? merged : nil
    }

    /// The alternative of a `oneOf`/`anyOf` schema that an object value takes: by the
    /// discriminator's mapping, else the one object alternative (`oneOf: [X, null]`), else the
    /// first whose properties hold every key of the value.
    func alternative(of schema: Schema, for object: [String: Any]) -> Schema? {
        guard let options = (schema.node["oneOf"] ?? schema.node["anyOf"])?.items else { return nil }
        if let property = schema.node["discriminator"]?["propertyName"]?.text, let value = object[property] as? String,
           let target = schema.node["discriminator"]?["mapping"]?[value]?.text {
            return resolve(.map([("$ref", .scalar(target))]), fallback: schema.name)
        }
        let objects = options.map { resolve($0, fallback: schema.name) }.filter { properties(of: $0) != nil || $0.node["oneOf"] != nil }
        if objects.count == 1 { return objects[0] }
        return objects.first { candidate in
            let keys = Set((properties(of: candidate) ?? []).map(\.key))
            return Set(object.keys).isSubset(of: keys)
        }
    }

    /// The schema of the JSON answer `status` of `METHOD path` (path as the document writes it).
    func responseSchema(_ method: String, _ path: String, status: Int) -> Schema? {
        guard var response = document["paths"]?[path]?[method.lowercased()]?["responses"]?[String(status)] else { return nil }
        if let ref = response["$ref"]?.text, let name = ref.split(separator: "/").last {
            guard let shared = document["components"]?["responses"]?[String(name)] else { return nil }
            response = shared
        }
        guard let node = response["content"]?["application/json"]?["schema"] else { return nil }
        return resolve(node, fallback: "\(method) \(path) \(status)")
    }
}
