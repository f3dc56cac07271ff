extension InputError {
    /// `error` with the field it names moved under `prefix`, so an error in the fourth spec of a
    /// batch names `tasks[3].request.url` rather than `request.url`. Errors that name no field
    /// of the spec are returned as they are.
    package static func located(_ error: any Error, under prefix: String) -> any Error {
        func place(_ field: String) -> String { field.isEmpty ? prefix : prefix + "." + field }
        // A message that starts with its field (as `refused` ones do) says the new path too.
        func restate(_ message: String, _ field: String) -> String {
            message.hasPrefix(field) ? place(field) + message.dropFirst(field.count) : message
        }
        switch error {
        case let error as InputError:
            switch error {
            case .unknownField(let field): return InputError.unknownField(place(field))
            case .invalidValue(let field, let message): return InputError.invalidValue(field: place(field), message: message)
            case .notImplemented(let field, let message): return InputError.notImplemented(field: field.map(place), message: message)
            case .refused(let field, let code, let message): return InputError.refused(field: place(field), code: code, message: restate(message, field))
            case .tooLarge(let field, let message): return InputError.tooLarge(field: place(field), message: message)
            }
        case let error as RequestURL.Malformed:
            return RequestURL.Malformed(field: place(error.field), message: error.message)
        default:
            return error
        }
    }
}
