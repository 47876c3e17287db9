import SwiftCompilerPlugin
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ArgumentDecoding`: writes a declaration's `init(arguments:)`, which reads its arguments from a
/// request in one pass and in declaration order, each under its property's name:
///
/// - an `@Arg` property reads the argument of its name (`Arg(reading: "name", from: &arguments)`);
/// - any other property wrapper (such as `@Prepared`) starts empty (`.init()`);
/// - a stored property without an initial value is a group of arguments read from the same request
///   (`.init(arguments: &arguments)`, such as every mutation's target);
/// - static, computed and initialized properties are not arguments.
///
/// It also writes `ArgumentName`, an enumeration of the `@Arg`s' names, for errors that name them.
///
/// The code it writes is what one would write by hand: no `Decoder`, no boxes, no dynamic casts, so a
/// request's arguments cost no more declared once than read by name.
public struct ArgumentDecodingMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard declaration.is(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ArgumentDecodingMessage.notAStruct))
            return []
        }
        let isPublic = declaration.modifiers.contains { $0.name.tokenKind == .keyword(.public) }
        var statements: [String] = []
        var argumentNames: [String] = []
        // A declaration whose properties all have their documentation values keeps the `init()` Swift
        // would have written, had this initializer not been added.
        var needsDocumentationInitializer = !declaration.memberBlock.members.contains { member in
            member.decl.as(InitializerDeclSyntax.self)?.signature.parameterClause.parameters.isEmpty == true
        }
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }) { continue }
            let wrappers = variable.attributes.compactMap { $0.as(AttributeSyntax.self) }
            for binding in variable.bindings {
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else { continue }
                let name = identifier.filter { $0 != "`" }
                if binding.accessorBlock != nil { continue }
                if let argument = wrappers.first(where: { $0.attributeName.trimmedDescription == "Arg" }) {
                    // `@Arg var x` without a summary is documented by an initializer of the type's own.
                    if argument.arguments == nil { needsDocumentationInitializer = false }
                    statements.append("self._\(name) = try Arg(reading: \(literal(name)), from: &arguments)")
                    argumentNames.append(name)
                } else if !wrappers.isEmpty {
                    statements.append("self._\(name) = .init()")
                } else if binding.initializer == nil {
                    statements.append("self.\(identifier) = try .init(arguments: &arguments)")
                    needsDocumentationInitializer = false
                }
            }
        }
        let access = isPublic ? "public " : ""
        let body = statements.map { "    " + $0 }.joined(separator: "\n")
        var members: [DeclSyntax] = ["\(raw: access)init(arguments: inout Arguments) throws(WireError) {\n\(raw: body)\n}"]
        if needsDocumentationInitializer {
            members.append("\(raw: access)init() {}")
        }
        if !argumentNames.isEmpty {
            let cases = argumentNames.map { "`" + $0 + "`" }.joined(separator: ", ")
            members.append("/// The names of the arguments this declaration reads.\n\(raw: access)enum ArgumentName: String { case \(raw: cases) }")
        }
        return members
    }

    /// `name` as a Swift string literal (property names need no escaping).
    private static func literal(_ name: String) -> String {
        "\"" + name + "\""
    }
}

/// What `@ArgumentDecoding` says when it cannot write the initializer.
enum ArgumentDecodingMessage: String, DiagnosticMessage {
    case notAStruct

    var message: String {
        switch self {
        case .notAStruct: "@ArgumentDecoding applies to a struct whose stored properties are arguments."
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "ListMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}

@main
struct ListMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ArgumentDecodingMacro.self]
}
