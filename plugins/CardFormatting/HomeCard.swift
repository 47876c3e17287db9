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
    /// - Throws: `CardError` when the payload is not one of the three kinds.
    public static func content(data: JSONValue, properties: JSONValue, state: JSONValue) throws -> [String: JSONValue] {
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
                let format = properties["dateFormat"]?.stringValue ?? "yyyy.MM.dd"
                let offset = properties["utcOffsetMinutes"]?.intValue ?? Int(properties["utcOffsetMinutes"]?.stringValue ?? "") ?? 0
                let date = formatDate(milliseconds: milliseconds, format: format, utcOffsetMinutes: offset)
                content["date"] = .string(date)
                details.append(date)
            }
            content["secondaryText"] = .string(details.joined(separator: " · "))
        }
        if state["selected"] == true { content["selected"] = true }
        return content
    }

    /// Formats milliseconds since 1970 with the tokens `yyyy`, `MM`, `dd`, `HH` and `mm` (anything else is
    /// copied), at a fixed offset from UTC.
    public static func formatDate(milliseconds: Int, format: String, utcOffsetMinutes: Int) -> String {
        let seconds = milliseconds.floorDivided(by: 1_000) + utcOffsetMinutes * 60
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
