import DiffableCore

/// What the `card` plugin shows for the seed's Home items: companies, experts and consults.
public enum HomeCard {
    public enum Kind: String, Sendable {
        case company, expert, consult
    }

    /// A card's kind: the registration's `kind` property, else guessed from the payload's fields.
    public static func kind(data: JSONValue, properties: JSONValue) -> Kind? {
        if let named = properties["kind"]?.stringValue, !named.isEmpty { return Kind(rawValue: named) }
        if data["companyName"] != nil { return .company }
        if data["expertInfo"] != nil { return .expert }
        if data["title"] != nil { return .consult }
        return nil
    }

    /// The card's content: `kind`, `text`, `secondaryText` and the kind's own fields.
    ///
    /// - Throws: `CardError` when the payload is not one of the three kinds, or a property is malformed
    ///   or out of range (`kind` not a string, `dateFormat`, `utcOffsetMinutes`), or the date cannot be
    ///   shown: listd then shows the cell's error, and the plugin serves the next cell.
    public static func content(data: JSONValue, properties: JSONValue, state: JSONValue) throws -> [String: JSONValue] {
        let format = try dateFormat(properties)
        let offset = try utcOffsetMinutes(properties)
        if let named = properties["kind"], named != .null, named.stringValue == nil { throw CardError("kind must be a string, not \(named)") }
        guard let kind = kind(data: data, properties: properties) else {
            throw CardError("not a company, expert or consult payload (and no kind property)")
        }
        var content: [String: JSONValue] = ["kind": .string(kind.rawValue)]
        switch kind {
        case .company:
            content["text"] = .string(data["companyName"]?.stringValue ?? "")
            content["secondaryText"] = .string(data["addrRoad"]?.stringValue ?? "")
            content["image"] = "🏥"
        case .expert:
            let info = data["expertInfo"] ?? .null
            content["text"] = .string(info["name"]?.stringValue ?? "")
            content["secondaryText"] = .string(info["expertTypeName"]?.stringValue ?? "")
            content["image"] = "🧑‍⚕️"
        case .consult:
            content["text"] = .string(data["title"]?.stringValue ?? "")
            var details: [String] = []
            if let reads = data["readCnt"]?.intValue {
                content["readCount"] = .int(reads)
                details.append("\(reads) reads")
            }
            if let milliseconds = data["regDate"]?.intValue {
                guard let date = formatDate(milliseconds: milliseconds, format: format, utcOffsetMinutes: offset) else {
                    throw CardError("regDate \(milliseconds) is outside the dates a card shows")
                }
                content["date"] = .string(date)
                details.append(date)
            }
            content["secondaryText"] = .string(details.joined(separator: " · "))
        }
        if state["selected"] == true { content["selected"] = true }
        return content
    }

    /// The largest offset from UTC `utcOffsetMinutes` may set: a day either way (real offsets are
    /// within -12 h…+14 h).
    public static let maximumUTCOffsetMinutes = 24 * 60

    /// The registration's `utcOffsetMinutes` (an integer, or a string holding one; default 0).
    ///
    /// - Throws: `CardError` for anything else, or an offset beyond `maximumUTCOffsetMinutes`.
    public static func utcOffsetMinutes(_ properties: JSONValue) throws(CardError) -> Int {
        let offset: Int
        switch properties["utcOffsetMinutes"] {
        case nil, .null?: return 0
        case .int(let value)?: offset = value
        case .double(let value)?:
            guard let exact = Int(exactly: value) else { throw CardError("utcOffsetMinutes \(value) is not a whole number of minutes") }
            offset = exact
        case .string(let text)?:
            guard let parsed = Int(text) else { throw CardError("utcOffsetMinutes \"\(text)\" is not an integer") }
            offset = parsed
        case let other?: throw CardError("utcOffsetMinutes must be an integer, not \(other)")
        }
        guard (-maximumUTCOffsetMinutes...maximumUTCOffsetMinutes).contains(offset) else {
            throw CardError("utcOffsetMinutes \(offset) is outside -\(maximumUTCOffsetMinutes)…\(maximumUTCOffsetMinutes)")
        }
        return offset
    }

    /// The registration's `dateFormat` (a string; default `yyyy.MM.dd`).
    ///
    /// - Throws: `CardError` when it is not a string, or longer than 256 bytes.
    public static func dateFormat(_ properties: JSONValue) throws(CardError) -> String {
        switch properties["dateFormat"] {
        case nil, .null?: return "yyyy.MM.dd"
        case .string(let format)? where format.utf8.count <= 256: return format
        case .string?: throw CardError("dateFormat is longer than 256 bytes")
        case let other?: throw CardError("dateFormat must be a string, not \(other)")
        }
    }

    /// Formats milliseconds since 1970 with the tokens `yyyy`, `MM`, `dd`, `HH` and `mm` (anything else is
    /// copied), at a fixed offset from UTC. Every step is checked: `nil` when the instant and offset
    /// together leave the range of `Int` seconds (never a trap, whatever the inputs).
    public static func formatDate(milliseconds: Int, format: String, utcOffsetMinutes: Int) -> String? {
        let (offsetSeconds, offsetOverflow) = utcOffsetMinutes.multipliedReportingOverflow(by: 60)
        guard !offsetOverflow else { return nil }
        let (seconds, overflow) = milliseconds.floorDivided(by: 1_000).addingReportingOverflow(offsetSeconds)
        guard !overflow else { return nil }
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        let fields: [(token: String, value: String)] = [
            ("yyyy", String(year)), ("MM", twoDigits(month)), ("dd", twoDigits(day)),
            ("HH", twoDigits(secondOfDay / 3_600)), ("mm", twoDigits(secondOfDay % 3_600 / 60)),
        ]
        var result = ""
        var rest = Substring(format)
        scanning: while !rest.isEmpty {
            for field in fields where rest.hasPrefix(field.token) {
                result += field.value
                rest = rest.dropFirst(field.token.count)
                continue scanning
            }
            result.append(rest.removeFirst())
        }
        return result
    }

    /// The proleptic Gregorian date of a day number (days since 1970-01-01), after Howard Hinnant's
    /// `civil_from_days`.
    /// `days` must be within ±2^62 (any `Int` seconds divided by 86,400 is).
    static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
}

/// A payload the card plugin cannot show.
public struct CardError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
