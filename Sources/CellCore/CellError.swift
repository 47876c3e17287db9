/// A misuse of registrations, providers or cells. Stable codes, messages naming the offending values.
public struct CellError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The registration definition is malformed (unknown type or property, a template that does not parse).
        case invalidRegistration = "invalid-registration"
        /// A registration of that name exists with a different definition.
        case registrationExists = "registration-exists"
        /// No registration has that name.
        case registrationNotFound = "registration-not-found"
        /// No cell provider rule maps the item (or supplementary kind) to a registration.
        case noRegistration = "no-registration"
        /// A template is over a `TemplateLimits` limit: too large or too deeply nested (at `register`), or
        /// rendering a cell would take too much work or output (that cell fails).
        case limitExceeded = "limit-exceeded"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
