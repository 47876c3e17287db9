import DiffableCore
import ListWire

/// Another spelling of the same request: for a line that is a JSON object, the same JSON value in other
/// bytes (ASCII letters in strings and keys written as `\u00XX`, whitespace between tokens, the members in
/// another order), which listd must answer exactly as the line itself. A fast decoder that takes the
/// plain line and falls back on the escaped one is compared with its general path this way. The `id`
/// member is kept byte for byte (a reply echoes it as sent).
enum LineVariant {
    /// The variant `seed` picks, or nil when the line is no JSON object (it is sent as it is).
    static func of(_ line: [UInt8], seed: Int) -> [UInt8]? {
        guard case .object? = try? JSONParser.parse(line), let members = topLevelMembers(line) else { return nil }
        var rewritten: [[UInt8]] = []
        for (index, member) in members.enumerated() {
            if isIDMember(member) {
                rewritten.append(Array(member))
            } else {
                // Every other member escapes every letter, the next none but spaces everything, and so on.
                rewritten.append(respell(member, escaping: (seed + index) % 3 != 1, spacing: (seed + index) % 2 == 0))
            }
        }
        let rotation = members.isEmpty ? 0 : seed % members.count
        let ordered = rewritten[rotation...] + rewritten[..<rotation]
        var out: [UInt8] = Array("{ ".utf8)
        for (index, member) in ordered.enumerated() {
            if index > 0 { out += Array(" , ".utf8) }
            out += member
        }
        return out + Array(" }".utf8)
    }

    /// The raw `key: value` slices of a JSON object's top-level members (the line is valid JSON).
    static func topLevelMembers(_ line: [UInt8]) -> [ArraySlice<UInt8>]? {
        var members: [ArraySlice<UInt8>] = []
        var depth = 0
        var inString = false
        var index = 0
        var start = -1
        while index < line.count {
            let byte = line[index]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { inString = false }
            } else {
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                    if depth == 1 && start < 0 { start = index }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 1 && start >= 0 {
                        members.append(line[start..<index])
                        start = -1
                    }
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 1 {
                        members.append(line[start..<index])
                        start = -1
                    }
                default: break
                }
            }
            index += 1
        }
        return depth == 0 ? members : nil
    }

    /// Whether the member's key is `id` (however it is spelt).
    private static func isIDMember(_ member: ArraySlice<UInt8>) -> Bool {
        var end = member.startIndex + 1
        while member[end] != UInt8(ascii: "\"") { end += member[end] == UInt8(ascii: "\\") ? 2 : 1 }
        return (try? JSONParser.parse(Array(member[member.startIndex...end]))) == .string("id")
    }

    /// The member with ASCII letters in its strings escaped (`escaping`) and spaces after `:` and `,`
    /// (`spacing`); escapes already there are copied as they are.
    private static func respell(_ member: ArraySlice<UInt8>, escaping: Bool, spacing: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(member.count * 2)
        var inString = false
        var index = member.startIndex
        while index < member.endIndex {
            let byte = member[index]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    let length = member[index + 1] == UInt8(ascii: "u") ? 6 : 2
                    out += member[index..<index + length]
                    index += length
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    inString = false
                    out.append(byte)
                } else if escaping, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") {
                    // `\u00XX`, written a byte at a time (no array per letter).
                    for escaped in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex(byte >> 4), hex(byte & 0x0F)] {
                        out.append(escaped)
                    }
                } else {
                    out.append(byte)
                }
            } else {
                out.append(byte)
                if byte == UInt8(ascii: "\"") { inString = true }
                if spacing, byte == UInt8(ascii: ":") || byte == UInt8(ascii: ",") { out += [0x20, 0x09] }
            }
            index += 1
        }
        return out
    }

    private static func hex(_ digit: UInt8) -> UInt8 { digit < 10 ? 0x30 + digit : 0x57 + digit }
}
