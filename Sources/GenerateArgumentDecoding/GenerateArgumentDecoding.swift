import Foundation
import PackagePlugin

/// Writes, at build time, the `init(arguments:)` of every declaration in a target (commands, groups of
/// arguments, edits): scripts/generate-argument-decoding reads the declarations' stored properties, so an
/// argument is named once, by its property, and read without a `Decoder` (what a macro would write,
/// without swift-syntax, whose release build alone takes longer than the rest of listd's).
@main
struct GenerateArgumentDecoding: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let script = context.package.directoryURL.appending(path: "scripts/generate-argument-decoding")
        let output = context.pluginWorkDirectoryURL.appending(path: "\(target.name)+ArgumentDecoding.swift")
        let sources = target.sourceFiles(withSuffix: "swift").map(\.url)
        // The declarations' own module is imported by the others (the tests' with @testable).
        let imports =
            switch target.name {
            case "ListWire": ["DiffableCore"]
            case let name where name.hasSuffix("Tests"): ["DiffableCore", "@testable ListWire"]
            default: ["DiffableCore", "ListWire"]
            }
        return [
            .buildCommand(
                displayName: "Generating the argument decoding of \(target.name)",
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                arguments: ["python3", script.path, "--output", output.path] + imports.flatMap { ["--import", $0] } + sources.map(\.path),
                inputFiles: [script] + sources,
                outputFiles: [output]
            )
        ]
    }
}
