import ArgumentParser
import DiffableCore
import ListClient
import ListWire

/// A command's form as listd declares it in `describe` (from the command's declaration): what
/// `listctl call` checks a command line against before sending it, and what `listctl describe
/// <command>` prints.
struct CommandForm {
    /// One declared argument.
    struct Argument {
        let name: String
        /// The type as `describe` names it: "string", "integer", "boolean", "[item]", "{type, …}", "any", …
        let type: String
        let required: Bool
        let summary: String

        /// `name=<type>`, in brackets when it may be left out.
        var usage: String { required ? "\(name)=<\(type)>" : "[\(name)=<\(type)>]" }
    }

    let name: String
    let summary: String
    let arguments: [Argument]
    /// The shape of the result.
    let result: String
    /// `describe`'s entry, as listd sent it (for `--json`).
    let described: JSONValue

    /// The form of `describe`'s entry for one command (`{name, summary, arguments, result}`).
    init(_ described: JSONValue) {
        self.described = described
        name = described["name"]?.stringValue ?? ""
        summary = described["summary"]?.stringValue ?? ""
        result = described["result"]?.stringValue ?? ""
        arguments = (described["arguments"]?.arrayValue ?? []).map { argument in
            Argument(
                name: argument["name"]?.stringValue ?? "", type: argument["type"]?.stringValue ?? "any",
                required: argument["required"] == true, summary: argument["summary"]?.stringValue ?? "")
        }
    }

    /// Every command's form, from one `describe` on `link` (its reply never printed raw, even with `--json`).
    static func all(from connection: Connection, on link: LineConnection) throws -> [String: CommandForm] {
        var quiet = connection
        quiet.json = false
        let described = try quiet.send(request("describe", [:]), on: link)
        let forms = (described["commands"]?.arrayValue ?? []).map(CommandForm.init)
        return Dictionary(forms.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The form named `command`; an unknown one exits with the usage status and the closest name.
    static func named(_ command: String, in forms: [String: CommandForm]) throws -> CommandForm {
        guard let form = forms[command] else {
            let hint = Spelling.closest(to: command, in: forms.keys).map { "; did you mean \"\($0)\"?" } ?? "; listctl describe lists them"
            throw ExitStatus.fail(.usage, "no command \"\(command)\"\(hint)")
        }
        return form
    }

    /// The usage line: `appendItems dataSource=<string> items=<[item]> [toSection=<string>] …`, the
    /// required arguments first, each group in declaration order.
    var usage: String {
        ([name] + arguments.filter(\.required).map(\.usage) + arguments.filter { !$0.required }.map(\.usage)).joined(separator: " ")
    }

    /// The whole form, for people: usage, summary, each argument with its type, whether it is required
    /// and what it means, and the result.
    var text: String {
        var lines = [usage, "    " + summary]
        if !arguments.isEmpty {
            lines += ["", "Arguments:"]
            for argument in arguments {
                lines.append("  \(argument.name) (\(argument.type), \(argument.required ? "required" : "optional"))")
                if !argument.summary.isEmpty { lines.append("      " + argument.summary) }
            }
        }
        lines += ["", "Result: " + result]
        return lines.joined(separator: "\n")
    }

    /// The request's members from `name=value` words, checked against the form: an unknown name (with
    /// the closest declared one) or a missing required argument is a usage error; a value is read as
    /// its declared type (`Argument.value(_:)`). Nothing is sent when this throws.
    func members(_ words: [String]) throws -> [String: JSONValue] {
        let declared = Dictionary(arguments.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var members: [String: JSONValue] = [:]
        for word in words {
            guard let equals = word.firstIndex(of: "=") else { throw ExitStatus.fail(.usage, "\(word): expected name=value (\(usage))") }
            let argumentName = String(word[..<equals])
            let text = String(word[word.index(after: equals)...])
            guard members[argumentName] == nil else { throw ExitStatus.fail(.usage, "\(name): argument \"\(argumentName)\" is given twice") }
            guard let argument = declared[argumentName] ?? readOption(argumentName) else {
                let hint = Spelling.closest(to: argumentName, in: arguments.map(\.name)).map { "; did you mean \"\($0)\"?" } ?? ""
                throw ExitStatus.fail(.usage, "\(name) has no argument \"\(argumentName)\"\(hint) (listctl describe \(name) shows its form)")
            }
            members[argumentName] = try argument.value(text)
        }
        if let missing = arguments.first(where: { $0.required && members[$0.name] == nil }) {
            throw ExitStatus.fail(
                .usage, "\(name) needs the argument \"\(missing.name)\" (\(missing.type)): \(missing.summary) (\(usage))")
        }
        return members
    }

    /// `minVersion`, which the router reads for any read of one data source (the commands that declare
    /// `dataSource`; listd refuses it for the others).
    private func readOption(_ argumentName: String) -> Argument? {
        guard argumentName == "minVersion", declared("dataSource") else { return nil }
        return Argument(name: argumentName, type: "integer", required: false, summary: "")
    }

    private func declared(_ argumentName: String) -> Bool { arguments.contains { $0.name == argumentName } }
}

extension CommandForm.Argument {
    /// `text` as a value of the declared type: a string as it is (`1` stays the string "1"), an integer,
    /// `true` or `false`, JSON for arrays and objects; for a type of several kinds (`any`, "string or
    /// integer"), JSON when it parses, else the string. A value that is not of its type exits with
    /// status 1 naming the argument.
    func value(_ text: String) throws -> JSONValue {
        switch type {
        case "string":
            return .string(text)
        case "integer":
            guard let number = Int(text) else { throw wrong("an integer", text) }
            return .int(number)
        case "boolean":
            guard let flag = Bool(text) else { throw wrong("true or false", text) }
            return .bool(flag)
        case _ where type.hasPrefix("[") || type.hasPrefix("{") || type == "object":
            do {
                return try JSONParser.parse(text)
            } catch {
                throw ExitStatus.fail(.refused, "argument \"\(name)\" takes JSON (\(type)), not \"\(text)\" (\(error))")
            }
        default:
            return (try? JSONParser.parse(text)) ?? .string(text)
        }
    }

    private func wrong(_ expected: String, _ text: String) -> ExitCode {
        ExitStatus.fail(.refused, "argument \"\(name)\" is \(expected), not \"\(text)\"")
    }
}

// MARK: Commands

struct Call: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send any command, checked against its form in listd's describe: `listctl call appendItems dataSource=home 'items=[\"x\"]'`.",
        discussion: """
            Each value is read as the type the command declares for it: strings as they are (1 is the string \
            "1"), integers, true or false, JSON for arrays and objects; for an argument of several types \
            (any, "string or integer"), JSON when it parses, else a string. An unknown command or argument \
            (with the closest name) or a missing required one exits with status 64, a value not of its type \
            with 1; either way nothing is sent. `listctl describe <command>` shows a command's form.
            """)
    @OptionGroup var connection: Connection
    @Argument(help: "The command.") var command: String
    @Argument(help: "Arguments as name=value.") var arguments: [String] = []
    func run() throws {
        let link = try connection.open()
        let form = try CommandForm.named(command, in: CommandForm.all(from: connection, on: link))
        let result = try connection.send(request(command, form.members(arguments)), on: link)
        if !connection.json { print(Output.describe(result)) }
    }
}

struct Describe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every command, error code and event; or, given a command, its form: usage, summary, arguments, result.")
    @OptionGroup var connection: Connection
    @Argument(help: "A command: show its form (as `listctl call` takes it).") var command: String?
    func run() throws {
        if let command {
            let form = try CommandForm.named(command, in: CommandForm.all(from: connection, on: connection.open()))
            if connection.json { Output.line(bytes: form.described.jsonBytes) } else { print(form.text) }
            return
        }
        try connection.run(request("describe", [:])) { result in
            for command in result["commands"]?.arrayValue ?? [] {
                let arguments = (command["arguments"]?.arrayValue ?? []).map { argument -> String in
                    let name = argument["name"]?.stringValue ?? ""
                    return argument["required"] == true ? name : "[\(name)]"
                }
                print("\(command["name"]?.stringValue ?? "") \(arguments.joined(separator: " "))")
                print("    \(command["summary"]?.stringValue ?? "")")
            }
            print("\nerrors: " + (result["errors"]?.arrayValue ?? []).compactMap { $0["code"]?.stringValue }.joined(separator: ", "))
            print("events: " + (result["events"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.joined(separator: ", "))
        }
    }
}
